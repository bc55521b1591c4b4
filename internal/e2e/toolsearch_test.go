package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/llm"
)

// manyToolsDocument is an OpenAPI document of n operations: the realistic tools of
// internal/toolsearch's test data, then plain ones up to n, each a POST to base.
func manyToolsDocument(t *testing.T, n int) map[string]any {
	t.Helper()
	var fns []llm.Function
	raw, err := os.ReadFile("../toolsearch/testdata/tools.json")
	if err == nil {
		err = json.Unmarshal(raw, &fns)
	}
	if err != nil {
		t.Fatal(err)
	}
	for i := len(fns); i < n; i++ {
		fns = append(fns, llm.Function{Name: fmt.Sprintf("batch_job_%03d", i), Description: fmt.Sprintf("Run nightly batch job number %d", i),
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"run_date": map[string]any{"type": "string"}}}})
	}
	paths := map[string]any{}
	for _, f := range fns[:n] {
		paths["/ops/"+f.Name] = map[string]any{"post": map[string]any{"operationId": f.Name, "description": f.Description,
			"requestBody": map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": f.Parameters}}}}}
	}
	return map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": "many", "version": "1"}, "paths": paths}
}

// TestToolSearchChatAndMCP: an agent with 500 tools. A chat turn shows the scripted model at most
// SINEW_TOOL_SEARCH_THRESHOLD (30) tools: sinew_search_tools and those matching the user's
// message; the model searches, is then shown what the search found, and calls it; the call runs.
// Over MCP, tools/list answers 30 tools, the search tool first, and a tool a search finds, not
// listed, is called by name.
func TestToolSearchChatAndMCP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path, "got": string(body), "translated": "Hallo"})
	}))
	t.Cleanup(srv.Close)
	limit := 30
	script := searchScript(limit)
	p := startScripted(t, script)
	dev := p.apiFor(t, "dev-toolsearch")
	agent := dev.must(t, "POST", "/agents", map[string]any{"name": "many"}, 201)["id"].(string)
	made := dev.must(t, "POST", "/agents/"+agent+"/tools/openapi", map[string]any{"document": manyToolsDocument(t, 500), "base_url": srv.URL, "prefix": "t_"}, 201)
	if n := len(made["tools"].([]any)); n != 500 {
		t.Fatalf("the import made %d tools, want 500", n)
	}
	session := dev.must(t, "POST", "/sessions", map[string]any{"agent": agent}, 201)["id"].(string)
	ans := dev.must(t, "POST", "/sessions/"+session+"/chat", map[string]any{"auto_run_tools": true,
		"messages": []any{map[string]any{"role": "user", "content": "Will it rain in Tokyo this weekend?"}}}, 200)
	if !strings.Contains(jsonOf(t, ans), "hello is Hallo") {
		t.Fatalf("the chat's answer: %v", ans)
	}

	cs := dev.mcpSession(t, "/agents/"+agent+"/mcp")
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != limit || list.Tools[0].Name != "sinew_search_tools" {
		t.Fatalf("tools/list answered %d tools, first %q; want %d, sinew_search_tools first", len(list.Tools), list.Tools[0].Name, limit)
	}
	found, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sinew_search_tools", Arguments: map[string]any{"query": "convert euros to dollars", "limit": 3}})
	if err != nil || found.IsError || !strings.Contains(jsonOf(t, found.StructuredContent), "t_finance_currency_convert") {
		t.Fatalf("searching over MCP: %v %v", found, err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "t_finance_currency_convert", Arguments: map[string]any{"json": map[string]any{"amount": "5", "from_currency": "EUR", "to_currency": "USD"}}})
	if err != nil || res.IsError || !strings.Contains(jsonOf(t, res.StructuredContent), "/ops/finance_currency_convert") {
		t.Fatalf("calling a tool a search found: %v %v", res, err)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sinew_search_tools", Arguments: map[string]any{"limit": 3}}); err != nil {
		t.Fatalf("a search without a query: %v", err)
	}
}

// searchScript is the scripted model of a turn with an agent of many tools: each call is shown at
// most limit tools; the model searches, is shown what the search found, calls it, and answers.
func searchScript(limit int) map[string]any {
	return map[string]any{"turns": []any{
		map[string]any{"expect": map[string]any{"last_role": "user", "max_tools": limit, "tools": []string{"sinew_search_tools", "t_weather_forecast"}},
			"reply": map[string]any{"content": "", "tool_calls": []any{scriptCall("s1", "sinew_search_tools", map[string]any{"query": "translate text into German"})}}},
		map[string]any{"expect": map[string]any{"last_role": "tool", "max_tools": limit, "tool_results": map[string]any{"s1": "t_translate_text"},
			"tools": []string{"sinew_search_tools", "t_translate_text"}},
			"reply": map[string]any{"content": "", "tool_calls": []any{scriptCall("c1", "t_translate_text", map[string]any{"json": map[string]any{"text": "hello", "target_language": "de"}})}}},
		map[string]any{"expect": map[string]any{"last_role": "tool", "max_tools": limit, "tool_results": map[string]any{"c1": "Hallo"}},
			"reply": map[string]any{"content": "It will rain; and hello is Hallo."}},
	}}
}

// TestToolSearchAgentLoop: the same turn handed to agent_loop (an async chat) shows the model at
// most the threshold's worth of tools at each step, and its model step answers the searches, so
// the Map runs only the agent's own calls.
func TestToolSearchAgentLoop(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path, "translated": "Hallo"})
	}))
	t.Cleanup(srv.Close)
	p := startScripted(t, searchScript(30))
	dev := p.apiFor(t, "dev-toolsearch-loop")
	agent := dev.must(t, "POST", "/agents", map[string]any{"name": "many"}, 201)["id"].(string)
	dev.must(t, "POST", "/agents/"+agent+"/tools/openapi", map[string]any{"document": manyToolsDocument(t, 500), "base_url": srv.URL, "prefix": "t_"}, 201)
	session := dev.must(t, "POST", "/sessions", map[string]any{"agent": agent}, 201)["id"].(string)
	started := dev.must(t, "POST", "/sessions/"+session+"/chat", map[string]any{"auto_run_tools": true, "async": true,
		"messages": []any{map[string]any{"role": "user", "content": "Will it rain in Tokyo this weekend?"}}}, 202)
	id, _ := started["execution_id"].(string)
	if id == "" {
		t.Fatalf("the async chat's answer: %v", started)
	}
	var x map[string]any
	for range 600 {
		x = dev.must(t, "GET", "/executions/"+id, nil, 200)
		if s := x["status"]; s != "running" && s != "awaiting_input" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if x["status"] != "succeeded" || !strings.Contains(jsonOf(t, x), "hello is Hallo") {
		t.Fatalf("agent_loop's execution: %v", x)
	}
}

// mcpSession opens an MCP session with the official Go SDK's client on path, with a's token.
func (a *api) mcpSession(t *testing.T, path string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "sinew-e2e", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: a.base + path, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{a.token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}
