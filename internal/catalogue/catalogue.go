// Package catalogue serves the integration catalogue over the HTTP API (the providers rows).
//
// It serves every provider with its setup and methods, one provider, and the model-facing function
// schema of a method, from the same registry the integration Lambda runs.
package catalogue

import (
	"context"
	"net/http"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/integrations/schemas"
	"sinew/internal/tool"
)

// Source is what the routes read: the generated catalogue (schemas.Catalogue), which the api
// function serves without linking the providers, or a registry that has them
// (*integrations.Registry, all.Lazy).
type Source interface {
	Catalogue() []schemas.ProviderEntry
	ProviderInfo(name string) (schemas.ProviderEntry, error)
	ToolSchema(provider, method, name string) (schemas.Function, error)
}

// Register adds GET /integrations, GET /integrations/{provider}, GET /integrations/{provider}/tool
// and GET /integrations/{provider}/{method}/tool.
func Register(rt *httpapi.Router, reg Source) {
	h := handlers{reg}
	provider := httpapi.Param{Name: "provider", In: "path", Required: true, Description: "a provider name, e.g. email or wikipedia",
		Schema: map[string]any{"type": "string", "enum": anySlice(tool.Providers)}}
	method := httpapi.Param{Name: "method", In: "path", Required: true, Description: "one of the provider's methods",
		Schema: map[string]any{"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,39}$"}}
	entry := map[string]any{"type": "object", "required": []any{"provider", "setup", "methods", "info"},
		"properties": map[string]any{
			"provider": map[string]any{"type": "string"},
			"setup":    map[string]any{"type": []any{"object", "null"}, "description": "the JSON Schema of the provider's setup, or null when it takes none"},
			"methods": map[string]any{"type": "array", "items": map[string]any{"type": "object",
				"properties": map[string]any{
					"method":      map[string]any{"type": "string"},
					"description": map[string]any{"type": "string"},
					"arguments":   map[string]any{"type": "object", "description": "the JSON Schema the merged arguments are validated against"},
					"output":      map[string]any{"type": "object"},
				}}},
			"info": map[string]any{"type": "object", "description": "always an object (Julep sends a JSON string here)"},
		}}
	rt.Schema("IntegrationProvider", entry)
	rt.Schema("FunctionTool", map[string]any{"type": "object", "required": []any{"type", "function"},
		"properties": map[string]any{
			"type": map[string]any{"const": "function"},
			"function": map[string]any{"type": "object", "required": []any{"name", "parameters"}, "properties": map[string]any{
				"name": map[string]any{"type": "string"}, "description": map[string]any{"type": "string"}, "parameters": map[string]any{"type": "object"},
			}},
		}})
	notFound := httpapi.Resp{Description: "no such provider or method"}
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/integrations", Handler: h.list,
		Op: httpapi.Operation{ID: "listIntegrations", Tags: []string{"integrations"}, Summary: "Every integration provider, its setup and methods",
			Responses: map[int]httpapi.Resp{http.StatusOK: {Description: "the providers, by name", Schema: map[string]any{"type": "array", "items": httpapi.Ref("IntegrationProvider")}}}}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/integrations/{provider}", Handler: h.get,
		Op: httpapi.Operation{ID: "getIntegration", Tags: []string{"integrations"}, Summary: "One integration provider",
			Params:    []httpapi.Param{provider},
			Responses: map[int]httpapi.Resp{http.StatusOK: {Description: "the provider", Schema: httpapi.Ref("IntegrationProvider")}, http.StatusNotFound: notFound}}})
	toolResp := map[int]httpapi.Resp{http.StatusOK: {Description: "the method as an OpenAI-style function tool named <provider>_<method>", Schema: httpapi.Ref("FunctionTool")}, http.StatusNotFound: notFound}
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/integrations/{provider}/tool", Handler: h.tool,
		Op: httpapi.Operation{ID: "getIntegrationTool", Tags: []string{"integrations"}, Summary: "The model-facing function of the provider's default (first) method",
			Params: []httpapi.Param{provider}, Responses: toolResp}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/integrations/{provider}/{method}/tool", Handler: h.tool,
		Op: httpapi.Operation{ID: "getIntegrationMethodTool", Tags: []string{"integrations"}, Summary: "The model-facing function of one method",
			Params: []httpapi.Param{provider, method}, Responses: toolResp}})
}

type handlers struct{ reg Source }

func (h handlers) list(context.Context, *httpapi.Request) (*httpapi.Response, error) {
	return httpapi.OK(h.reg.Catalogue()), nil
}

func (h handlers) get(_ context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	if err := checkName("provider", r.Param("provider")); err != nil {
		return nil, err
	}
	e, err := h.reg.ProviderInfo(r.Param("provider"))
	if err != nil {
		return nil, err
	}
	return httpapi.OK(e), nil
}

func (h handlers) tool(_ context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	for _, f := range []string{"provider", "method"} {
		if v := r.Param(f); v != "" || f == "provider" {
			if err := checkName(f, v); err != nil {
				return nil, err
			}
		}
	}
	fn, err := h.reg.ToolSchema(r.Param("provider"), r.Param("method"), "")
	if err != nil {
		return nil, err
	}
	return httpapi.OK(fn.AsTool()), nil
}

// checkName applies Julep's rule for these path parameters: an identifier of at most 40 characters.
func checkName(field, v string) error {
	if !tool.ValidName(v) {
		return fault.Invalid(field, "%s %q is not a valid name: letters, digits and underscores, not starting with a digit, at most 40 characters", field, v)
	}
	return nil
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
