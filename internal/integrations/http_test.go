package integrations_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
)

// httpProvider's one method sends a request to path on its base URL and returns the status.
func httpProvider() *integrations.Provider {
	type args struct {
		Path     string `json:"path"`
		MaxBytes int64  `json:"max_bytes,omitempty"`
	}
	type setup struct {
		Key string `json:"key"`
	}
	return &integrations.Provider{
		Name: "httpprov", FriendlyName: "HTTP Provider",
		Methods: []*integrations.Method{integrations.NewMethod("get", "", func(ctx context.Context, env integrations.Env, s setup, a args) (map[string]any, error) {
			var out map[string]any
			err := env.DoJSON(ctx, integrations.Request{URL: env.BaseURL + a.Path, Query: map[string][]string{"appid": {s.Key}}, MaxBytes: a.MaxBytes}, &out)
			return out, err
		})},
	}
}

func TestHTTPHelper(t *testing.T) {
	mux := http.NewServeMux()
	status := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("appid") != "s3cret" {
				t.Errorf("appid %q", r.URL.Query().Get("appid"))
			}
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
		}
	}
	mux.HandleFunc("/ok", status(200, `{"a":1}`))
	mux.HandleFunc("/bad-json", status(200, `{"a":`))
	mux.HandleFunc("/401", status(401, `{"message":"Invalid API key"}`))
	mux.HandleFunc("/403", status(403, `forbidden`))
	mux.HandleFunc("/404", status(404, "city\x00 not\n found"))
	mux.HandleFunc("/408", status(408, ``))
	mux.HandleFunc("/429", status(429, `slow down`))
	mux.HandleFunc("/500", status(500, ``))
	mux.HandleFunc("/503", status(503, `maintenance`))
	mux.HandleFunc("/524", status(524, ``))
	mux.HandleFunc("/long", status(400, strings.Repeat("x", 1000)))
	mux.HandleFunc("/big", status(200, `{"a":"`+strings.Repeat("x", 100)+`"}`))
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/redirect?appid=s3cret", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	trip, _ := netguardtest.Tripwire(t)
	guard := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(strings.TrimPrefix(srv.URL, "http://"))), trip)
	env := map[string]string{"SINEW_HTTPPROV_BASE_URL": srv.URL}
	r := integrations.New(guard, integrations.WithGetenv(func(k string) string { return env[k] }))
	r.MustRegister(httpProvider())

	tests := []struct {
		path    string
		max     int64
		kind    fault.Kind
		msgPart string
	}{
		{path: "/ok"},
		{path: "/bad-json", kind: fault.Provider, msgPart: "malformed JSON"},
		{path: "/401", kind: fault.Provider, msgPart: "HTTP Provider refused the credentials in the setup (HTTP 401); check the API key and its permissions: {\"message\":\"Invalid API key\"}"},
		{path: "/403", kind: fault.Provider, msgPart: "refused the credentials in the setup (HTTP 403)"},
		{path: "/404", kind: fault.Provider, msgPart: "refused the request (HTTP 404): city not found"},
		{path: "/408", kind: fault.Transient, msgPart: "HTTP 408"},
		{path: "/429", kind: fault.Transient, msgPart: "(HTTP 429); the call will be retried: slow down"},
		{path: "/500", kind: fault.Transient, msgPart: "HTTP 500"},
		{path: "/503", kind: fault.Transient, msgPart: "HTTP 503"},
		{path: "/524", kind: fault.Transient, msgPart: "HTTP 524"},
		{path: "/long", kind: fault.Provider, msgPart: strings.Repeat("x", 300) + "…"},
		{path: "/big", max: 50, kind: fault.TooLarge, msgPart: "more than 50 bytes"},
		{path: "/redirect", kind: fault.Provider, msgPart: "redirected too many times"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			args := map[string]any{"path": tc.path}
			if tc.max > 0 {
				args["max_bytes"] = tc.max
			}
			out, err := r.Execute(context.Background(), "httpprov", "", map[string]any{"key": "s3cret"}, args)
			if tc.kind == "" {
				if err != nil {
					t.Fatal(err)
				}
				if out.(map[string]any)["a"] != int64(1) {
					t.Fatalf("out %v", out)
				}
				return
			}
			if fault.KindOf(err) != tc.kind {
				t.Fatalf("kind %s (%v), want %s", fault.KindOf(err), err, tc.kind)
			}
			if !strings.Contains(fault.Message(err), tc.msgPart) {
				t.Errorf("message %q lacks %q", fault.Message(err), tc.msgPart)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error leaks the key: %v", err)
			}
			if code, convErr := strconv.Atoi(strings.TrimPrefix(tc.path, "/")); convErr == nil && integrations.StatusOf(err) != code {
				t.Errorf("StatusOf = %d, want %d", integrations.StatusOf(err), code)
			}
		})
	}

	t.Run("deadline is Timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := r.Execute(ctx, "httpprov", "", map[string]any{"key": "s3cret"}, map[string]any{"path": "/slow"})
		if fault.KindOf(err) != fault.Timeout || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("connection refused is Transient", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		deadURL := dead.URL
		dead.Close()
		g := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(strings.TrimPrefix(deadURL, "http://"))), trip)
		r2 := integrations.New(g, integrations.WithGetenv(func(k string) string { return map[string]string{"SINEW_HTTPPROV_BASE_URL": deadURL}[k] }))
		r2.MustRegister(httpProvider())
		_, err := r2.Execute(context.Background(), "httpprov", "", map[string]any{"key": "s3cret"}, map[string]any{"path": "/ok"})
		if fault.KindOf(err) != fault.Transient || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("err %v", err)
		}
	})
}

// TestGuardRefusesProviderTargets: a base URL (or any URL from setup or arguments) that points at an
// internal address is refused before a packet is sent, unless the operator allowed it.
func TestGuardRefusesProviderTargets(t *testing.T) {
	canary := netguardtest.NewCanary(t)
	trip, dialed := netguardtest.Tripwire(t)
	for _, target := range netguardtest.Targets(canary) {
		t.Run(target.Name, func(t *testing.T) {
			base := strings.TrimSuffix(target.URL, "/")
			g := netguard.New(netguard.WithResolver(netguardtest.Resolver()), trip, netguard.WithLogger(slog.New(slog.DiscardHandler)))
			r := integrations.New(g, integrations.WithGetenv(func(k string) string { return map[string]string{"SINEW_HTTPPROV_BASE_URL": base}[k] }))
			r.MustRegister(httpProvider())
			_, err := r.Execute(context.Background(), "httpprov", "", map[string]any{"key": "s3cret"}, map[string]any{"path": "/ok"})
			if fault.KindOf(err) != fault.Forbidden {
				t.Fatalf("kind %s (%v)", fault.KindOf(err), err)
			}
			if !strings.Contains(fault.Message(err), target.Want) {
				t.Errorf("message %q lacks %q", fault.Message(err), target.Want)
			}
		})
	}
	if n := canary.Accepted(); n != 0 {
		t.Fatalf("%d connections reached the canaries", n)
	}
	if n := dialed.Load(); n != 0 {
		t.Fatalf("%d addresses reached connect", n)
	}
}

// TestProviderRedirectKeepsKeyHome: a provider's API that redirects to another origin (here the
// same server under another name) gets the key header; the other origin does not.
func TestProviderRedirectKeepsKeyHome(t *testing.T) {
	var port string
	var landed http.Header
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Key") != "s3cret" {
			t.Errorf("the API itself got X-Key %q", r.Header.Get("X-Key"))
		}
		http.Redirect(w, r, "http://api.test:"+port+"/land", http.StatusFound)
	})
	mux.HandleFunc("/land", func(w http.ResponseWriter, r *http.Request) {
		landed = r.Header.Clone()
		_, _ = w.Write([]byte(`{}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	port = srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	res := netguardtest.Resolver()
	res["api.test"] = res["evil.test"] // 127.0.0.1
	guard := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(strings.TrimPrefix(srv.URL, "http://")+",api.test:"+port)), netguard.WithResolver(res))
	r := integrations.New(guard, integrations.WithGetenv(func(string) string { return "" }))
	r.MustRegister(&integrations.Provider{Name: "hop", Methods: []*integrations.Method{integrations.NewMethod("get", "",
		func(ctx context.Context, env integrations.Env, _ integrations.NoSetup, _ struct{}) (map[string]any, error) {
			var out map[string]any
			err := env.DoJSON(ctx, integrations.Request{URL: srv.URL + "/start", Header: http.Header{"X-Key": {"s3cret"}}}, &out)
			return out, err
		})}})
	if _, err := r.Execute(t.Context(), "hop", "get", nil, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if landed == nil || landed.Get("X-Key") != "" || landed.Get("User-Agent") == "" {
		t.Errorf("the other origin got headers %v: want no X-Key, the plain ones kept", landed)
	}
}
