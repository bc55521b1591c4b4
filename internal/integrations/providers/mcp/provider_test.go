package mcp_test

import (
	"context"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/integrations/providers/mcp"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
	"sinew/internal/testenv/mcpserver"
)

// TestThroughRegistry runs both methods as the integration executor does, with Julep-shaped JSON:
// the default method is list_tools, and a Julep setup with its empty stdio defaults is accepted.
func TestThroughRegistry(t *testing.T) {
	srv := mcpserver.Start(t)
	trip, _ := netguardtest.Tripwire(t)
	vars := map[string]string{}
	r := integrations.New(netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.1/32")), trip), integrations.WithGetenv(func(k string) string { return vars[k] }))
	if err := r.Register(mcp.Provider); err != nil {
		t.Fatal(err)
	}
	setup := map[string]any{"transport": "sse", "http_url": srv.SSEURL, "http_headers": map[string]any{}, "args": []any{}, "env": map[string]any{}}
	out, err := r.Execute(context.Background(), "mcp", "", setup, map[string]any{"dummy": "dummy"})
	if err != nil {
		t.Fatalf("list_tools: %v", err)
	}
	tools, _ := out.(map[string]any)["tools"].([]any)
	if len(tools) != 5 {
		t.Fatalf("list_tools gave %v", out)
	}
	setup["transport"] = "http"
	setup["http_url"] = srv.StreamableURL
	out, err = r.Execute(context.Background(), "mcp", "call_tool", setup, map[string]any{"tool_name": mcpserver.ToolAdd, "arguments": map[string]any{"a": int64(40), "b": int64(2)}})
	if err != nil {
		t.Fatalf("call_tool: %v", err)
	}
	m := out.(map[string]any)
	if m["text"] != "40+2=42" || m["is_error"] != false {
		t.Fatalf("call_tool gave %v", out)
	}
	if s, _ := m["structured"].(map[string]any); s["sum"] != int64(42) {
		t.Fatalf("structured %v", m["structured"])
	}

	// Without http_url, SINEW_MCP_BASE_URL names the server.
	vars[integrations.EnvName("mcp", "BASE_URL")] = srv.StreamableURL
	if _, err := r.Execute(context.Background(), "mcp", "call_tool", map[string]any{"transport": "http"}, map[string]any{"tool_name": mcpserver.ToolFail}); err != nil {
		t.Fatalf("call_tool on the base URL: %v", err)
	}

	_, err = r.Execute(context.Background(), "mcp", "call_tool", map[string]any{"transport": "stdio", "command": "sh"}, map[string]any{"tool_name": "x"})
	if !fault.Is(err, fault.InvalidInput) || !strings.Contains(fault.FieldOf(err)+fault.Message(err), "transport") {
		t.Fatalf("stdio: err = %v (field %q)", err, fault.FieldOf(err))
	}
}
