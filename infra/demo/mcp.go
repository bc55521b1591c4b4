package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTransport gives the demo's token to every MCP request and keeps each answer with the API's
// others, for the search for secrets.
type mcpTransport struct {
	d  *demo
	mu sync.Mutex
}

func (t *mcpTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.d.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.d.answers.Write(raw)
	t.d.answers.WriteByte('\n')
	t.d.nAnswers++
	t.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return resp, nil
}

// callMCP lists the agent's tools and calls four of them over MCP, with the official Go SDK's
// client: the same executions as POST /tool-calls, answered as MCP content.
func (d *demo) callMCP(ctx context.Context) (string, error) {
	endpoint := d.endpoints["http"] + "/agents/" + d.agentID + "/mcp"
	client := mcp.NewClient(&mcp.Implementation{Name: "sinew-demo", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: &mcpTransport{d: d}}}, nil)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("tools/list: %w", err)
	}
	var names []string
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}
	d.detail("%s speaks MCP %s; tools/list: %s (ask_human, a function tool, is the client's own)",
		endpoint, cs.InitializeResult().ProtocolVersion, strings.Join(names, ", "))
	calls := []struct {
		name, typ string
		args      map[string]any
		want      string // in the answer's text
	}{
		{"echo", "integration", map[string]any{"note": "over MCP"}, `"note":"over MCP"`},
		{"weather", "api_call", map[string]any{"path": map[string]any{"city": "Porto"}}, `"temperature":21.5`},
		{"list_agents", "system", nil, d.agentID},
		{"make_thumbnail", "integration", map[string]any{"file": base64.StdEncoding.EncodeToString(d.clip),
			"args": []string{"-i", "clip.mp4", "-ss", "1", "-frames:v", "1", "-vf", "scale=96:-1", "thumb.png"}}, "image/png"},
	}
	for _, c := range calls {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args,
			Meta: mcp.Meta{"sinew/idempotency_key": "demo-mcp-" + c.name}})
		if err != nil {
			return "", fmt.Errorf("tools/call %s: %w", c.name, err)
		}
		result, err := mcpSummary(res, c.want)
		if err != nil {
			return "", fmt.Errorf("tools/call %s: %w", c.name, err)
		}
		if id, _ := res.Meta["sinew/execution_id"].(string); id != "" {
			d.expressCalls++ // a server-side call over MCP runs on tool_call_express
		}
		d.rows = append(d.rows, row{c.name + " (MCP)", c.typ, "MCP tools/call → tool_call execution → MCP content", result, time.Since(start)})
	}
	return fmt.Sprintf("MCP tools/list gave %d tools; %d tools/call answered", len(names), len(calls)), nil
}

// mcpSummary checks a tools/call answer and says what it holds.
func mcpSummary(res *mcp.CallToolResult, want string) (string, error) {
	var text string
	var parts []string
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			text += x.Text
			if res.StructuredContent == nil {
				parts = append(parts, "text "+summarize(x.Text, 70))
			}
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("image %s of %d bytes", x.MIMEType, len(x.Data)))
		}
	}
	if sc, ok := res.StructuredContent.(map[string]any); ok {
		shown := any(sc)
		if js, isAPICall := sc["json"]; isAPICall {
			shown = js // an api_call's decoded body says more than its headers
		}
		parts = append([]string{"structured " + summarize(shown, 80)}, parts...)
	}
	all := strings.Join(parts, " + ")
	if res.IsError || !strings.Contains(all, want) && !strings.Contains(text, want) {
		return "", fmt.Errorf("isError %v, want %q in: %s", res.IsError, want, all)
	}
	return all, nil
}
