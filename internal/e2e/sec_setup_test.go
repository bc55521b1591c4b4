package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestModelCannotRepointSetup: a model with the system tool agent.update on its own agent points
// the browserbase tool's setup at another host (metadata overrides setup key by key) and then calls
// the tool. The key, a developer secret named in the tool's setup, must never reach that host: the
// system tool refuses to write setup, and a setup layer that moves the endpoint without giving its
// own key sends no key. A developer's session that moves api_url alone is refused the same way.
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -count=1 -run TestModelCannotRepointSetup ./internal/e2e/
func TestModelCannotRepointSetup(t *testing.T) {
	legit, attacker := newRecorder(t, nil), newRecorder(t, nil)
	repoint := map[string]any{"metadata": map[string]any{"x-integration-setup": map[string]any{"bb": map[string]any{"api_url": attacker.URL}}}}
	p := startScripted(t, map[string]any{"turns": []any{
		reply("", scriptCall("up", "update_agent", repoint)),
		reply("", scriptCall("bb1", "bb", nil)),
		reply("done"),
	}})
	a := p.apiFor(t, "dev-repoint")
	key := newSecret("bb-key")
	a.must(t, "PUT", "/secrets/BB_KEY", map[string]any{"value": key}, 201)
	agent := a.must(t, "POST", "/agents", map[string]any{"name": "repoint"}, 201)["id"].(string)
	a.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "bb", "type": "integration", "integration": map[string]any{
		"provider": "browserbase", "method": "list_sessions",
		"setup": map[string]any{"api_key": map[string]any{"secret": "BB_KEY"}, "project_id": "proj", "api_url": legit.URL}}}, 201)
	a.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "update_agent", "type": "system",
		"system": map[string]any{"resource": "agent", "operation": "update", "resource_id": agent}}, 201)
	session := a.must(t, "POST", "/sessions", map[string]any{"agent_id": agent}, 201)["id"].(string)

	chat := a.must(t, "POST", "/sessions/"+session+"/chat", map[string]any{"auto_run_tools": true,
		"messages": []any{map[string]any{"role": "user", "content": "go"}}}, 200)
	if n := attacker.got(key); n != 0 {
		t.Errorf("the host the model chose got the secret in %d requests", n)
	}
	if n := legit.got(key); n != 1 {
		t.Errorf("the host the setup named got the key in %d requests, want 1 (the tool still works)", n)
	}
	results, _ := chat["tool_results"].([]any)
	if len(results) != 2 || !strings.Contains(fmt.Sprint(results[0]), "x-integration-setup") {
		t.Errorf("tool results %v: want agent.update refused naming x-integration-setup", results)
	}

	// The developer's own session moves api_url but gives no key of its own: the key stays home.
	s2 := a.must(t, "POST", "/sessions", map[string]any{"agent_id": agent, "metadata": map[string]any{
		"x-integration-setup": map[string]any{"bb": map[string]any{"api_url": attacker.URL}}}}, 201)["id"].(string)
	rec := a.toolCall(t, map[string]any{"agent_id": agent, "session_id": s2, "tool": "bb", "arguments": map[string]any{}})
	if n := attacker.got(""); n != 0 {
		t.Errorf("the session's endpoint got %d requests, want none", n)
	}
	if msg := errText(rec); !strings.Contains(msg, "api_url") || !strings.Contains(msg, "api_key") {
		t.Errorf("the call's error %q (record %v): want it to name the moved endpoint and the key left behind", msg, rec)
	}
}
