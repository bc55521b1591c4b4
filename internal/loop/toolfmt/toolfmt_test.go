package toolfmt_test

import (
	"encoding/json"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/all"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/tool"
)

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// systemSchemas stands in for system.Parameters/Description.
func systemSchemas(resource, subresource, operation string) (map[string]any, string, error) {
	if resource != "agent" || operation != "list" && operation != "get" {
		return nil, "", fault.Invalid("system", "system call %s.%s is not supported", resource, operation)
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"agent_id": map[string]any{"type": "string", "format": "uuid"},
			"limit":    map[string]any{"type": "integer"},
		},
		"required": []any{"agent_id", "limit"},
	}, "List or get agents", nil
}

func formatter(t *testing.T) *toolfmt.Formatter {
	t.Helper()
	reg, err := all.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &toolfmt.Formatter{Integrations: reg, System: systemSchemas}
}

func TestFormat(t *testing.T) {
	f := formatter(t)
	str := "application/json"
	cases := []struct {
		name     string
		tool     *tool.Tool
		meta     map[string]any
		wantDesc string
		want     string // the parameters' JSON
	}{
		{
			name:     "function by its parameters",
			tool:     &tool.Tool{Name: "ask", Type: tool.TypeFunction, Description: "Ask the user", Function: &tool.FunctionDef{Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}},
			wantDesc: "Ask the user",
			want:     `{"properties":{"q":{"type":"string"}},"type":"object"}`,
		},
		{
			name: "function without parameters",
			tool: &tool.Tool{Name: "ping", Type: tool.TypeFunction, Function: &tool.FunctionDef{}},
			want: `{"properties":{},"type":"object"}`,
		},
		{
			name:     "integration by its method's schema, under its own name",
			tool:     &tool.Tool{Name: "forecast", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "weather"}},
			wantDesc: "", // checked below: the method's
			want:     "",
		},
		{
			name:     "integration arguments fixed by the definition are not shown",
			tool:     &tool.Tool{Name: "london", Type: tool.TypeIntegration, Description: "London's weather", Integration: &tool.IntegrationDef{Provider: "weather", Method: "get", Arguments: map[string]any{"location": "London,GB"}}},
			wantDesc: "London's weather",
			want:     `{"additionalProperties":false,"properties":{},"type":"object"}`,
		},
		{
			name:     "integration arguments fixed by metadata are not shown",
			tool:     &tool.Tool{Name: "here", Type: tool.TypeIntegration, Description: "Here", Integration: &tool.IntegrationDef{Provider: "weather"}},
			meta:     map[string]any{"location": "Oslo,NO"},
			wantDesc: "Here",
			want:     `{"additionalProperties":false,"properties":{},"type":"object"}`,
		},
		{
			name: "api_call by params_schema; parts the definition supplies are optional",
			tool: &tool.Tool{Name: "post", Type: tool.TypeAPICall, Description: "Post it", APICall: &tool.APICallDef{
				Method: "POST", URL: "https://example.com/", Headers: map[string]string{"Content-Type": str},
				ParamsSchema: &tool.ParameterSchema{Type: "object", Properties: map[string]tool.PropertyDefinition{
					"json": {Type: "object"}, "headers": {Type: "object"},
				}, Required: []string{"json", "headers"}},
			}},
			wantDesc: "Post it",
			want:     `{"properties":{"headers":{"type":"object"},"json":{"type":"object"}},"required":["json"],"type":"object"}`,
		},
		{
			name: "api_call whose params_schema describes the query parameters (Julep's weather_api): shown as it is, the definition's params optional",
			tool: &tool.Tool{Name: "weather_api", Type: tool.TypeAPICall, APICall: &tool.APICallDef{
				Method: "GET", URL: "https://api.openweathermap.org/data/2.5/weather", Params: []byte(`"appid=k"`),
				ParamsSchema: &tool.ParameterSchema{Type: "object", Properties: map[string]tool.PropertyDefinition{
					"q": {Type: "string"}, "appid": {Type: "string"}, "headers": {Type: "string"},
				}, Required: []string{"q", "appid", "headers"}},
			}},
			want: `{"properties":{"appid":{"type":"string"},"headers":{"type":"string"},"q":{"type":"string"}},"required":["q","headers"],"type":"object"}`,
		},
		{
			name:     "api_call without params_schema",
			tool:     &tool.Tool{Name: "get", Type: tool.TypeAPICall, APICall: &tool.APICallDef{Method: "GET", URL: "https://example.com/"}},
			want:     `{"properties":{},"type":"object"}`,
			wantDesc: "",
		},
		{
			name:     "system by the handler's parameters; definition defaults shown and optional",
			tool:     &tool.Tool{Name: "agents", Type: tool.TypeSystem, System: &tool.SystemDef{Resource: "agent", Operation: "list", Arguments: map[string]any{"limit": int64(5)}}},
			wantDesc: "List or get agents",
			want:     `{"properties":{"agent_id":{"format":"uuid","type":"string"},"limit":{"default":5,"type":"integer"}},"required":["agent_id"],"type":"object"}`,
		},
		{
			name:     "system resource_id makes the resource's id optional",
			tool:     &tool.Tool{Name: "me", Type: tool.TypeSystem, Description: "This agent", System: &tool.SystemDef{Resource: "agent", Operation: "get", ResourceID: "0190f0a0-0000-7000-8000-000000000000"}},
			wantDesc: "This agent",
			want:     `{"properties":{"agent_id":{"format":"uuid","type":"string"},"limit":{"type":"integer"}},"required":["limit"],"type":"object"}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fn, err := f.Format(tc.tool, tc.meta)
			if err != nil {
				t.Fatal(err)
			}
			if fn.Name != tc.tool.Name {
				t.Errorf("name = %q, want the tool's own %q", fn.Name, tc.tool.Name)
			}
			if tc.tool.Name == "forecast" {
				if fn.Description == "" || js(fn.Parameters["required"]) != `["location"]` {
					t.Errorf("forecast = %s", js(fn))
				}
				return
			}
			if fn.Description != tc.wantDesc {
				t.Errorf("description = %q, want %q", fn.Description, tc.wantDesc)
			}
			if got := js(fn.Parameters); got != tc.want {
				t.Errorf("parameters = %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestFormatDoesNotChangeItsSources(t *testing.T) {
	shared := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}, "required": []any{"a"}}
	before := js(shared)
	f := &toolfmt.Formatter{System: func(string, string, string) (map[string]any, string, error) { return shared, "", nil }}
	fn, err := f.Format(&tool.Tool{Name: "x", Type: tool.TypeSystem, System: &tool.SystemDef{Resource: "agent", Operation: "list", Arguments: map[string]any{"a": "y"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if js(fn.Parameters) == before {
		t.Fatalf("the default should have changed the output: %s", js(fn.Parameters))
	}
	fn2, err := f.Format(&tool.Tool{Name: "y", Type: tool.TypeFunction, Function: &tool.FunctionDef{Parameters: shared}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fn2.Parameters["mutated"] = true
	if js(shared) != before {
		t.Errorf("formatting changed its source: %s", js(shared))
	}
}

func TestFormatErrors(t *testing.T) {
	f := formatter(t)
	_, err := f.FormatAll([]*tool.Tool{
		{Name: "a", Type: tool.TypeFunction, Function: &tool.FunctionDef{}},
		{Name: "a", Type: tool.TypeFunction, Function: &tool.FunctionDef{}},
	}, nil)
	if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != "tools[1].name" {
		t.Errorf("duplicate names: %v (field %q)", err, fault.FieldOf(err))
	}
	_, err = f.Format(&tool.Tool{Name: "x", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "nope"}}, nil)
	if !fault.Is(err, fault.NotFound) {
		t.Errorf("unknown provider: %v", err)
	}
	_, err = f.Format(&tool.Tool{Name: "x", Type: tool.TypeSystem, System: &tool.SystemDef{Resource: "job", Operation: "delete"}}, nil)
	if !fault.Is(err, fault.InvalidInput) {
		t.Errorf("unknown system call: %v", err)
	}
	_, err = f.Format(&tool.Tool{Name: "x", Type: "computer_20241022"}, nil)
	if !fault.Is(err, fault.InvalidInput) {
		t.Errorf("unknown type: %v", err)
	}
}
