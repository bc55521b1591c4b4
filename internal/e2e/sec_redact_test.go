package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRedactionIsPerCall: while developer A's call holding A's secret runs, developer B makes calls
// whose error echoes a guess. B's error text must not depend on whether the guess is A's secret.
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -count=1 -run TestRedactionIsPerCall ./internal/e2e/
func TestRedactionIsPerCall(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{}, 1)
	hold := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		_, _ = io.WriteString(w, "{}")
	})
	echo := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "unknown city "+r.URL.Query().Get("q"))
	})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	p := startScripted(t, nil)
	devA, devB := p.apiFor(t, "dev-a-oracle"), p.apiFor(t, "dev-b-oracle")
	secretA := newSecret("a-secret")
	devA.must(t, "PUT", "/secrets/A_KEY", map[string]any{"value": secretA}, 201)
	agentA := devA.must(t, "POST", "/agents", map[string]any{"name": "a"}, 201)["id"].(string)
	devA.must(t, "POST", "/agents/"+agentA+"/tools", map[string]any{"name": "slow", "type": "api_call",
		"api_call": map[string]any{"method": "GET", "url": hold.URL + "/slow", "headers": map[string]any{"X-Api-Key": "$ secrets.A_KEY"}}}, 201)
	agentB := devB.must(t, "POST", "/agents", map[string]any{"name": "b"}, 201)["id"].(string)
	devB.must(t, "POST", "/agents/"+agentB+"/tools", map[string]any{"name": "probe", "type": "api_call",
		"api_call": map[string]any{"method": "GET", "url": echo.URL + "/echo"}}, 201)

	devA.startAsync(t, map[string]any{"agent_id": agentA, "tool": "slow", "arguments": map[string]any{}})
	select {
	case <-arrived: // A's call is in flight, its secret opened
	case <-time.After(2 * time.Minute):
		t.Fatal("developer A's call never reached its server")
	}
	probe := func(guess string) string {
		rec := devB.toolCall(t, map[string]any{"agent_id": agentB, "tool": "probe", "arguments": map[string]any{"params": map[string]any{"q": guess}}})
		return strings.ReplaceAll(errText(rec), guess, "GUESS")
	}
	wrong := newSecret("a-secret")
	right, other := probe(secretA), probe(wrong)
	if right != other || !strings.Contains(right, "GUESS") {
		t.Errorf("B's error with A's secret as the guess:\n  %q\nwith a wrong guess:\n  %q\nwant the same text, echoing the guess", right, other)
	}
	close(release)
	released = true
}
