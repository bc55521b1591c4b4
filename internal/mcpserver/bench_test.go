package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCall is one integration call (dummy echo) to its result in local mode, over MCP (the Go
// SDK's client: one tools/call, the server waits) beside POST /tool-calls followed by GET
// /executions/{id} until it has ended (the client waits, polling as the MCP server does).
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -run '^$' -bench Call -benchtime 50x ./internal/mcpserver/
func BenchmarkCall(b *testing.B) {
	e := env(b)
	ctx := context.Background()
	args := map[string]any{"greeting": "bench"}
	b.Run("mcp", func(b *testing.B) {
		cs, err := e.connect(ctx, "dev-a", "/agents/"+e.agentID+"/mcp", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
			if err != nil || res.IsError {
				b.Fatalf("echo: %v %v", err, res)
			}
		}
	})
	b.Run("tool-calls", func(b *testing.B) {
		tok, err := e.token("dev-a")
		if err != nil {
			b.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"agent_id": e.agentID, "tool": "echo", "arguments": args})
		for b.Loop() {
			if err := toolCallToResult(e.base, tok, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func toolCallToResult(base, tok string, body []byte) error {
	do := func(method, path string, body []byte) (map[string]any, error) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("%s %s: %d %v", method, path, resp.StatusCode, err)
		}
		return out, nil
	}
	st, err := do("POST", "/tool-calls", body)
	if err != nil {
		return err
	}
	id, _ := st["execution_id"].(string)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		x, err := do("GET", "/executions/"+id, nil)
		if err != nil {
			return err
		}
		switch x["status"] {
		case "succeeded":
			return nil
		case "running":
		default:
			return fmt.Errorf("execution %s: %v", id, x)
		}
		time.Sleep(delay)
	}
}
