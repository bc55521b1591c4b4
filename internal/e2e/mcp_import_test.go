package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/testenv/mcpserver"
)

// TestMCPImportRefreshAndCall goes through local mode's public API: import a loopback MCP
// server's tools (its bearer token given as a sealed value), call one through POST /tool-calls,
// refresh after the server adds, changes and removes tools, then a clash and a server that is
// down; the token shows nowhere but in the requests the server got.
func TestMCPImportRefreshAndCall(t *testing.T) {
	token := newSecret("mcp-token")
	srv := mcpserver.Start(t, mcpserver.WithToken(token))
	// A chat calls an imported tool: the model sees it by its remote schema.
	p := startScripted(t, map[string]any{"turns": []any{
		map[string]any{"expect": map[string]any{"last_role": "user", "tools": []string{"m_add"}},
			"reply": map[string]any{"content": "", "tool_calls": []any{scriptCall("a1", "m_add", map[string]any{"a": 4, "b": 5})}}},
		map[string]any{"expect": map[string]any{"last_role": "tool", "tool_results": map[string]any{"a1": "4+5=9"}},
			"reply": map[string]any{"content": "nine"}},
	}})
	dev := p.apiFor(t, "dev-mcpimport")
	agent := dev.must(t, "POST", "/agents", map[string]any{"name": "mcp"}, 201)["id"].(string)
	path := "/agents/" + agent + "/tools/mcp"
	body := map[string]any{"prefix": "m_", "setup": map[string]any{"transport": "http", "http_url": srv.StreamableURL,
		"http_headers": map[string]any{"Authorization": "Bearer " + token}}}

	first := dev.must(t, "POST", path, body, 201)
	wantNames(t, "first import added", first["added"], "m_add", "m_echo", "m_fail", "m_image", "m_slow")

	rec := dev.toolCall(t, map[string]any{"agent_id": agent, "tool": "m_add", "arguments": map[string]any{"a": 2, "b": 3}})
	if rec["status"] != "succeeded" || !strings.Contains(jsonOf(t, rec["output"]), "2+3=5") {
		t.Fatalf("calling m_add: %v", rec)
	}

	// The server changes: one tool added, one described anew, one removed.
	srv.SDK.AddTool(&sdk.Tool{Name: "mul", Description: "multiplies", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	srv.SDK.AddTool(&sdk.Tool{Name: "echo", Description: "echoes, now documented", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	srv.SDK.RemoveTools("slow")
	refresh := dev.must(t, "POST", path, body, 201)
	wantNames(t, "refresh added", refresh["added"], "m_mul")
	wantNames(t, "refresh changed", refresh["changed"], "m_echo")
	wantNames(t, "refresh removed", refresh["removed"], "m_slow")
	if refresh["unchanged"] != float64(3) {
		t.Errorf("refresh unchanged = %v, want 3", refresh["unchanged"])
	}
	again := dev.must(t, "POST", path, body, 200)
	if again["unchanged"] != float64(5) || len(again["added"].([]any))+len(again["changed"].([]any))+len(again["removed"].([]any)) != 0 {
		t.Errorf("a second refresh: %v", again)
	}

	// A tool the import did not make holds a name: 409 naming it, nothing changed.
	dev.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "n_add", "type": "function", "function": map[string]any{}}, 201)
	clashBody := map[string]any{"prefix": "n_", "setup": body["setup"]}
	code, clash, err := dev.do(t.Context(), "POST", path, clashBody)
	if err != nil || code != 409 || !strings.Contains(jsonOf(t, clash), "n_add") {
		t.Fatalf("a clash: %d %v (%v), want a 409 naming n_add", code, clash, err)
	}
	listed := dev.must(t, "GET", "/agents/"+agent+"/tools?limit=100", nil, 200)
	session := dev.must(t, "POST", "/sessions", map[string]any{"agent": agent}, 201)["id"].(string)
	if ans := dev.must(t, "POST", "/sessions/"+session+"/chat", map[string]any{"auto_run_tools": true,
		"messages": []any{map[string]any{"role": "user", "content": "add 4 and 5"}}}, 200); !strings.Contains(jsonOf(t, ans), "nine") {
		t.Fatalf("a chat calling an imported tool: %v", ans)
	}
	history := dev.must(t, "GET", "/sessions/"+session+"/history", nil, 200)
	if n := len(listed["items"].([]any)); n != 6 {
		t.Fatalf("the agent has %d tools after the clash, want 6", n)
	}

	// A server that is down: not a 500, and the message names it.
	down := map[string]any{"prefix": "d_", "setup": map[string]any{"transport": "http", "http_url": "http://127.0.0.1:1/mcp",
		"http_headers": map[string]any{"Authorization": "Bearer " + token}}}
	code, downAns, err := dev.do(t.Context(), "POST", path, down)
	if err != nil || code < 400 || code == 500 || !strings.Contains(jsonOf(t, downAns), "127.0.0.1:1") {
		t.Fatalf("a server that is down: %d %v (%v)", code, downAns, err)
	}

	// A task's import, its token a developer secret's reference, opened only by the executor.
	task := dev.must(t, "POST", "/agents/"+agent+"/tasks", map[string]any{"name": "t"}, 201)["id"].(string)
	dev.must(t, "PUT", "/secrets/MCP_TOKEN", map[string]any{"value": "Bearer " + token}, 201)
	taskBody := map[string]any{"prefix": "k_", "setup": map[string]any{"transport": "http", "http_url": srv.StreamableURL,
		"http_headers": map[string]any{"Authorization": map[string]any{"secret": "MCP_TOKEN"}}}}
	taskAns := dev.must(t, "POST", "/tasks/"+task+"/tools/mcp", taskBody, 201)
	wantNames(t, "the task's import added", taskAns["added"], "k_add", "k_echo", "k_fail", "k_image", "k_mul")
	// Without the token the server refuses the listing: a clear error, nothing made.
	noAuth := map[string]any{"prefix": "z_", "setup": map[string]any{"transport": "http", "http_url": srv.StreamableURL}}
	code, refused, err := dev.do(t.Context(), "POST", path, noAuth)
	if err != nil || code < 400 || code == 500 || !strings.Contains(jsonOf(t, refused), "listing the tools") {
		t.Fatalf("a listing the server refuses: %d %v (%v)", code, refused, err)
	}

	for what, v := range map[string]any{"the first import": first, "the task's import": taskAns, "the refusal": refused, "the refresh": refresh, "the clash": clash, "the down server's error": downAns,
		"the tool listing": listed, "the chat's history": history, "the call's record": rec} {
		if strings.Contains(jsonOf(t, v), token) {
			t.Errorf("%s shows the token", what)
		}
	}
	if strings.Contains(p.Stderr.String(), token) {
		t.Errorf("local mode's log shows the token: %s", p.logLines(token))
	}
}

func wantNames(t *testing.T, what string, got any, want ...string) {
	t.Helper()
	var names []string
	for _, n := range got.([]any) {
		names = append(names, n.(string))
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("%s %v, want %v", what, names, want)
	}
}
