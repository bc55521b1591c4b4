package resources_test

import (
	"testing"
)

const fnTool = `{"name":"lookup","type":"function","description":"find","function":{"parameters":{"type":"object"}}}`

func TestAgentTools(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(dev1, "a")
	base := "/agents/" + agent + "/tools"
	tl := e.must(201, dev1, "POST", base, fnTool)
	id := tl.str("id")
	if tl.str("name") != "lookup" || tl.str("type") != "function" {
		t.Fatalf("created %s", tl.raw)
	}
	// Duplicate name: 409 (Julep answers 500).
	if d := e.must(409, dev1, "POST", base, fnTool); d.errType() != "Sinew.Conflict" {
		t.Errorf("duplicate: %s", d.raw)
	}
	e.must(201, dev1, "POST", base, `{"name":"sys","type":"system","system":{"resource":"agent","operation":"list"}}`)
	l := e.must(200, dev1, "GET", base+"?limit=1", "")
	if l.str("items", 0, "name") != "lookup" || l.str("next_cursor") == "" {
		t.Errorf("list page 1 %s", l.raw)
	}
	l2 := e.must(200, dev1, "GET", base+"?limit=1&cursor="+l.str("next_cursor"), "")
	if l2.str("items", 0, "name") != "sys" || l2.get("next_cursor") != nil {
		t.Errorf("list page 2 %s", l2.raw)
	}
	// A cursor of one list does not open another.
	e.must(400, dev1, "GET", "/agents?cursor="+l.str("next_cursor"), "")

	e.must(200, dev1, "GET", base+"/"+id, "")

	// PUT replaces; renaming onto a taken name is a 409.
	p := e.must(200, dev1, "PUT", base+"/"+id, `{"name":"lookup2","type":"api_call","api_call":{"method":"GET","url":"https://example.com/x"}}`)
	if p.str("type") != "api_call" || p.get("function") != nil || p.get("description") != nil {
		t.Errorf("put gave %s", p.raw)
	}
	e.must(409, dev1, "PUT", base+"/"+id, `{"name":"sys","type":"api_call","api_call":{"method":"GET","url":"https://example.com/x"}}`)

	// PATCH, Julep's rules.
	tests := []struct {
		name, patch string
		status      int
		field       string
		check       func(a answer) bool
	}{
		{"merge spec", `{"api_call":{"headers":{"X-A":"1"}}}`, 200, "",
			func(a answer) bool {
				return a.str("api_call", "url") == "https://example.com/x" && a.str("api_call", "headers", "X-A") == "1"
			}},
		{"description only", `{"description":"d"}`, 200, "", func(a answer) bool { return a.str("description") == "d" && a.str("type") == "api_call" }},
		{"two specs", `{"function":{},"api_call":{"method":"GET"}}`, 400, "function,api_call", nil},
		{"spec against patch type", `{"type":"system","function":{}}`, 400, "function", nil},
		{"spec against tool type", `{"function":{}}`, 400, "function", nil},
		{"type without its spec", `{"type":"function"}`, 400, "function", nil},
		{"change type", `{"type":"function","function":{"parameters":{"type":"object"}}}`, 200, "",
			func(a answer) bool { return a.str("type") == "function" && a.get("api_call") == nil }},
		{"unknown field", `{"functon":{}}`, 400, "functon", nil},
		{"unknown nested", `{"function":{"paramters":{}}}`, 400, "function.paramters", nil},
		{"wrong type", `{"name":5}`, 400, "name", nil},
		{"bad name", `{"name":"no spaces"}`, 400, "name", nil},
		{"rename taken", `{"name":"sys"}`, 409, "", nil},
		{"not an object", `[1]`, 400, "body", nil},
		{"malformed", `{"name":`, 400, "body", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := e.do(dev1, "PATCH", base+"/"+id, tc.patch)
			if a.status != tc.status {
				t.Fatalf("%d %s, want %d", a.status, a.raw, tc.status)
			}
			if tc.field != "" && a.errField() != tc.field {
				t.Errorf("field %q, want %q (%s)", a.errField(), tc.field, a.raw)
			}
			if tc.check != nil && !tc.check(a) {
				t.Errorf("answer %s", a.raw)
			}
		})
	}

	// Bad tool bodies on create name the field.
	for _, tc := range []struct{ body, field string }{
		{`{"name":"x","type":"function","function":{},"system":{"resource":"agent","operation":"get"}}`, "function,system"},
		{`{"name":"x","type":"system","function":{}}`, "function"},
		{`{"name":"x","type":"bash_20241022"}`, "type"},
		{`{"name":"x","type":"integration","integration":{"provider":"nope"}}`, "integration.provider"},
		{`{"name":"x","type":"api_call","api_call":{"method":"GET","url":"ftp://x"}}`, "api_call.url"},
		{`{"name":"x","type":"function","function":{"timeout_seconds":"1"}}`, "function.timeout_seconds"},
		{`{"name":"x","type":"function","function":{},"extra":1}`, "extra"},
	} {
		if a := e.do(dev1, "POST", base, tc.body); a.status != 400 || a.errField() != tc.field {
			t.Errorf("POST %s: %d %s, want 400 naming %s", tc.body, a.status, a.raw, tc.field)
		}
	}

	e.must(204, dev1, "DELETE", base+"/"+id, "")
	e.must(404, dev1, "GET", base+"/"+id, "")
	// The name is free again.
	e.must(201, dev1, "POST", base, fnTool)
}
