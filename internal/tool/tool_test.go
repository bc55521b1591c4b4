package tool

import (
	"encoding/json"
	"strings"
	"testing"

	"sinew/internal/fault"
)

func TestDecodeAndValidate(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantField string // "" means valid
		wantMsg   string // a fragment of the message
	}{
		{"function ok", `{"name":"get_weather","type":"function","function":{"parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`, "", ""},
		{"function with sinew additions", `{"name":"ask_human","type":"function","function":{"timeout_seconds":3600,"heartbeat_seconds":60}}`, "", ""},
		{"integration ok", `{"name":"send","type":"integration","integration":{"provider":"email","method":"send","setup":{"host":"h"},"arguments":{"to":"a@b"}}}`, "", ""},
		{"system ok", `{"name":"list_agents","type":"system","system":{"resource":"agent","operation":"list","arguments":{"limit":5}}}`, "", ""},
		{"api_call ok", `{"name":"weather","type":"api_call","api_call":{"method":"GET","url":"https://api.example.com/v1/{city}","headers":{"Accept":"application/json"},"params_schema":{"type":"object","properties":{"params":{"type":"object"}},"required":["params"]}}}`, "", ""},
		{"api_call json_ alias", `{"name":"post","type":"api_call","api_call":{"method":"POST","url":"http://x.test/","json_":{"a":1},"schema_":{}}}`, "", ""},
		{"underscore name", `{"name":"_x9","type":"function","function":{}}`, "", ""},

		{"two spec fields", `{"name":"t","type":"function","function":{},"system":{"resource":"agent","operation":"list"}}`, "function,system", "exactly one"},
		{"type disagrees", `{"name":"t","type":"function","integration":{"provider":"dummy"}}`, "integration", "must agree"},
		{"spec missing", `{"name":"t","type":"api_call"}`, "api_call", "needs its"},
		{"type missing", `{"name":"t","function":{}}`, "type", "type is required"},
		{"type unknown", `{"name":"t","type":"shell","function":{}}`, "type", "unknown"},
		{"anthropic type", `{"name":"t","type":"bash_20241022"}`, "type", "not supported"},
		{"name missing", `{"type":"function","function":{}}`, "name", "required"},
		{"name starts with digit", `{"name":"1x","type":"function","function":{}}`, "name", "invalid"},
		{"name unicode", `{"name":"héllo","type":"function","function":{}}`, "name", "ASCII"},
		{"name 41 chars", `{"name":"` + strings.Repeat("a", 41) + `","type":"function","function":{}}`, "name", "40"},
		{"name with dash", `{"name":"a-b","type":"function","function":{}}`, "name", "invalid"},
		{"unknown top field", `{"name":"t","type":"function","function":{},"colour":"red"}`, "colour", "unknown field colour"},
		{"unknown nested field", `{"name":"t","type":"function","function":{"paramz":{}}}`, "function.paramz", "unknown field function.paramz"},
		{"unknown deep field", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"http://x.test","params_schema":{"type":"object","properties":{"a":{"type":"string","colour":1}}}}}`, "api_call.params_schema.properties.a.colour", "unknown field"},
		{"name wrong type", `{"name":5,"type":"function","function":{}}`, "name", "must be a string, not a number"},
		{"timeout wrong type", `{"name":"t","type":"function","function":{"timeout_seconds":"soon"}}`, "function.timeout_seconds", "must be an integer"},
		{"timeout fraction", `{"name":"t","type":"function","function":{"timeout_seconds":1.5}}`, "function.timeout_seconds", "must be an integer"},
		{"header value not string", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"http://x.test","headers":{"X-A":1}}}`, "api_call.headers.X-A", "must be a string"},
		{"spec not object", `{"name":"t","type":"function","function":[]}`, "function", "must be an object"},
		{"body not object", `[1]`, "", "must be an object"},
		{"json and json_ both", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"http://x.test","json":{},"json_":{}}}`, "api_call.", "same field"},
		{"timeout too long", `{"name":"t","type":"function","function":{"timeout_seconds":40000000}}`, "function.timeout_seconds", "one year"},
		{"timeout zero", `{"name":"t","type":"function","function":{"timeout_seconds":0}}`, "function.timeout_seconds", "between 1"},
		{"heartbeat over timeout", `{"name":"t","type":"function","function":{"timeout_seconds":10,"heartbeat_seconds":10}}`, "function.heartbeat_seconds", "less than"},
		{"parameters not object schema", `{"name":"t","type":"function","function":{"parameters":{"type":"array"}}}`, "function.parameters.type", "object"},
		{"provider unknown", `{"name":"t","type":"integration","integration":{"provider":"slack"}}`, "integration.provider", "unknown"},
		{"provider missing", `{"name":"t","type":"integration","integration":{}}`, "integration.provider", "required"},
		{"system resource unknown", `{"name":"t","type":"system","system":{"resource":"planet","operation":"list"}}`, "system.resource", "unknown"},
		{"system operation unknown", `{"name":"t","type":"system","system":{"resource":"agent","operation":"explode"}}`, "system.operation", "unknown"},
		{"system subresource unknown", `{"name":"t","type":"system","system":{"resource":"agent","operation":"list","subresource":"moon"}}`, "system.subresource", "unknown"},
		{"system resource_id not uuid", `{"name":"t","type":"system","system":{"resource":"agent","operation":"get","resource_id":"abc"}}`, "system.resource_id", "UUID"},
		{"api method lower", `{"name":"t","type":"api_call","api_call":{"method":"get","url":"http://x.test"}}`, "api_call.method", "upper case"},
		{"api url relative", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"/x"}}`, "api_call.url", "absolute"},
		{"api url ftp", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"ftp://x.test/"}}`, "api_call.url", "http or https"},
		{"api url credentials", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"https://u:p@x.test/"}}`, "api_call.url", "credentials"},
		// The call-time rules of the URL's placeholders, applied at creation: no call could fill these.
		{"api url double-brace placeholder", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"https://api.github.com/repos/{{owner}}/{{repo}}"}}`, "api_call.url", "write {owner} and give its value in the call's \"path\""},
		{"api url placeholder in the query", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"https://x.test/a?q={q}"}}`, "api_call.url", "only in its path"},
		{"api url unclosed placeholder", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"https://x.test/a/{id"}}`, "api_call.url", "unclosed"},
		{"api url empty placeholder", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"https://x.test/a/{}"}}`, "api_call.url", "invalid placeholder"},
		{"api timeout over 600", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"http://x.test","timeout":601}}`, "api_call.timeout", "600"},
		{"api content not base64", `{"name":"t","type":"api_call","api_call":{"method":"POST","url":"http://x.test","content":"!!"}}`, "api_call.content", "base64"},
		{"api params number", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"http://x.test","params":3}}`, "api_call.params", "query string or an object"},
		{"params_schema required unknown", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"http://x.test","params_schema":{"type":"object","properties":{},"required":["q"]}}}`, "api_call.params_schema.required", "not among"},
		{"secret ref without name", `{"name":"t","type":"api_call","api_call":{"method":"GET","url":"http://x.test","secrets":{"k":{}}}}`, "api_call.secrets.k.name", "required"},
		{"description too long", `{"name":"t","type":"function","function":{},"description":"` + strings.Repeat("d", MaxDescription+1) + `"}`, "description", "at most"},
		{"invalid json", `{"name":`, "", "not valid JSON"},
		{"empty", ``, "", "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := Decode([]byte(tc.body))
			if err == nil {
				err = tl.Validate()
			}
			if tc.wantMsg == "" && tc.wantField == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error naming %q, got none", tc.wantField)
			}
			if k := fault.KindOf(err); k != fault.InvalidInput {
				t.Errorf("kind = %s, want %s", k, fault.InvalidInput)
			}
			if got := fault.FieldOf(err); !strings.HasPrefix(got, tc.wantField) || (tc.wantField != "" && got == "") {
				t.Errorf("field = %q, want %q", got, tc.wantField)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("message %q lacks %q", err.Error(), tc.wantMsg)
			}
		})
	}
}

func TestAliasesLandInTheirFields(t *testing.T) {
	tl, err := Decode([]byte(`{"name":"p","type":"api_call","api_call":{"method":"POST","url":"http://x.test","json_":{"a":1},"schema_":{"s":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if tl.APICall.JSON["a"] != float64(1) || tl.APICall.Schema["s"] != true {
		t.Fatalf("aliases not decoded: %+v", tl.APICall)
	}
	out, _ := json.Marshal(tl)
	if !strings.Contains(string(out), `"json":{"a":1}`) {
		t.Fatalf("re-encoded with the wrong name: %s", out)
	}
}

func TestRoundTrip(t *testing.T) {
	body := `{"name":"t","type":"api_call","description":"d","api_call":{"method":"GET","url":"http://x.test","params":"a=1","follow_redirects":true,"include_response_content":false,"timeout":5}}`
	tl, err := Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(tl)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Decode(out)
	if err != nil {
		t.Fatalf("re-decoding %s: %v", out, err)
	}
	if *again.APICall.FollowRedirects != true || *again.APICall.IncludeResponseContent != false || string(again.APICall.Params) != `"a=1"` {
		t.Fatalf("lost fields: %s", out)
	}
}

func TestCallID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewCallID()
		if len(id) != 29 || !strings.HasPrefix(id, "call_") || strings.ContainsAny(id, "=+/") {
			t.Fatalf("bad id %q", id)
		}
		if !ValidCallID(id) {
			t.Fatalf("ValidCallID(%q) = false", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "call_", "call_abc", "call_" + strings.Repeat("=", 24), "xall_" + strings.Repeat("A", 24), "call_" + strings.Repeat("A", 25)} {
		if ValidCallID(bad) {
			t.Errorf("ValidCallID(%q) = true", bad)
		}
	}
}

func TestNewCall(t *testing.T) {
	id := NewCallID()
	fn := &Tool{Name: "f", Type: TypeFunction, Function: &FunctionDef{}}
	c := NewCall(fn, id, map[string]any{"x": 1})
	got, _ := json.Marshal(c)
	if want := `{"id":"` + id + `","type":"function","function":{"name":"f","arguments":{"x":1}}}`; string(got) != want {
		t.Fatalf("function envelope\n got %s\nwant %s", got, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}

	sys := &Tool{Name: "s", Type: TypeSystem, System: &SystemDef{Resource: "agent", Operation: "list", Arguments: map[string]any{"limit": 5, "offset": 0}}}
	c = NewCall(sys, id, map[string]any{"limit": 10})
	got, _ = json.Marshal(c)
	if want := `{"id":"` + id + `","type":"system","system":{"name":"s","resource":"agent","operation":"list","resource_id":null,"subresource":null,"arguments":{"limit":10,"offset":0}}}`; string(got) != want {
		t.Fatalf("system envelope (call overrides definition defaults; the tool's name beside Julep's fields)\n got %s\nwant %s", got, want)
	}
	if sys.System.Arguments["limit"] != 5 {
		t.Fatal("NewCall changed the definition's arguments")
	}
	if r := ResultOf(&c, []any{}); r.Name != "s" {
		t.Fatalf("system result name = %q, want the tool's, as for every other type", r.Name)
	}
	julep := c // a call in Julep's shape, without the tool's name, is named by its operation
	julep.System = &SystemCall{Resource: "agent", Subresource: optional("tool"), Operation: "list"}
	if r := ErrorResult(&julep, "Sinew.NotFound", "no"); r.Name != "agent.tool.list" {
		t.Fatalf("a nameless system call's result name = %q, want agent.tool.list", r.Name)
	}

	c = NewCall(&Tool{Name: "i", Type: TypeIntegration, Integration: &IntegrationDef{Provider: "dummy"}}, id, nil)
	if c.Arguments() == nil || c.Name() != "i" {
		t.Fatalf("nil arguments should become {}: %+v", c)
	}
	c.Type = TypeAPICall
	if err := c.Validate(); err == nil || fault.FieldOf(err) != "call.type" {
		t.Fatalf("mismatched envelope accepted: %v", err)
	}
}
