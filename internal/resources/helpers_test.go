package resources_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sinew/internal/config"
	"sinew/internal/httpapi"
	"sinew/internal/jsonv"
	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/testenv/ddblocal"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

// env is one test's API: the router with the resources routes over a store on its own table,
// served on a loopback port through httpapi.HTTPHandler, as local mode serves it.
type env struct {
	t     *testing.T
	st    *store.Store
	rt    *httpapi.Router
	base  string
	flags map[string]bool
}

// bearerClaims stands in for API Gateway's JWT authorizer: "Bearer <developer>" gives that
// developer as the sub claim (the JWT parsing itself is httpapi's, tested there).
func bearerClaims(r *http.Request) (map[string]string, error) {
	dev, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || dev == "" {
		return nil, errors.New("no bearer")
	}
	return map[string]string{"sub": dev}, nil
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := ddblocal.Client(t)
	table := ddblocal.NewTable(t, db)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(db, table, sl)
	flags, err := config.ParseFlagDefaults("auto_run_tools_chat=true")
	if err != nil {
		t.Fatal(err)
	}
	rt := httpapi.New(httpapi.Options{Logger: slog.New(slog.DiscardHandler)})
	resources.Register(rt, &resources.Service{Store: st, FlagDefaults: flags})
	srv := httptest.NewServer(httpapi.HTTPHandler(rt.ServeEvent, bearerClaims))
	t.Cleanup(srv.Close)
	return &env{t: t, st: st, rt: rt, base: srv.URL, flags: flags}
}

// answer is one HTTP answer: its status and its body decoded in the jsonv form.
type answer struct {
	status int
	body   any
	raw    string
}

func (a answer) obj() map[string]any { m, _ := a.body.(map[string]any); return m }

// get walks a path of keys and indices ("items", 0, "id") into the body.
func (a answer) get(path ...any) any {
	v := a.body
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func (a answer) str(path ...any) string { s, _ := a.get(path...).(string); return s }

func (a answer) errType() string  { return a.str("error", "type") }
func (a answer) errField() string { return a.str("error", "field") }

// do sends a request as dev ("" sends no token); body is sent as is.
func (e *env) do(dev, method, path, body string) answer {
	e.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, e.base+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if dev != "" {
		req.Header.Set("Authorization", "Bearer "+dev)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, raw: string(b)}
	if len(b) > 0 {
		if a.body, err = jsonv.Decode(b); err != nil {
			e.t.Fatalf("%s %s: answer is not JSON: %q", method, path, b)
		}
	}
	return a
}

// must sends a request and fails the test unless it answers want.
func (e *env) must(want int, dev, method, path, body string) answer {
	e.t.Helper()
	a := e.do(dev, method, path, body)
	if a.status != want {
		e.t.Fatalf("%s %s: %d %s, want %d", method, path, a.status, a.raw, want)
	}
	return a
}

type storeMessage = store.Message

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

const dev1, dev2 = "dev-one", "dev-two"

// agent creates an agent and answers its id.
func (e *env) agent(dev, name string) string {
	e.t.Helper()
	return e.must(201, dev, "POST", "/agents", `{"name":"`+name+`"}`).str("id")
}
