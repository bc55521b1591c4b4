package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestRedirectDropsSecretHeaders: an api_call whose definition sends a secret in headers, to a
// server answering 302 to another origin (another port of loopback). follow_redirects in the
// call's arguments is refused; a definition that follows redirects sends the definition's headers
// to its own origin only.
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -count=1 -run TestRedirectDropsSecretHeaders ./internal/e2e/
func TestRedirectDropsSecretHeaders(t *testing.T) {
	landing := newRecorder(t, nil)
	start := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, landing.URL+"/land", http.StatusFound)
	})
	p := startScripted(t, nil)
	a := p.apiFor(t, "dev-redirect")
	key := newSecret("api-key")
	a.must(t, "PUT", "/secrets/API_KEY", map[string]any{"value": key}, 201)
	agent := a.must(t, "POST", "/agents", map[string]any{"name": "redirect"}, 201)["id"].(string)
	headers := map[string]any{"X-Api-Key": "$ secrets.API_KEY", "Authorization": "$ f'Bearer {secrets.API_KEY}'"}
	a.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "hop", "type": "api_call",
		"api_call": map[string]any{"method": "GET", "url": start.URL + "/start", "headers": headers}}, 201)
	a.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "hop_def", "type": "api_call",
		"api_call": map[string]any{"method": "GET", "url": start.URL + "/start", "headers": headers, "follow_redirects": true}}, 201)

	rec := a.toolCall(t, map[string]any{"agent_id": agent, "tool": "hop", "arguments": map[string]any{"follow_redirects": true}})
	if n := landing.got(key); n != 0 {
		t.Errorf("the other origin got the secret in %d requests after follow_redirects in the arguments", n)
	}
	if msg := errText(rec); !strings.Contains(msg, "follow_redirects") {
		t.Errorf("record %v: want follow_redirects in the arguments refused by name", rec)
	}

	rec = a.toolCall(t, map[string]any{"agent_id": agent, "tool": "hop_def", "arguments": map[string]any{}})
	if n := start.got(key); n != 1 {
		t.Errorf("the tool's own origin got the key in %d requests, want 1 (the refused call sends nothing)", n)
	}
	if n := landing.got(""); n != 1 {
		t.Errorf("the redirect target got %d requests, want 1 (the definition follows redirects): %v", n, rec)
	}
	if n := landing.got(key); n != 0 {
		t.Errorf("the other origin got the secret in %d requests after a redirect the definition allowed", n)
	}
}
