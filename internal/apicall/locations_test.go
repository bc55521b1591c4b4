package apicall_test

import (
	"net/http"
	"testing"

	"sinew/internal/apicall"
	"sinew/internal/fault"
	"sinew/internal/tool"
)

// located is a tool whose arguments go to every place argument_locations knows: a path
// placeholder, query parameters (one renamed, since "page[size]" is no argument name a model API
// accepts), a header, a cookie and the JSON body.
func located(e *env) *tool.APICallDef {
	def := e.def("POST", "/items/{item-id}/notes")
	def.ParamsSchema = &tool.ParameterSchema{Type: "object", Properties: map[string]tool.PropertyDefinition{
		"item-id":   {Type: "integer"},
		"page_size": {Type: "integer"},
		"tags":      {Type: "array", Items: &tool.PropertyDefinition{Type: "string"}},
		"X-Trace":   {Type: "string"},
		"session":   {Type: "string"},
		"body": {Type: "object", Properties: map[string]tool.PropertyDefinition{
			"text": {Type: "string"}, "pinned": {Type: "boolean"},
		}, Required: []string{"text"}},
	}, Required: []string{"item-id", "body"}}
	def.ArgumentLocations = map[string]tool.ArgumentLocation{
		"item-id": {In: tool.InPath}, "page_size": {In: tool.InQuery, Name: "page[size]"}, "tags": {In: tool.InQuery},
		"X-Trace": {In: tool.InHeader}, "session": {In: tool.InCookie}, "body": {In: tool.InBody},
	}
	return def
}

func TestArgumentLocationsPlaceEachArgument(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(echo))
	seen := echoed(t, e, located(e), apicall.Input{Call: map[string]any{
		"item-id": 7, "page_size": 20, "tags": []any{"a", "b"}, "X-Trace": "t-1", "session": "s1",
		"body": map[string]any{"text": "hello", "pinned": true},
	}})
	for k, want := range map[string]string{"path": "/items/7/notes", "raw_query": "page%5Bsize%5D=20&tags=a&tags=b", "content_type": "application/json"} {
		if seen[k] != want {
			t.Errorf("%s = %v, want %s", k, seen[k], want)
		}
	}
	if got := header(seen, "X-Trace"); got != "t-1" {
		t.Errorf("X-Trace = %q", got)
	}
	if got := header(seen, "Cookie"); got != "session=s1" {
		t.Errorf("Cookie = %q", got)
	}
	if got := unb64(t, seen["body"]); got != `{"pinned":true,"text":"hello"}` {
		t.Errorf("body = %s", got)
	}
}

func TestArgumentLocationsRefuseWhatCannotBePlaced(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(echo))
	ok := map[string]any{"item-id": 7, "body": map[string]any{"text": "x"}}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range ok {
			m[a] = b
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name  string
		call  map[string]any
		field string
	}{
		{"a required argument missing", map[string]any{"body": map[string]any{"text": "x"}}, "item-id"},
		{"the body's own required field missing", with("body", map[string]any{"pinned": true}), "body.text"},
		{"a wrong type", with("page_size", "many"), "page_size"},
		{"an object in the query", with("tags", map[string]any{"a": 1}), "tags"},
		{"an array in a cookie", with("session", []any{"a"}), "session"},
		{"the body given twice", with("json", map[string]any{"text": "y"}), "body"},
		{"a query parameter given twice", with("params", map[string]any{"page[size]": 1}), "page_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "a query parameter given twice" {
				tt.call["page_size"] = 2
			}
			_, err := e.ex.Execute(t.Context(), located(e), apicall.Input{Call: tt.call})
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tt.field {
				t.Fatalf("err = %v (field %q), want InvalidInput on %q", err, fault.FieldOf(err), tt.field)
			}
		})
	}
}

// A form argument is the whole form body; setup from the metadata still wins over the call.
func TestArgumentLocationsFormAndSetup(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(echo))
	def := e.def("POST", "/messages")
	def.ParamsSchema = &tool.ParameterSchema{Type: "object", Properties: map[string]tool.PropertyDefinition{
		"body": {Type: "object", Properties: map[string]tool.PropertyDefinition{"To": {Type: "string"}}}}}
	def.ArgumentLocations = map[string]tool.ArgumentLocation{"body": {In: tool.InForm}}
	seen := echoed(t, e, def, apicall.Input{Call: map[string]any{"body": map[string]any{"To": "+1555", "Tag": []any{"x", "y"}}},
		MetaSetup: map[string]any{"headers": map[string]any{"Authorization": "Basic abc"}}})
	if seen["content_type"] != "application/x-www-form-urlencoded" || header(seen, "Authorization") != "Basic abc" {
		t.Fatalf("saw %v", seen)
	}
	form, _ := seen["form"].(map[string]any)
	if to, _ := form["To"].([]any); len(to) != 1 || to[0] != "+1555" {
		t.Fatalf("form = %v", form)
	}
}
