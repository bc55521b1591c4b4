package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/integrations/all"
	"sinew/internal/jsonv"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/mcpserver"
	"sinew/internal/netguard"
	"sinew/internal/system"
	"sinew/internal/tool"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func connectT(t *testing.T, dev, path string, headers map[string]string) *mcp.ClientSession {
	t.Helper()
	e := env(t)
	cs, err := e.connect(ctxT(t), dev, path, headers)
	if err != nil {
		t.Fatalf("connect to %s as %s: %v", path, dev, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// structured is a result's structured content as a JSON object.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content is not an object: %s", b)
	}
	return m
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestToolsListIsWhatTheModelSees: the listed tools are the agent's but its function tool, each
// with the name, description and input schema toolfmt gives a model in a chat.
func TestToolsListIsWhatTheModelSees(t *testing.T) {
	e := env(t)
	cs := connectT(t, "dev-a", "/agents/"+e.agentID+"/mcp", nil)
	t.Logf("negotiated MCP revision %s", cs.InitializeResult().ProtocolVersion)
	list, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		got[tl.Name] = tl
	}

	// What a chat would show the model, formatted here from the stored tools.
	stored, err := e.api("dev-a", "GET", "/agents/"+e.agentID+"/tools?limit=100", nil, 200)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := e.api("dev-a", "GET", "/agents/"+e.agentID, nil, 200)
	if err != nil {
		t.Fatal(err)
	}
	var tools []*tool.Tool
	raw, _ := json.Marshal(stored["items"])
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	reg, err := all.New(netguard.New())
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := agent["metadata"].(map[string]any)
	want, err := (&toolfmt.Formatter{Integrations: reg, System: system.Schema}).FormatAll(tools, agentloop.IntegrationArgs(meta, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 7 {
		t.Fatalf("the agent has %d tools, want 7", len(want))
	}
	for _, f := range want {
		tl, ok := got[f.Function.Name]
		if f.Tool.Type == tool.TypeFunction {
			if ok {
				t.Errorf("function tool %s is listed: it is the client's own", f.Function.Name)
			}
			continue
		}
		if !ok {
			t.Errorf("tool %s (%s) is not listed; listed: %v", f.Function.Name, f.Tool.Type, keys(got))
			continue
		}
		if tl.Description != f.Function.Description {
			t.Errorf("%s: description %q, want %q", tl.Name, tl.Description, f.Function.Description)
		}
		if a, b := jsonv.EncodeString(tl.InputSchema), jsonv.EncodeString(f.Function.Parameters); !jsonEqual(a, b) {
			t.Errorf("%s: input schema\n%s\nwant\n%s", tl.Name, a, b)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d tools listed, want 6: %v", len(got), keys(got))
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func jsonEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// TestToolsCall calls a tool of each type through the Go SDK's client, and the errors.
func TestToolsCall(t *testing.T) {
	e := env(t)
	cs := connectT(t, "dev-a", "/agents/"+e.agentID+"/mcp", nil)
	call := func(name string, args any) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: name, Arguments: args})
	}
	t.Run("integration", func(t *testing.T) {
		res, err := call("echo", map[string]any{"greeting": "hi"})
		if err != nil || res.IsError {
			t.Fatalf("echo: %v %s", err, text(res))
		}
		out := structured(t, res)
		if out["greeting"] != "hi" || out["from_definition"] != true || out["source"] != "agent" {
			t.Errorf("echo's output %v: want the call, the definition and the agent's metadata merged", out)
		}
		id, _ := res.Meta[mcpserver.MetaExecutionID].(string)
		x, err := e.api("dev-a", "GET", "/executions/"+id, nil, 200)
		if err != nil {
			t.Fatalf("the call's execution %q: %v", id, err)
		}
		if x["status"] != "succeeded" || x["agent_id"] != e.agentID {
			t.Errorf("GET /executions/%s = %v", id, x)
		}
		list, err := e.api("dev-a", "GET", "/executions?limit=100", nil, 200)
		if err != nil || !strings.Contains(jsonv.EncodeString(list), id) {
			t.Errorf("GET /executions does not list %s: %v", id, err)
		}
	})
	t.Run("api_call with setup", func(t *testing.T) {
		before := e.goodKeys.Load()
		res, err := call("weather", map[string]any{"path": map[string]any{"city": "Lisbon"}})
		if err != nil || res.IsError {
			t.Fatalf("weather: %v %s", err, text(res))
		}
		js, _ := structured(t, res)["json"].(map[string]any)
		if js["city"] != "Lisbon" || e.goodKeys.Load() != before+1 {
			t.Errorf("weather: %s; the service saw the setup key %d times", text(res), e.goodKeys.Load()-before)
		}
	})
	t.Run("system", func(t *testing.T) {
		res, err := call("list_agents", nil)
		if err != nil || res.IsError {
			t.Fatalf("list_agents: %v %s", err, text(res))
		}
		if !strings.Contains(text(res), e.agentID) {
			t.Errorf("list_agents does not name the agent: %s", text(res))
		}
	})
	t.Run("tool error", func(t *testing.T) {
		res, err := call("get_agent", map[string]any{"agent_id": uuid.NewString()})
		if err != nil {
			t.Fatalf("a failing tool is a protocol error: %v", err)
		}
		errObj, _ := structured(t, res)["error"].(map[string]any)
		if !res.IsError || errObj["type"] != "Sinew.NotFound" || !strings.Contains(text(res), "Sinew.NotFound") {
			t.Errorf("get_agent of an unknown agent: isError %v, %s", res.IsError, text(res))
		}
	})
	for _, c := range []struct {
		name, tool string
		args       any
		want       string
	}{
		{"missing argument", "get_agent", map[string]any{}, "arguments.agent_id is required"},
		{"wrong type", "list_agents", map[string]any{"limit": "lots"}, "arguments.limit must be of type integer"},
		{"api_call part", "weather", map[string]any{"path": "Lisbon"}, "arguments.path must be of type object"},
		{"unknown tool", "nope", nil, `has no tool "nope": its tools here are`},
		{"function tool", "ask_human", map[string]any{"q": "?"}, "function tools are the client's own"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := call(c.tool, c.args)
			var je *jsonrpc.Error
			if !asWire(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, c.want) {
				t.Errorf("%s: got %v, want invalid params saying %q", c.tool, err, c.want)
			}
		})
	}
}

func asWire(err error, target **jsonrpc.Error) bool { return errors.As(err, target) }

// TestSessionRoute: on a session's route, the session's metadata overrides the agent's.
func TestSessionRoute(t *testing.T) {
	e := env(t)
	cs := connectT(t, "dev-a", "/sessions/"+e.sessionID+"/mcp", nil)
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %s", err, text(res))
	}
	if out := structured(t, res); out["source"] != "session" {
		t.Errorf("echo's source is %v, want the session's override", out["source"])
	}
}

// TestOtherDeveloperRefused: developer B reaches neither A's agent nor A's session.
func TestOtherDeveloperRefused(t *testing.T) {
	e := env(t)
	for _, path := range []string{"/agents/" + e.agentID + "/mcp", "/sessions/" + e.sessionID + "/mcp"} {
		cs, err := e.connect(ctxT(t), "dev-b", path, nil)
		if err == nil {
			_ = cs.Close()
			t.Errorf("developer B connected to %s", path)
			continue
		}
		if !strings.Contains(err.Error(), "404") && !strings.Contains(err.Error(), "Not Found") {
			t.Errorf("developer B on %s: %v, want a 404", path, err)
		}
	}
	// The raw answer: a 404 in sinew's error body, naming nothing of A's.
	tok, err := e.token("dev-b")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", e.base+"/agents/"+e.agentID+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || !strings.Contains(string(raw), "Sinew.NotFound") || strings.Contains(string(raw), "mcp-agent") {
		t.Errorf("developer B's tools/list: %d %s", resp.StatusCode, raw)
	}
}

// TestIdempotency: the same key twice is one execution and one side effect, from _meta or from the
// header; no key, a new call each time.
func TestIdempotency(t *testing.T) {
	e := env(t)
	path := "/agents/" + e.agentID + "/mcp"
	twice := func(cs *mcp.ClientSession, meta mcp.Meta) (ids [2]string, charged int64) {
		before := e.charges.Load()
		for i := range 2 {
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "charge", Meta: meta})
			if err != nil || res.IsError {
				t.Fatalf("charge: %v %s", err, text(res))
			}
			ids[i], _ = res.Meta[mcpserver.MetaExecutionID].(string)
		}
		return ids, e.charges.Load() - before
	}
	cs := connectT(t, "dev-a", path, nil)
	key := "charge-" + uuid.NewString()
	if ids, n := twice(cs, mcp.Meta{mcpserver.MetaIdempotencyKey: key}); ids[0] != ids[1] || n != 1 {
		t.Errorf("_meta key twice: executions %v, %d charges; want one of each", ids, n)
	}
	hdr := connectT(t, "dev-a", path, map[string]string{"Idempotency-Key": "hdr-" + uuid.NewString()})
	if ids, n := twice(hdr, nil); ids[0] != ids[1] || n != 1 {
		t.Errorf("header key twice: executions %v, %d charges; want one of each", ids, n)
	}
	if ids, n := twice(cs, nil); ids[0] == ids[1] || n != 2 {
		t.Errorf("no key twice: executions %v, %d charges; want two of each", ids, n)
	}
	_, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "charge", Meta: mcp.Meta{mcpserver.MetaIdempotencyKey: strings.Repeat("k", 300)}})
	var je *jsonrpc.Error
	if !asWire(err, &je) || !strings.Contains(je.Message, "at most 255") {
		t.Errorf("an over-long key: %v", err)
	}
}

// TestOutlivesTheWait: a call past the wait answers its execution id, goes on running, and its
// result is at GET /executions/{id}.
func TestOutlivesTheWait(t *testing.T) {
	e := env(t)
	cs := connectT(t, "dev-a", "/agents/"+e.agentID+"/mcp", nil)
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "slow"})
	if err != nil || res.IsError {
		t.Fatalf("slow: %v %s", err, text(res))
	}
	out := structured(t, res)
	id, _ := out["execution_id"].(string)
	if out["status"] != "running" || id == "" || !strings.Contains(text(res), "GET /executions/"+id) {
		t.Fatalf("slow past the wait: %s %v", text(res), out)
	}
	e.releaseSlow()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		x, err := e.api("dev-a", "GET", "/executions/"+id, nil, 200)
		if err != nil {
			t.Fatal(err)
		}
		if x["status"] == "succeeded" {
			if !strings.Contains(jsonv.EncodeString(x["output"]), "done") {
				t.Errorf("slow's result: %v", x["output"])
			}
			return
		}
		if x["status"] != "running" || time.Now().After(deadline) {
			t.Fatalf("slow's execution: %v", x)
		}
	}
}

// TestNoSetupInAnswersOrLog: the setup values reached the service, and no MCP answer nor local
// mode's log holds one. Run after the calls (Go runs a file's tests in order).
func TestNoSetupInAnswersOrLog(t *testing.T) {
	e := env(t)
	// Every test above has run its calls; make sure there is something to search.
	cs := connectT(t, "dev-a", "/agents/"+e.agentID+"/mcp", nil)
	if _, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"path": map[string]any{"city": "Porto"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	if e.goodKeys.Load() == 0 {
		t.Fatal("the weather service never saw its key: the search below would prove nothing")
	}
	hay := map[string]string{"MCP answers": e.answers.String(), "local mode's log": e.proc.Stderr.String() + e.proc.Stdout.String()}
	for where, s := range hay {
		if len(s) < 100 {
			t.Errorf("%s: only %d bytes to search", where, len(s))
		}
		for _, v := range e.secrets {
			if strings.Contains(s, v) {
				t.Errorf("a setup value is in the %s", where)
			}
		}
	}
	if testing.Verbose() {
		fmt.Printf("searched %d bytes of MCP answers and %d of log\n", len(hay["MCP answers"]), len(hay["local mode's log"]))
	}
}

// TestAuth: the MCP routes need the bearer token; the protected-resource metadata does not, and
// names the resource the client asked about.
func TestAuth(t *testing.T) {
	e := env(t)
	resp, err := http.Post(e.base+"/agents/"+e.agentID+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("tools/list without a token: %d %v", resp.StatusCode, resp.Header)
	}
	for path, resource := range map[string]string{
		mcpserver.MetadataPath: e.base,
		mcpserver.MetadataPath + "/agents/" + e.agentID + "/mcp": e.base + "/agents/" + e.agentID + "/mcp",
	} {
		resp, err := http.Get(e.base + path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || m["resource"] != resource || fmt.Sprint(m["bearer_methods_supported"]) != "[header]" {
			t.Errorf("GET %s: %d %v %v", path, resp.StatusCode, m, err)
		}
	}
}
