package apicall_test

import (
	"net/http"
	"strings"
	"testing"

	"sinew/internal/apicall"
	"sinew/internal/fault"
	"sinew/internal/tool"
)

// weatherAPI is Julep's documented weather_api tool
// (https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/documentation/concepts/tools.mdx),
// pointed at the test server: params_schema describes the request's query parameters.
func weatherAPI(e *env) *tool.APICallDef {
	def := e.def("GET", "/data/2.5/weather")
	def.ParamsSchema = &tool.ParameterSchema{Type: "object", Properties: map[string]tool.PropertyDefinition{
		"q":     {Type: "string", Description: "City name or coordinates"},
		"units": {Type: "string", Enum: []string{"metric", "imperial"}, Description: "Temperature units"},
		"appid": {Type: "string", Description: "API key (loaded from metadata)"},
	}, Required: []string{"q", "appid"}}
	return def
}

func TestParamsSchemaDescribesTheQueryParameters(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(echo))
	tests := []struct {
		name      string
		in        apicall.Input
		wantQuery string // the raw query the server saw; "" when the call is refused
		field     string // the field of the refusal
	}{
		{"Julep's documented call", apicall.Input{Call: map[string]any{"params": map[string]any{"q": "London", "units": "metric", "appid": "k1"}}},
			"appid=k1&q=London&units=metric", ""},
		{"the parameters at the top level, as a model reads the schema", apicall.Input{Call: map[string]any{"q": "Paris", "appid": "k1"}},
			"appid=k1&q=Paris", ""},
		{"params as a query string", apicall.Input{Call: map[string]any{"params": "q=Rome&appid=k1"}}, "appid=k1&q=Rome", ""},
		{"a required parameter from metadata", apicall.Input{Call: map[string]any{"params": map[string]any{"q": "Oslo"}},
			MetaArgs: map[string]any{"params": map[string]any{"appid": "k2"}}}, "appid=k2&q=Oslo", ""},
		{"a required parameter missing", apicall.Input{Call: map[string]any{"params": map[string]any{"units": "metric", "appid": "k1"}}}, "", "q"},
		{"outside the enum", apicall.Input{Call: map[string]any{"params": map[string]any{"q": "Oslo", "appid": "k", "units": "kelvin"}}}, "", "units"},
		{"a wrong type", apicall.Input{Call: map[string]any{"q": 12, "appid": "k"}}, "", "q"},
		{"given twice", apicall.Input{Call: map[string]any{"q": "A", "appid": "k", "params": map[string]any{"q": "B"}}}, "", "q"},
		{"an undeclared top-level key is still no request part", apicall.Input{Call: map[string]any{"q": "A", "appid": "k", "city": "B"}}, "", "city"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.wantQuery != "" {
				seen := echoed(t, e, weatherAPI(e), tt.in)
				if seen["raw_query"] != tt.wantQuery || seen["path"] != "/data/2.5/weather" {
					t.Fatalf("the server saw %v?%v, want /data/2.5/weather?%s", seen["path"], seen["raw_query"], tt.wantQuery)
				}
				return
			}
			_, err := e.ex.Execute(t.Context(), weatherAPI(e), tt.in)
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tt.field {
				t.Fatalf("err = %v (field %q), want InvalidInput on %q", err, fault.FieldOf(err), tt.field)
			}
		})
	}
}

// A params_schema may describe the URL's {placeholders} too (Julep's github_stars example describes
// owner and repo): those properties are path values.
func TestParamsSchemaDescribesThePathPlaceholders(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(echo))
	def := e.def("GET", "/repos/{owner}/{repo}")
	def.ParamsSchema = &tool.ParameterSchema{Type: "object", Properties: map[string]tool.PropertyDefinition{
		"owner": {Type: "string"}, "repo": {Type: "string"}, "per_page": {Type: "integer"},
	}, Required: []string{"owner", "repo"}}
	for _, call := range []map[string]any{
		{"owner": "julep-ai", "repo": "julep", "per_page": 5},
		{"path": map[string]any{"owner": "julep-ai", "repo": "julep"}, "params": map[string]any{"per_page": 5}},
	} {
		seen := echoed(t, e, def, apicall.Input{Call: call})
		if seen["path"] != "/repos/julep-ai/julep" || seen["raw_query"] != "per_page=5" {
			t.Fatalf("call %v: the server saw %v?%v", call, seen["path"], seen["raw_query"])
		}
	}
	_, err := e.ex.Execute(t.Context(), def, apicall.Input{Call: map[string]any{"owner": "julep-ai"}})
	if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != "repo" || !strings.Contains(fault.Message(err), "params_schema") {
		t.Fatalf("err = %v, want the missing repo named against params_schema", err)
	}
}

// An api_call to a loopback name in any spelling is refused as loopback (Forbidden, never retried),
// as localhost is; the test resolver knows none of these names, so no lookup answers for them.
func TestLoopbackNamesAreRefused(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(echo))
	for _, host := range []string{"localhost", "localhost.", "LOCALHOST", "foo.localhost", "ip6-localhost"} {
		def := &tool.APICallDef{Method: "GET", URL: "http://" + host + "/"}
		_, err := e.ex.Execute(t.Context(), def, apicall.Input{})
		if !fault.Is(err, fault.Forbidden) || !strings.Contains(fault.Message(err), "a loopback address") {
			t.Errorf("GET http://%s/: err = %v (kind %s), want a loopback refusal", host, err, fault.KindOf(err))
		}
	}
	if n := e.passed(); n != 0 {
		t.Fatalf("%d connection attempts got past the guard", n)
	}
}
