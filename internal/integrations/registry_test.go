package integrations_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/integrations/providers/dummy"
)

type testSetup struct {
	APIKey string         `json:"api_key" jsonschema:"minLength=1" jsonschema_description:"The key."`
	Params map[string]any `json:"params,omitempty"`
}

type item struct {
	Range string `json:"range"`
	Major string `json:"major_dimension,omitempty" jsonschema:"enum=ROWS,enum=COLUMNS"`
}

type testArgs struct {
	Query string   `json:"query" jsonschema:"minLength=1"`
	Count int      `json:"count,omitempty" jsonschema:"minimum=1,maximum=10,default=3"`
	Sort  string   `json:"sort,omitempty" jsonschema:"enum=asc,enum=desc,default=desc"`
	Tags  []string `json:"tags,omitempty"`
	Items []item   `json:"items,omitempty"`
	Flag  *bool    `json:"flag,omitempty"`
}

type testOut struct {
	Echo  testArgs `json:"echo"`
	Key   string   `json:"key_len"`
	Extra int64    `json:"extra"`
}

type noSetupArgs struct {
	X string `json:"x"`
}

func testProvider() *integrations.Provider {
	return &integrations.Provider{
		Name: "testprov", FriendlyName: "Test Provider", URL: "https://example.test", Docs: "https://example.test/docs",
		BaseURL: "https://api.example.test",
		Methods: []*integrations.Method{
			integrations.NewMethod("first", "The default method.", func(_ context.Context, env integrations.Env, s testSetup, a testArgs) (testOut, error) {
				return testOut{Echo: a, Key: strings.Repeat("*", len(s.APIKey)), Extra: 1 << 40}, nil
			}),
			integrations.NewMethod("second", "Fails typed.", func(_ context.Context, env integrations.Env, s testSetup, a testArgs) (testOut, error) {
				return testOut{}, fault.New(fault.Provider, "refused %s", a.Query)
			}),
			integrations.NewMethod("untyped", "Fails untyped.", func(_ context.Context, env integrations.Env, s testSetup, a testArgs) (testOut, error) {
				return testOut{}, errors.New("boom with secret " + s.APIKey)
			}),
			integrations.NewMethod("panics", "Panics.", func(_ context.Context, env integrations.Env, s testSetup, a testArgs) (testOut, error) {
				var m map[string]int
				//lint:ignore SA5000 the provider bug this method stands for
				m[a.Query]++
				return testOut{}, nil
			}),
			integrations.NewMethod("env", "Reports its env.", func(_ context.Context, env integrations.Env, s testSetup, a testArgs) (map[string]any, error) {
				return map[string]any{"base": env.BaseURL, "extra": env.Endpoint("TOKEN_URL", "https://default.test/token"), "provider": env.Provider, "method": env.Method}, nil
			}),
		},
	}
}

func noSetupProvider() *integrations.Provider {
	return &integrations.Provider{
		Name: "nosetup", FriendlyName: "No Setup",
		Methods: []*integrations.Method{
			integrations.NewMethod("run", "Runs.", func(_ context.Context, _ integrations.Env, _ integrations.NoSetup, a noSetupArgs) (noSetupArgs, error) {
				return a, nil
			}),
		},
	}
}

func newRegistry(t testing.TB, env map[string]string) *integrations.Registry {
	t.Helper()
	r := integrations.New(nil, integrations.WithGetenv(func(k string) string { return env[k] }))
	if err := r.Register(testProvider(), noSetupProvider(), dummy.Provider); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExecute(t *testing.T) {
	r := newRegistry(t, map[string]string{"SINEW_TESTPROV_BASE_URL": "http://127.0.0.1:9/x/", "SINEW_TESTPROV_TOKEN_URL": "http://tok.test"})
	setup := map[string]any{"api_key": "k3y"}
	tests := []struct {
		name      string
		provider  string
		method    string
		setup     map[string]any
		args      map[string]any
		want      any
		wantKind  fault.Kind
		wantField string
		wantMsg   string
	}{
		{name: "default method with defaults", provider: "testprov", setup: setup, args: map[string]any{"query": "q"},
			want: map[string]any{"echo": map[string]any{"query": "q", "count": int64(3), "sort": "desc"}, "key_len": "***", "extra": int64(1 << 40)}},
		{name: "explicit values win over defaults", provider: "testprov", method: "first", setup: setup, args: map[string]any{"query": "q", "count": int64(7), "sort": "asc", "flag": false},
			want: map[string]any{"echo": map[string]any{"query": "q", "count": int64(7), "sort": "asc", "flag": false}, "key_len": "***", "extra": int64(1 << 40)}},
		{name: "null optional is absent", provider: "testprov", setup: setup, args: map[string]any{"query": "q", "count": nil, "tags": nil},
			want: map[string]any{"echo": map[string]any{"query": "q", "count": int64(3), "sort": "desc"}, "key_len": "***", "extra": int64(1 << 40)}},
		{name: "Go values count as their JSON", provider: "testprov", setup: setup, args: map[string]any{"query": "q", "count": 4, "tags": []string{"a"}},
			want: map[string]any{"echo": map[string]any{"query": "q", "count": int64(4), "sort": "desc", "tags": []any{"a"}}, "key_len": "***", "extra": int64(1 << 40)}},
		{name: "not JSON", provider: "testprov", setup: setup, args: map[string]any{"query": "q", "f": func() {}}, wantKind: fault.InvalidInput, wantField: "arguments", wantMsg: "arguments is not a JSON object"},
		{name: "integral float is an integer", provider: "testprov", setup: setup, args: map[string]any{"query": "q", "count": float64(2)},
			want: map[string]any{"echo": map[string]any{"query": "q", "count": int64(2), "sort": "desc"}, "key_len": "***", "extra": int64(1 << 40)}},
		{name: "unknown provider", provider: "nope", wantKind: fault.InvalidInput, wantField: "provider", wantMsg: `unknown integration provider "nope"`},
		{name: "unknown method", provider: "testprov", method: "zap", setup: setup, args: map[string]any{"query": "q"}, wantKind: fault.InvalidInput, wantField: "method", wantMsg: `unknown method "zap" for integration provider "testprov"; its methods: first, second, untyped, panics, env`},
		{name: "missing required argument", provider: "testprov", setup: setup, args: map[string]any{}, wantKind: fault.InvalidInput, wantField: "arguments.query", wantMsg: "arguments.query is required"},
		{name: "null required argument", provider: "testprov", setup: setup, args: map[string]any{"query": nil}, wantKind: fault.InvalidInput, wantField: "arguments.query"},
		{name: "missing setup", provider: "testprov", args: map[string]any{"query": "q"}, wantKind: fault.InvalidInput, wantField: "setup.api_key", wantMsg: "setup.api_key is required"},
		{name: "empty key", provider: "testprov", setup: map[string]any{"api_key": ""}, args: map[string]any{"query": "q"}, wantKind: fault.InvalidInput, wantField: "setup.api_key"},
		{name: "wrong type", provider: "testprov", setup: setup, args: map[string]any{"query": int64(5)}, wantKind: fault.InvalidInput, wantField: "arguments.query", wantMsg: "arguments.query must be of type string, not number"},
		{name: "over maximum", provider: "testprov", setup: setup, args: map[string]any{"query": "q", "count": int64(11)}, wantKind: fault.InvalidInput, wantField: "arguments.count", wantMsg: "arguments.count must be at most 10"},
		{name: "not in enum", provider: "testprov", setup: setup, args: map[string]any{"query": "q", "sort": "up"}, wantKind: fault.InvalidInput, wantField: "arguments.sort", wantMsg: `arguments.sort must be one of "asc", "desc"`},
		{name: "bad setup value is not echoed", provider: "testprov", setup: map[string]any{"api_key": int64(123456789)}, args: map[string]any{"query": "q"}, wantKind: fault.InvalidInput, wantField: "setup.api_key", wantMsg: "setup.api_key must be of type string, not number"},
		{name: "unknown field", provider: "testprov", setup: setup, args: map[string]any{"query": "q", "qurey": "x"}, wantKind: fault.InvalidInput, wantField: "arguments.qurey", wantMsg: "arguments.qurey is not a known field"},
		{name: "nested path", provider: "testprov", setup: setup, args: map[string]any{"query": "q", "items": []any{map[string]any{"range": "A1"}, map[string]any{"major_dimension": "DIAG"}}}, wantKind: fault.InvalidInput, wantField: "arguments.items[1].major_dimension"},
		{name: "typed provider error passes", provider: "testprov", method: "second", setup: setup, args: map[string]any{"query": "q"}, wantKind: fault.Provider, wantMsg: "refused q"},
		{name: "untyped provider error is internal and hides its text", provider: "testprov", method: "untyped", setup: setup, args: map[string]any{"query": "q"}, wantKind: fault.Internal, wantMsg: "testprov.untyped failed"},
		{name: "a panic is an internal error", provider: "testprov", method: "panics", setup: setup, args: map[string]any{"query": "q"}, wantKind: fault.Internal, wantMsg: "testprov.panics failed unexpectedly"},
		{name: "env", provider: "testprov", method: "env", setup: setup, args: map[string]any{"query": "q"},
			want: map[string]any{"base": "http://127.0.0.1:9/x", "extra": "http://tok.test", "provider": "testprov", "method": "env"}},
		{name: "no-setup provider with empty setup", provider: "nosetup", setup: map[string]any{}, args: map[string]any{"x": "y"}, want: map[string]any{"x": "y"}},
		{name: "no-setup provider refuses setup", provider: "nosetup", setup: map[string]any{"b": 1, "a": 2}, args: map[string]any{"x": "y"}, wantKind: fault.InvalidInput, wantField: "setup", wantMsg: "takes no setup, but setup has a, b"},
		{name: "dummy echoes", provider: "dummy", setup: map[string]any{"anything": true}, args: map[string]any{"a": []any{int64(1), "b"}, "c": map[string]any{"d": nil}},
			want: map[string]any{"a": []any{int64(1), "b"}, "c": map[string]any{"d": nil}}},
		{name: "dummy with no arguments", provider: "dummy", want: map[string]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), tc.provider, tc.method, tc.setup, tc.args)
			if tc.wantKind != "" {
				if err == nil {
					t.Fatalf("no error; output %v", got)
				}
				if k := fault.KindOf(err); k != tc.wantKind {
					t.Fatalf("kind %s, want %s (%v)", k, tc.wantKind, err)
				}
				if f := fault.FieldOf(err); f != tc.wantField {
					t.Errorf("field %q, want %q (%v)", f, tc.wantField, err)
				}
				if !strings.Contains(fault.Message(err), tc.wantMsg) {
					t.Errorf("message %q does not contain %q", fault.Message(err), tc.wantMsg)
				}
				if strings.Contains(fault.Message(err), "k3y") || strings.Contains(err.Error(), "123456789") {
					t.Errorf("message leaks the setup: %q", fault.Message(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestExecuteDoesNotModifyInput(t *testing.T) {
	r := newRegistry(t, nil)
	args := map[string]any{"query": "q", "count": nil}
	if _, err := r.Execute(context.Background(), "testprov", "", map[string]any{"api_key": "k"}, args); err != nil {
		t.Fatal(err)
	}
	if want := (map[string]any{"query": "q", "count": nil}); !reflect.DeepEqual(args, want) {
		t.Fatalf("arguments changed to %v", args)
	}
}

// badTagSetup declares a key with a sinew tag that is neither endpoint nor secret.
type badTagSetup struct {
	URL string `json:"url" sinew:"url"`
}

// TestSetupBinding: the sinew tags of a setup type name its endpoints and secrets.
func TestSetupBinding(t *testing.T) {
	type setup struct {
		Key  string `json:"api_key" sinew:"secret"`
		URL  string `json:"api_url,omitempty" sinew:"endpoint"`
		Name string `json:"name"`
	}
	m := integrations.NewMethod("m", "", func(context.Context, integrations.Env, setup, noSetupArgs) (noSetupArgs, error) {
		return noSetupArgs{}, nil
	})
	r := integrations.New(nil)
	if err := r.Register(&integrations.Provider{Name: "p", Methods: []*integrations.Method{m}}); err != nil {
		t.Fatal(err)
	}
	b := r.SetupBinding("p")
	if !reflect.DeepEqual(b.Endpoints, []string{"api_url"}) || !reflect.DeepEqual(b.Secrets, []string{"api_key"}) {
		t.Errorf("binding %+v, want endpoint api_url and secret api_key", b)
	}
	if b := r.SetupBinding("unknown"); len(b.Endpoints)+len(b.Secrets) != 0 {
		t.Errorf("an unknown provider's binding %+v, want none", b)
	}
}

func TestRegisterRefuses(t *testing.T) {
	m := integrations.NewMethod("m", "", func(context.Context, integrations.Env, integrations.NoSetup, noSetupArgs) (noSetupArgs, error) {
		return noSetupArgs{}, nil
	})
	other := integrations.NewMethod("o", "", func(context.Context, integrations.Env, testSetup, noSetupArgs) (noSetupArgs, error) {
		return noSetupArgs{}, nil
	})
	badTag := integrations.NewMethod("b", "", func(context.Context, integrations.Env, badTagSetup, noSetupArgs) (noSetupArgs, error) {
		return noSetupArgs{}, nil
	})
	tests := []struct {
		name string
		ps   []*integrations.Provider
		want string
	}{
		{"bad name", []*integrations.Provider{{Name: "Bad-Name", Methods: []*integrations.Method{m}}}, "bad provider name"},
		{"unknown sinew tag", []*integrations.Provider{{Name: "p", Methods: []*integrations.Method{badTag}}}, `sinew tag "url"`},
		{"no methods", []*integrations.Provider{{Name: "p"}}, "has no methods"},
		{"duplicate provider", []*integrations.Provider{{Name: "p", Methods: []*integrations.Method{m}}, {Name: "p", Methods: []*integrations.Method{m}}}, "registered twice"},
		{"duplicate method", []*integrations.Provider{{Name: "p", Methods: []*integrations.Method{m, m}}}, "declared twice"},
		{"mixed setup types", []*integrations.Provider{{Name: "p", Methods: []*integrations.Method{m, other}}}, "takes setup"},
		{"hand-made method", []*integrations.Provider{{Name: "p", Methods: []*integrations.Method{{Name: "x"}}}}, "make methods with NewMethod"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := integrations.New(nil).Register(tc.ps...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCatalogue(t *testing.T) {
	r := newRegistry(t, nil)
	cat := r.Catalogue()
	var names []string
	for _, e := range cat {
		names = append(names, e.Provider)
	}
	if want := []string{"dummy", "nosetup", "testprov"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("providers %v, want %v", names, want)
	}
	e, err := r.ProviderInfo("testprov")
	if err != nil {
		t.Fatal(err)
	}
	if e.Info != (integrations.Info{URL: "https://example.test", Docs: "https://example.test/docs", FriendlyName: "Test Provider"}) {
		t.Errorf("info %+v", e.Info)
	}
	if got := e.Methods[0].Method; got != "first" {
		t.Errorf("first method %q", got)
	}
	if req, _ := e.Setup["required"].([]any); len(req) != 1 || req[0] != "api_key" {
		t.Errorf("setup required %v", e.Setup["required"])
	}
	props, _ := e.Methods[0].Arguments["properties"].(map[string]any)
	count, _ := props["count"].(map[string]any)
	if count["default"] != float64(3) || count["maximum"] != float64(10) {
		t.Errorf("count schema %v", count)
	}
	if e.Methods[0].Arguments["additionalProperties"] != false {
		t.Errorf("arguments allow unknown fields: %v", e.Methods[0].Arguments)
	}
	if _, ok := e.Methods[0].Arguments["$defs"]; ok {
		t.Errorf("schema has $defs: %v", e.Methods[0].Arguments)
	}
	if e.Methods[0].Output["type"] != "object" {
		t.Errorf("output schema %v", e.Methods[0].Output)
	}
	ns, _ := r.ProviderInfo("nosetup")
	b, _ := json.Marshal(ns)
	if !strings.Contains(string(b), `"setup":null`) || !strings.Contains(string(b), `"info":{"url":""`) {
		t.Errorf("no-setup entry %s", b)
	}
	if _, err := r.ProviderInfo("nope"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("unknown provider: %v", err)
	}
	// Changing what the catalogue returned does not change the registry.
	e.Methods[0].Arguments["properties"] = nil
	again, _ := r.ProviderInfo("testprov")
	if again.Methods[0].Arguments["properties"] == nil {
		t.Error("catalogue shares its schemas with callers")
	}
}

func TestToolSchema(t *testing.T) {
	r := newRegistry(t, nil)
	tests := []struct {
		provider, method, name string
		wantName, wantDesc     string
		wantKind               fault.Kind
	}{
		{"testprov", "", "", "testprov_first", "The default method.", ""},
		{"testprov", "second", "my_search", "my_search", "Fails typed.", ""},
		{"dummy", "", "echo_tool", "echo_tool", "Return the arguments unchanged (for testing tool wiring).", ""},
		{"testprov", "zap", "", "", "", fault.NotFound},
		{"zap", "", "", "", "", fault.NotFound},
	}
	for _, tc := range tests {
		t.Run(tc.provider+"/"+tc.method, func(t *testing.T) {
			f, err := r.ToolSchema(tc.provider, tc.method, tc.name)
			if tc.wantKind != "" {
				if fault.KindOf(err) != tc.wantKind {
					t.Fatalf("err %v, want %s", err, tc.wantKind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != tc.wantName || f.Description != tc.wantDesc || f.Parameters["type"] != "object" {
				t.Fatalf("got %+v", f)
			}
		})
	}
	f, _ := r.ToolSchema("testprov", "", "")
	b, _ := json.Marshal(f.AsTool())
	if !strings.HasPrefix(string(b), `{"function":{"name":"testprov_first","description":"The default method.","parameters":{`) || !strings.HasSuffix(string(b), `},"type":"function"}`) {
		t.Errorf("tool %s", b)
	}
	if _, ok := f.Parameters["$schema"]; ok {
		t.Errorf("parameters carry $schema: %v", f.Parameters)
	}
	if req, _ := f.Parameters["required"].([]any); len(req) != 1 || req[0] != "query" {
		t.Errorf("required %v", f.Parameters["required"])
	}
}

var _ = http.StatusOK
