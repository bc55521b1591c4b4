package tool_test

import (
	"testing"

	"sinew/internal/fault"
	"sinew/internal/tool"
)

func TestArgumentLocationsValidate(t *testing.T) {
	props := map[string]tool.PropertyDefinition{"id": {Type: "string"}, "q": {Type: "string"}, "b": {Type: "object"}, "f": {Type: "object"}}
	tests := []struct {
		name  string
		locs  map[string]tool.ArgumentLocation
		field string // "" when valid
	}{
		{"every place", map[string]tool.ArgumentLocation{"id": {In: "path"}, "q": {In: "query", Name: "filter[q]"}, "b": {In: "body"}}, ""},
		{"a header and a cookie", map[string]tool.ArgumentLocation{"id": {In: "path"}, "q": {In: "header", Name: "X-Q"}, "b": {In: "cookie"}}, ""},
		{"an unknown place", map[string]tool.ArgumentLocation{"q": {In: "matrix"}}, "api_call.argument_locations.q.in"},
		{"no such placeholder", map[string]tool.ArgumentLocation{"q": {In: "path"}}, "api_call.argument_locations.q.name"},
		{"two bodies", map[string]tool.ArgumentLocation{"b": {In: "body"}, "f": {In: "form"}}, "api_call.argument_locations.f"},
		{"a body with a name", map[string]tool.ArgumentLocation{"b": {In: "body", Name: "x"}}, "api_call.argument_locations.b.name"},
		{"the Host header", map[string]tool.ArgumentLocation{"q": {In: "header", Name: "host"}}, "api_call.argument_locations.q.name"},
		{"a bad header name", map[string]tool.ArgumentLocation{"q": {In: "header", Name: "a b"}}, "api_call.argument_locations.q.name"},
		{"an undeclared argument", map[string]tool.ArgumentLocation{"zz": {In: "query"}}, "api_call.argument_locations.zz"},
		{"a request part's name", map[string]tool.ArgumentLocation{"params": {In: "query"}}, "api_call.argument_locations.params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := props
			if tt.name == "a request part's name" {
				p = map[string]tool.PropertyDefinition{"params": {}}
			}
			tl := tool.Tool{Name: "t", Type: tool.TypeAPICall, APICall: &tool.APICallDef{Method: "GET", URL: "https://api.example.com/x/{id}",
				ParamsSchema: &tool.ParameterSchema{Type: "object", Properties: p}, ArgumentLocations: tt.locs}}
			err := tl.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tt.field {
				t.Fatalf("err = %v (field %q), want InvalidInput on %q", err, fault.FieldOf(err), tt.field)
			}
		})
	}
}
