package integrations

import (
	"encoding/json"

	"sinew/internal/integrations/schemas"
)

// The catalogue's types are package schemas', which serves the same catalogue as generated data to
// the functions that run no provider.
type (
	Info          = schemas.Info
	MethodInfo    = schemas.MethodInfo
	ProviderEntry = schemas.ProviderEntry
	Function      = schemas.Function
)

// Catalogue is GET /integrations: every provider, alphabetically.
func (r *Registry) Catalogue() []ProviderEntry {
	names := r.Names()
	out := make([]ProviderEntry, 0, len(names))
	for _, n := range names {
		e, err := r.ProviderInfo(n)
		if err == nil {
			out = append(out, e)
		}
	}
	return out
}

// ProviderInfo is GET /integrations/{provider}. An unknown provider is fault.NotFound (the route's
// 404 "Integration not found").
func (r *Registry) ProviderInfo(name string) (ProviderEntry, error) {
	r.mu.RLock()
	e := r.providers[name]
	r.mu.RUnlock()
	if e == nil {
		return ProviderEntry{}, schemas.ProviderNotFound(name)
	}
	p := e.p
	out := ProviderEntry{
		Provider: p.Name,
		Setup:    decodeSchema(e.setupSchema),
		Info:     Info{URL: p.URL, Docs: p.Docs, Icon: p.Icon, FriendlyName: p.FriendlyName},
	}
	for _, m := range e.methods {
		out.Methods = append(out.Methods, MethodInfo{
			Method:      m.m.Name,
			Description: m.m.Description,
			Arguments:   decodeSchema(m.argsSchema),
			Output:      decodeSchema(m.outSchema),
		})
	}
	return out, nil
}

// ToolSchema is the function a model sees for a provider method ("" = the default method): the
// method's description and its argument schema. name is the tool's own name (sinew shows tools by
// their names); an empty name gives Julep's "<provider>_<method>", as GET
// /integrations/{provider}[/{method}]/tool answers. Unknown provider or method: fault.NotFound.
func (r *Registry) ToolSchema(provider, method, name string) (Function, error) {
	e, m, err := r.lookup(provider, method)
	if err != nil {
		return Function{}, schemas.AsNotFound(err)
	}
	if name == "" {
		name = e.p.Name + "_" + m.m.Name
	}
	return Function{Name: name, Description: m.m.Description, Parameters: decodeSchema(m.argsSchema)}, nil
}

// ArgumentsSchema is the JSON Schema of a method's arguments ("" = the default method).
func (r *Registry) ArgumentsSchema(provider, method string) (map[string]any, error) {
	_, m, err := r.lookup(provider, method)
	if err != nil {
		return nil, err
	}
	return decodeSchema(m.argsSchema), nil
}

// OutputSchema is the JSON Schema of a method's output ("" = the default method).
func (r *Registry) OutputSchema(provider, method string) (map[string]any, error) {
	_, m, err := r.lookup(provider, method)
	if err != nil {
		return nil, err
	}
	return decodeSchema(m.outSchema), nil
}

// decodeSchema gives a fresh copy of a stored schema, so callers may change what they get.
func decodeSchema(raw []byte) map[string]any {
	if raw == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil // schemas are produced by json.Marshal at registration
	}
	return m
}
