package mcpserver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCall is one integration call (dummy echo) to its result in local mode, over MCP (the Go
// SDK's client: one tools/call, the server waits), by POST /tool-calls answered in the request
// (tool_call_express, 200 with the result), and by POST /tool-calls with Prefer: respond-async
// followed by GET /executions/{id} until it has ended (tool_call; the client polls as the MCP
// server did before).
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
	b.Run("tool-calls-sync", func(b *testing.B) {
		body := map[string]any{"agent_id": e.agentID, "tool": "echo", "arguments": args}
		for b.Loop() {
			if x, err := e.api("dev-a", "POST", "/tool-calls", body, 200); err != nil || x["status"] != "succeeded" {
				b.Fatalf("POST /tool-calls = %v %v", x, err)
			}
		}
	})
	b.Run("tool-calls", func(b *testing.B) {
		body := map[string]any{"agent_id": e.agentID, "tool": "echo", "arguments": args}
		for b.Loop() {
			if err := toolCallToResult(e, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// toolCallToResult is POST /tool-calls, then GET /executions/{id} until the call has ended.
func toolCallToResult(e *testEnv, body map[string]any) error {
	st, err := e.api("dev-a", "POST", "/tool-calls", body, 202, "Prefer", "respond-async")
	if err != nil {
		return err
	}
	id, _ := st["execution_id"].(string)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		x, err := e.api("dev-a", "GET", "/executions/"+id, nil, 200)
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
