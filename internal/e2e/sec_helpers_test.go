package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The security tests play an attacker through local mode's public API: a developer's own token,
// agent and tools, and a scripted model's tool calls. Loopback servers stand for the hosts a secret
// may or may not reach.

// recorder is a loopback HTTP server that keeps every request it gets, as text, and answers with
// its handler (200 {} when nil).
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []string
	then http.HandlerFunc
}

func newRecorder(t testing.TB, then http.HandlerFunc) *recorder {
	r := &recorder{then: then}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", req.Method, req.URL)
		_ = req.Header.Write(&b)
		b.Write(body)
		r.mu.Lock()
		r.reqs = append(r.reqs, b.String())
		r.mu.Unlock()
		if r.then != nil {
			r.then(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(r.Close)
	return r
}

// got counts the requests that carry s anywhere (request line, headers, body); "" counts all.
func (r *recorder) got(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.reqs {
		if strings.Contains(q, s) {
			n++
		}
	}
	return n
}

// startScripted runs local mode with the scripted model playing script, and api_call and the
// providers allowed to reach loopback.
func startScripted(t *testing.T, script any, env ...string) *local {
	t.Helper()
	dir := t.TempDir()
	env = append(env, "SINEW_APICALL_ALLOW=127.0.0.1/32")
	if script != nil {
		b, err := json.Marshal(script)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "script.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "SINEW_MODEL=scripted:"+path)
	}
	return startLocal(t, filepath.Join(dir, "data"), env)
}

// reply is a scripted model turn that asks for calls, or answers text when calls is empty.
func reply(content string, calls ...map[string]any) map[string]any {
	r := map[string]any{"content": content}
	if len(calls) > 0 {
		r["tool_calls"] = calls
	}
	return map[string]any{"reply": r}
}

func scriptCall(id, name string, args map[string]any) map[string]any {
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"id": id, "name": name, "arguments": args}
}

// toolCall runs one call through POST /tool-calls and answers its finished execution record.
func (a *api) toolCall(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	id := a.startAsync(t, body)["execution_id"].(string)
	deadline := time.Now().Add(2 * time.Minute) // a guard against a hang only
	for {
		rec := a.must(t, "GET", "/executions/"+id, nil, 200)
		if rec["status"] != "running" {
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s still running: %v", id, rec)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// errText is an execution record's error message ("" when it has none).
func errText(rec map[string]any) string {
	e, _ := rec["error"].(map[string]any)
	if e == nil {
		if out, ok := rec["output"].(map[string]any); ok {
			e, _ = out["error"].(map[string]any)
		}
	}
	m, _ := e["message"].(string)
	return m
}

func newSecret(prefix string) string {
	return prefix + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")
}
