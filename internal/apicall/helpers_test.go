package apicall_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sinew/internal/apicall"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
	"sinew/internal/tool"
)

// echo answers with a JSON description of the request it got, so tests can see every part.
func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	out := map[string]any{
		"method":       r.Method,
		"path":         r.URL.EscapedPath(),
		"query":        r.URL.Query(),
		"raw_query":    r.URL.RawQuery,
		"content_type": r.Header.Get("Content-Type"),
		"body":         base64.StdEncoding.EncodeToString(body),
		"headers":      r.Header,
	}
	if mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil {
		switch mt {
		case "application/x-www-form-urlencoded":
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			r.Header.Set("Content-Type", mt)
			if err := r.ParseForm(); err == nil {
				out["form"] = r.PostForm
			}
		case "multipart/form-data":
			mr := multipart.NewReader(strings.NewReader(string(body)), params["boundary"])
			parts := []map[string]string{}
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				b, _ := io.ReadAll(p)
				parts = append(parts, map[string]string{
					"name": p.FormName(), "filename": p.FileName(),
					"content_type": p.Header.Get("Content-Type"), "content": string(b),
				})
			}
			out["parts"] = parts
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

type env struct {
	srv    *httptest.Server
	ex     *apicall.Executor
	canary *netguardtest.Canary
	passed func() int64 // connection attempts that got past the guard
}

// newEnv starts h on 127.0.0.1 and an executor whose guard allows exactly that server's host:port
// (and the name api.test for it), with the test resolver and the tripwire.
func newEnv(t testing.TB, h http.Handler, opts ...apicall.Option) *env {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	hostport := strings.TrimPrefix(srv.URL, "http://")
	port := hostport[strings.LastIndex(hostport, ":")+1:]
	res := netguardtest.Resolver()
	res["api.test"] = res["evil.test"] // 127.0.0.1, allowed below by name and port only
	trip, passed := netguardtest.Tripwire(t)
	guard := netguard.New(
		netguard.WithAllowlist(netguard.MustParseAllowlist(hostport+",api.test:"+port)),
		netguard.WithResolver(res), trip,
		netguard.WithLogger(slog.New(slog.DiscardHandler)))
	opts = append([]apicall.Option{apicall.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	return &env{srv: srv, ex: apicall.New(guard, opts...), canary: netguardtest.NewCanary(t), passed: passed.Load}
}

func (e *env) def(method, path string) *tool.APICallDef {
	return &tool.APICallDef{Method: method, URL: e.srv.URL + path}
}

// echoed runs a call against the echo server and gives what it saw.
func echoed(t *testing.T, e *env, def *tool.APICallDef, in apicall.Input) map[string]any {
	t.Helper()
	res, err := e.ex.Execute(t.Context(), def, in)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	m, ok := res.JSON.(map[string]any)
	if !ok {
		t.Fatalf("the echo answer is not a JSON object: %#v", res.JSON)
	}
	return m
}

func ptr[T any](v T) *T { return &v }

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func unb64(t *testing.T, v any) string {
	t.Helper()
	s, _ := v.(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("not base64: %v", v)
	}
	return string(b)
}

// header gives one request header as the echo server saw it, values comma-joined.
func header(seen map[string]any, name string) string {
	h, _ := seen["headers"].(map[string]any)
	vs, _ := h[name].([]any)
	var out []string
	for _, v := range vs {
		out = append(out, v.(string))
	}
	return strings.Join(out, ",")
}
