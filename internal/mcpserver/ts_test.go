package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"sinew/internal/mcpserver"
)

// tsOutput is what infra/scripts/mcp-client.mjs prints.
type tsOutput struct {
	ConnectError    string `json:"connectError"`
	ProtocolVersion string `json:"protocolVersion"`
	Tools           []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
	} `json:"tools"`
	Calls []struct {
		Result *struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent map[string]any `json:"structuredContent"`
			IsError           bool           `json:"isError"`
			Meta              map[string]any `json:"_meta"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"calls"`
}

// runTS runs the official TypeScript SDK's client (Node 20) against path as dev.
func runTS(t *testing.T, dev, path string, calls []map[string]any) (tsOutput, string) {
	t.Helper()
	e := env(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH: install Node 20 (apt-get install nodejs, or make deps)")
	}
	root, _ := filepath.Abs("../..")
	if _, err := os.Stat(filepath.Join(root, "infra/node_modules/@modelcontextprotocol/sdk/package.json")); err != nil {
		t.Fatal("the TypeScript MCP SDK is not installed: run make deps (npm ci in infra/)")
	}
	tok, err := e.token(dev)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(calls)
	cmd := exec.Command(node, filepath.Join(root, "infra/scripts/mcp-client.mjs"), e.base+path, tok, string(spec))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	var out tsOutput
	if jerr := json.Unmarshal(raw, &out); jerr != nil {
		t.Fatalf("the TypeScript client: %v; stdout %s; stderr %s", err, raw, stderr.String())
	}
	return out, string(raw)
}

// TestTypeScriptClient lists and calls the agent's tools with the TypeScript SDK's client: a tool
// of each type, a tool error, a bad argument, an unknown tool, one key twice (one side effect),
// and developer B refused.
func TestTypeScriptClient(t *testing.T) {
	e := env(t)
	key := "ts-" + uuid.NewString()
	charge := map[string]any{"name": "charge", "_meta": map[string]any{mcpserver.MetaIdempotencyKey: key}}
	before := e.charges.Load()
	out, raw := runTS(t, "dev-a", "/agents/"+e.agentID+"/mcp", []map[string]any{
		{"name": "echo", "arguments": map[string]any{"greeting": "from ts"}},
		{"name": "weather", "arguments": map[string]any{"path": map[string]any{"city": "Faro"}}},
		{"name": "list_agents"},
		{"name": "get_agent", "arguments": map[string]any{"agent_id": uuid.NewString()}},
		{"name": "get_agent", "arguments": map[string]any{}},
		{"name": "nope"},
		charge, charge,
	})
	if out.ConnectError != "" {
		t.Fatalf("connect: %s", out.ConnectError)
	}
	t.Logf("the TypeScript SDK negotiated MCP revision %q", out.ProtocolVersion)
	var names []string
	for _, tl := range out.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema["type"] != "object" {
			t.Errorf("%s: input schema %v", tl.Name, tl.InputSchema)
		}
	}
	if got := strings.Join(names, ","); len(names) != 6 || strings.Contains(got, "ask_human") {
		t.Errorf("tools %s: want the 6 that are not function tools", got)
	}
	if len(out.Calls) != 8 {
		t.Fatalf("%d call answers, want 8: %s", len(out.Calls), raw)
	}
	ok := func(i int) map[string]any {
		c := out.Calls[i]
		if c.Result == nil || c.Result.IsError {
			t.Errorf("call %d: %s", i, raw)
			return map[string]any{}
		}
		return c.Result.StructuredContent
	}
	if s := ok(0); s["greeting"] != "from ts" || s["source"] != "agent" {
		t.Errorf("echo: %v", s)
	}
	if js, _ := ok(1)["json"].(map[string]any); js["city"] != "Faro" {
		t.Errorf("weather: %v", ok(1))
	}
	if c := out.Calls[2]; c.Result == nil || !strings.Contains(c.Result.Content[0].Text, e.agentID) {
		t.Errorf("list_agents: %s", raw)
	}
	if c := out.Calls[3]; c.Result == nil || !c.Result.IsError || !strings.Contains(c.Result.Content[0].Text, "Sinew.NotFound") {
		t.Errorf("get_agent of an unknown agent: want a tool error: %s", raw)
	}
	for i, want := range map[int]string{4: "arguments.agent_id is required", 5: `has no tool "nope"`} {
		if c := out.Calls[i]; c.Error == nil || c.Error.Code != -32602 || !strings.Contains(c.Error.Message, want) {
			t.Errorf("call %d: want invalid params saying %q: %s", i, want, raw)
		}
	}
	if a, b := ok(6)["json"].(map[string]any), ok(7)["json"].(map[string]any); a["charge"] == nil || a["charge"] != b["charge"] || out.Calls[6].Result.Meta[mcpserver.MetaExecutionID] != out.Calls[7].Result.Meta[mcpserver.MetaExecutionID] {
		t.Errorf("one key twice: %v and %v, want the same execution", a, b)
	}
	if n := e.charges.Load() - before; n != 1 {
		t.Errorf("one key twice charged %d times, want 1", n)
	}
	for _, v := range e.secrets {
		if strings.Contains(raw, v) {
			t.Errorf("a setup value is in the TypeScript client's answers")
		}
	}

	other, raw := runTS(t, "dev-b", "/agents/"+e.agentID+"/mcp", nil)
	if other.ConnectError == "" || !strings.Contains(other.ConnectError, "Sinew.NotFound") {
		t.Errorf("developer B on A's agent: %s", raw)
	}
}
