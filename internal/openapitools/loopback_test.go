package openapitools_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"sinew/internal/apicall"
	"sinew/internal/netguard"
	"sinew/internal/openapitools"
	"sinew/internal/tool"
)

// seen is one request as the loopback server got it.
type seen struct {
	method, path string
	query        url.Values
	header       http.Header
	body         []byte
}

// recorder is a loopback API that answers every request with {} and keeps the last one.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	last *seen
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.last = &seen{method: req.Method, path: req.URL.EscapedPath(), query: req.URL.Query(), header: req.Header.Clone(), body: b}
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) take() *seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.last
	r.last = nil
	return s
}

// loopbackExecutor is the api_call executor with a guard that allows the loopback server only.
func loopbackExecutor(srv *httptest.Server) *apicall.Executor {
	quiet := slog.New(slog.DiscardHandler)
	g := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(strings.TrimPrefix(srv.URL, "http://"))), netguard.WithLogger(quiet))
	return apicall.New(g, apicall.WithLogger(quiet))
}

func readDoc(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEveryOperationReachesTheAPIAsTheDocumentSays imports real documents against a loopback
// server and calls every tool made, with arguments generated from its params_schema; the request
// the server gets must be the operation's method and path, and carry every parameter the document
// declares where the document puts it, the body as its media type says, and the credentials.
func TestEveryOperationReachesTheAPIAsTheDocumentSays(t *testing.T) {
	key, token, basic := "k-123", "tok-456", "AC1:secret"
	tests := []struct {
		doc      string
		basePath string
		security map[string]openapitools.Credential
		made     int
	}{
		{"swagger-petstore3.yaml", "/api/v3", map[string]openapitools.Credential{"api_key": {Value: &key}}, 12},
		{"discourse.yaml", "", nil, 92},
		{"twilio-conversations-v1.yaml", "", map[string]openapitools.Credential{"accountSid_authToken": {Value: &basic}}, 103},
		{"redocly-museum.yaml", "", map[string]openapitools.Credential{"MuseumPlaceholderAuth": {Value: &basic}}, 8},
		{"oai-v3.0-petstore-expanded.json", "/api", nil, 4},
		{"oai-v3.1-non-oauth-scopes.json", "", map[string]openapitools.Credential{"bearerAuth": {Value: &token}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			rec := newRecorder(t)
			ex := loopbackExecutor(rec.srv)
			text := readDoc(t, tt.doc)
			base := rec.srv.URL + tt.basePath
			res, err := openapitools.Build(&openapitools.Request{Document: text, BaseURL: base, Security: tt.security}, openapitools.Options{
				Guard: netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.1/32")), netguard.WithLogger(slog.New(slog.DiscardHandler)))})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tools) != tt.made {
				t.Fatalf("%d tools made, want %d; skipped: %v", len(res.Tools), tt.made, res.Skipped)
			}
			doc, err := openapi3.NewLoader().LoadFromData(text)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range res.Tools {
				args := generate(tl.APICall.ParamsSchema)
				if _, err := ex.Execute(t.Context(), tl.APICall, apicall.Input{Call: args, MetaSetup: res.Setup[tl.Name]}); err != nil {
					t.Errorf("%s: %v", tl.Name, err)
					continue
				}
				checkRequest(t, doc, base, tl, args, res.Setup[tl.Name], rec.take())
			}
		})
	}
}

// checkRequest compares what the server got with what the document says of the operation.
func checkRequest(t *testing.T, doc *openapi3.T, base string, tl tool.Tool, args map[string]any, setup map[string]any, got *seen) {
	t.Helper()
	template := strings.TrimPrefix(tl.APICall.URL, base)
	op := doc.Paths.Find(template).GetOperation(tl.APICall.Method)
	if got == nil || op == nil {
		t.Fatalf("%s: no request, or no operation %s %s", tl.Name, tl.APICall.Method, template)
	}
	if got.method != tl.APICall.Method {
		t.Errorf("%s: method %s, want %s", tl.Name, got.method, tl.APICall.Method)
	}
	path := strings.TrimPrefix(base, "http://"+strings.Split(strings.TrimPrefix(base, "http://"), "/")[0]) + template
	params := append(slices.Clone(doc.Paths.Find(template).Parameters), op.Parameters...)
	for _, pr := range params {
		p := pr.Value
		arg, ok := argFor(tl.APICall, p.In, p.Name)
		if !ok {
			if p.In == "header" && slices.Contains([]string{"accept", "content-type", "authorization"}, strings.ToLower(p.Name)) {
				continue
			}
			if _, bound := lookup(setup, p.In, p.Name); bound {
				continue
			}
			t.Errorf("%s: the document's %s parameter %s is no argument", tl.Name, p.In, p.Name)
			continue
		}
		want := strs(args[arg])
		switch p.In {
		case "path":
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(want[0]))
		case "query":
			if got := got.query[p.Name]; !slices.Equal(got, want) {
				t.Errorf("%s: query %s = %q, want %q", tl.Name, p.Name, got, want)
			}
		case "header":
			if got := got.header.Values(p.Name); !slices.Equal(got, want) {
				t.Errorf("%s: header %s = %q, want %q", tl.Name, p.Name, got, want)
			}
		case "cookie":
			r := &http.Request{Header: got.header}
			if c, err := r.Cookie(p.Name); err != nil || c.Value != want[0] {
				t.Errorf("%s: cookie %s = %v (%v), want %q", tl.Name, p.Name, c, err, want[0])
			}
		}
	}
	if got.path != path {
		t.Errorf("%s: path %s, want %s", tl.Name, got.path, path)
	}
	checkBody(t, op, tl, args, got)
	checkCredentials(t, tl.Name, setup, got)
}

// checkBody: a JSON body arrives as the body argument's JSON; a form body as its fields.
func checkBody(t *testing.T, op *openapi3.Operation, tl tool.Tool, args map[string]any, got *seen) {
	t.Helper()
	if op.RequestBody == nil || op.RequestBody.Value == nil {
		if len(got.body) > 0 {
			t.Errorf("%s: a body was sent, but the operation has none", tl.Name)
		}
		return
	}
	loc := tl.APICall.ArgumentLocations["body"]
	ct := got.header.Get("Content-Type")
	if _, declared := op.RequestBody.Value.Content[ct]; !declared {
		t.Errorf("%s: Content-Type %q is none of the document's %v", tl.Name, ct, slices.Collect(maps.Keys(op.RequestBody.Value.Content)))
	}
	switch loc.In {
	case tool.InBody:
		var v any
		if err := json.Unmarshal(got.body, &v); err != nil {
			t.Fatalf("%s: the body is not JSON: %v", tl.Name, err)
		}
		want, _ := json.Marshal(args["body"])
		have, _ := json.Marshal(v)
		if string(want) != string(have) {
			t.Errorf("%s: body %s, want %s", tl.Name, have, want)
		}
	case tool.InForm:
		form, err := url.ParseQuery(string(got.body))
		if err != nil {
			t.Fatalf("%s: the body is not a form: %v", tl.Name, err)
		}
		for k, v := range args["body"].(map[string]any) {
			if !slices.Equal(form[k], strs(v)) {
				t.Errorf("%s: form field %s = %q, want %q", tl.Name, k, form[k], strs(v))
			}
		}
	default:
		t.Errorf("%s: the operation has a body but the tool no body argument", tl.Name)
	}
}

// checkCredentials: every credential of the setup arrives where the security scheme says.
func checkCredentials(t *testing.T, name string, setup map[string]any, got *seen) {
	t.Helper()
	for part, m := range setup {
		for k, v := range m.(map[string]any) {
			var have string
			switch part {
			case "headers":
				have = got.header.Get(k)
			case "params":
				have = got.query.Get(k)
			case "cookies":
				if c, err := (&http.Request{Header: got.header}).Cookie(k); err == nil {
					have = c.Value
				}
			}
			if have != v {
				t.Errorf("%s: credential %s %s = %q, want %q", name, part, k, have, v)
			}
		}
	}
}

// argFor finds the argument that fills parameter name at in.
func argFor(def *tool.APICallDef, in, name string) (string, bool) {
	for arg, loc := range def.ArgumentLocations {
		if loc.In == in && loc.Target(arg) == name {
			return arg, true
		}
	}
	return "", false
}

func lookup(setup map[string]any, in, name string) (any, bool) {
	part := map[string]string{"header": "headers", "query": "params", "cookie": "cookies"}[in]
	m, _ := setup[part].(map[string]any)
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// generate makes a value for every argument of a params_schema.
func generate(ps *tool.ParameterSchema) map[string]any {
	out := map[string]any{}
	for name, p := range ps.Properties {
		out[name] = value(name, p, 0)
	}
	return out
}

func value(name string, p tool.PropertyDefinition, depth int) any {
	if len(p.Enum) > 0 {
		return p.Enum[len(p.Enum)-1]
	}
	switch p.Type {
	case "integer":
		return int64(7)
	case "number":
		return 2.5
	case "boolean":
		return true
	case "array":
		if p.Items == nil || depth > 4 {
			return []any{}
		}
		return []any{value(name, *p.Items, depth+1), value(name+"2", *p.Items, depth+1)}
	case "object":
		m := map[string]any{}
		if depth > 4 {
			return m
		}
		for k, sub := range p.Properties {
			m[k] = value(k, sub, depth+1)
		}
		return m
	}
	return "v-" + strings.ReplaceAll(name, " ", "_")
}

// strs is how a scalar or an array of scalars is written in a URL, header or form.
func strs(v any) []string {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, strs(e)...)
		}
		return out
	case float64:
		return []string{fmt.Sprint(x)}
	}
	return []string{fmt.Sprint(v)}
}
