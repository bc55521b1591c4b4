// Package integrationstest helps provider tests.
//
// It starts a local server that plays the provider's service on 127.0.0.1, and builds a registry
// whose guard lets exactly that server through (the allowlist, never a disabled guard), with the
// netguardtest tripwire so nothing leaves loopback, and whose SINEW_<PROVIDER>_BASE_URL points at
// the server.
package integrationstest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
)

// Env is extra SINEW_* settings for a test registry, by variable name; "{{URL}}" in a value becomes
// the server's URL.
type Env map[string]string

// Start serves h on 127.0.0.1 and returns a registry holding p, whose base URL is the server's.
func Start(t testing.TB, p *integrations.Provider, h http.Handler, env Env) (*integrations.Registry, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	trip, _ := netguardtest.Tripwire(t)
	guard := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(host)), trip)
	vars := map[string]string{integrations.EnvName(p.Name, "BASE_URL"): srv.URL}
	for k, v := range env {
		vars[k] = strings.ReplaceAll(v, "{{URL}}", srv.URL)
	}
	r := integrations.New(guard, integrations.WithGetenv(func(k string) string { return vars[k] }))
	if err := r.Register(p); err != nil {
		t.Fatalf("register %s: %v", p.Name, err)
	}
	return r, srv
}

// Faults makes a fake service answer a chosen status (with the service's own error body) to the
// next requests, so tests can show how 429 and 5xx answers are classified.
type Faults struct {
	mu     sync.Mutex
	status int
	body   string
	ctype  string
}

// Set makes the service answer status with body (JSON when it starts with '{') until Clear.
func (f *Faults) Set(status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.body, f.ctype = status, body, "text/plain"
	if strings.HasPrefix(body, "{") {
		f.ctype = "application/json"
	}
}

// Clear makes the service answer normally again.
func (f *Faults) Clear() { f.Set(0, "") }

// Serve answers the set fault, if any, and reports whether it did.
func (f *Faults) Serve(w http.ResponseWriter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status == 0 {
		return false
	}
	w.Header().Set("Content-Type", f.ctype)
	w.WriteHeader(f.status)
	_, _ = w.Write([]byte(f.body))
	return true
}

// Case is one failure a provider must classify: the service answers Status with Body, and Execute
// must fail with Kind and a message containing Msg.
type Case struct {
	Status int
	Body   string
	Kind   fault.Kind
	Msg    string
}

// StandardFaults are the 429 and 503 cases every SaaS provider must treat as transient.
func StandardFaults(body429, body503 string) []Case {
	return []Case{
		{Status: 429, Body: body429, Kind: fault.Transient, Msg: "HTTP 429"},
		{Status: 503, Body: body503, Kind: fault.Transient, Msg: "HTTP 503"},
	}
}

// RunFaults runs the cases against one call, checking the kind, the message, and that no setup
// value appears in the error.
func RunFaults(t *testing.T, r *integrations.Registry, f *Faults, provider, method string, setup, args map[string]any, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(fmt.Sprintf("HTTP %d", c.Status), func(t *testing.T) {
			f.Set(c.Status, c.Body)
			defer f.Clear()
			_, err := r.Execute(context.Background(), provider, method, setup, args)
			CheckErr(t, err, c.Kind, c.Msg, setup)
		})
	}
}

// secretish reports whether a setup field holds a credential (URLs and names in setup may appear in
// messages: a refusal must name the address it refused).
func secretish(field string) bool {
	for _, w := range []string{"key", "secret", "password", "token", "json", "auth"} {
		if strings.Contains(strings.ToLower(field), w) {
			return true
		}
	}
	return false
}

// CheckErr checks an error's kind and message, and that it carries no credential from setup.
func CheckErr(t testing.TB, err error, kind fault.Kind, msg string, setup map[string]any) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", kind)
	}
	if fault.KindOf(err) != kind {
		t.Fatalf("kind %s, want %s: %v", fault.KindOf(err), kind, err)
	}
	if !strings.Contains(fault.Message(err), msg) {
		t.Errorf("message %q lacks %q", fault.Message(err), msg)
	}
	for k, v := range setup {
		if s, ok := v.(string); ok && secretish(k) && len(s) >= 6 && strings.Contains(err.Error(), s) {
			t.Errorf("error leaks setup %s: %v", k, err)
		}
	}
}
