package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestOpenAPIImportThenToolCall goes through local mode's public API as a developer would: import
// Swagger's petstore with its API key given as a value, call one of the tools made with
// POST /tool-calls against a loopback server, and find the key where it must be (in the request the
// server got) and nowhere it must not be (the tool listing, the agent, the call's record, the log,
// the answer to a second import that clashes). A task takes an import too, its credential a
// developer-secret reference that the call resolves.
func TestOpenAPIImportThenToolCall(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Clone(r.Context()))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": 10, "name": "doggie", "status": "available"}`)
	}))
	t.Cleanup(srv.Close)
	doc, err := os.ReadFile("../openapitools/testdata/swagger-petstore3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := startScripted(t, nil)
	dev := p.apiFor(t, "dev-openapi")
	key := newSecret("petstore-key")
	agent := dev.must(t, "POST", "/agents", map[string]any{"name": "pets"}, 201)["id"].(string)
	body := map[string]any{"document": string(doc), "base_url": srv.URL + "/api/v3", "prefix": "pets_",
		"security": map[string]any{"api_key": map[string]any{"value": key}}}
	ans := dev.must(t, "POST", "/agents/"+agent+"/tools/openapi", body, 201)
	tools, _ := ans["tools"].([]any)
	skipped, _ := ans["skipped"].([]any)
	if len(tools) != 12 || len(skipped) != 7 {
		t.Fatalf("made %d tools, skipped %d: %v", len(tools), len(skipped), skipped)
	}

	code, again, err := dev.do(t.Context(), "POST", "/agents/"+agent+"/tools/openapi", body)
	if err != nil || code != 409 || !strings.Contains(jsonOf(t, again), "pets_") {
		t.Fatalf("a second import: %d %v (%v), want a 409 naming the tools", code, again, err)
	}
	listed := dev.must(t, "GET", "/agents/"+agent+"/tools?limit=100", nil, 200)
	if n := len(listed["items"].([]any)); n != 12 {
		t.Fatalf("the agent has %d tools after the clash, want 12", n)
	}

	rec := dev.toolCall(t, map[string]any{"agent_id": agent, "tool": "pets_getPetById", "arguments": map[string]any{"petId": 10}})
	if rec["status"] != "succeeded" {
		t.Fatalf("the call: %v", rec)
	}
	mu.Lock()
	last := got[len(got)-1]
	mu.Unlock()
	if last.Method != "GET" || last.URL.Path != "/api/v3/pet/10" || last.Header.Get("api_key") != key {
		t.Fatalf("the server got %s %s with api_key %q", last.Method, last.URL.Path, last.Header.Get("api_key"))
	}
	for what, v := range map[string]any{"the import's answer": ans, "the second import's answer": again, "the tool listing": listed,
		"the agent": dev.must(t, "GET", "/agents/"+agent, nil, 200), "the call's record": rec} {
		if strings.Contains(jsonOf(t, v), key) {
			t.Errorf("%s shows the key", what)
		}
	}
	if strings.Contains(p.Stderr.String(), key) {
		t.Errorf("local mode's log shows the key: %s", p.logLines(key))
	}

	task := dev.must(t, "POST", "/agents/"+agent+"/tasks", map[string]any{"name": "t"}, 201)["id"].(string)
	scopes, err := os.ReadFile("../openapitools/testdata/oai-v3.1-non-oauth-scopes.json")
	if err != nil {
		t.Fatal(err)
	}
	token := newSecret("token")
	dev.must(t, "PUT", "/secrets/SCOPES_TOKEN", map[string]any{"value": token}, 201)
	ans = dev.must(t, "POST", "/tasks/"+task+"/tools/openapi", map[string]any{"document": json.RawMessage(scopes), "base_url": srv.URL,
		"security": map[string]any{"bearerAuth": map[string]any{"secret": "SCOPES_TOKEN"}}}, 201)
	if tools, _ := ans["tools"].([]any); len(tools) != 1 {
		t.Fatalf("the task's import: %v", ans)
	}
	rec = dev.toolCall(t, map[string]any{"agent_id": agent, "task_id": task, "tool": "get_users", "arguments": map[string]any{}})
	mu.Lock()
	last = got[len(got)-1]
	mu.Unlock()
	if rec["status"] != "succeeded" || last.URL.Path != "/users" || last.Header.Get("Authorization") != "Bearer "+token {
		t.Fatalf("the task's tool: %v; the server got %s with Authorization %q", rec, last.URL.Path, last.Header.Get("Authorization"))
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
