// Package schemas is the integration catalogue as data.
//
// It holds every provider's info and the JSON Schemas of its setup, arguments and outputs,
// generated from the provider registry (go generate) into catalogue.json and embedded. The
// functions that only show schemas (the catalogue routes, the tools a model is shown) read it
// instead of linking every provider, its client libraries and a schema compiler; the integration
// function, which runs providers, keeps the registry. A test checks that the file is what the
// registry generates now.
package schemas

import (
	"sort"
	"strings"

	"sinew/internal/fault"
)

// Info is a provider's catalogue info. Julep's GET /integrations/{provider} sends it as a JSON
// string; sinew always sends the object.
type Info struct {
	URL          string `json:"url"`
	Docs         string `json:"docs"`
	Icon         string `json:"icon"`
	FriendlyName string `json:"friendly_name"`
}

// MethodInfo describes one method: its argument and output schemas.
type MethodInfo struct {
	Method      string         `json:"method"`
	Description string         `json:"description"`
	Arguments   map[string]any `json:"arguments"`
	Output      map[string]any `json:"output"`
}

// ProviderEntry is one provider in the catalogue; Setup is null for a provider
// without setup.
type ProviderEntry struct {
	Provider string         `json:"provider"`
	Setup    map[string]any `json:"setup"`
	Methods  []MethodInfo   `json:"methods"`
	Info     Info           `json:"info"`
}

// Function is the model-facing function schema of a method (OpenAI style). The HTTP route wraps it
// as {"type":"function","function":...}.
type Function struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// AsTool wraps the function as an OpenAI tool, {"type":"function","function":...}: the body of GET
// /integrations/{provider}[/{method}]/tool.
func (f Function) AsTool() map[string]any {
	return map[string]any{"type": "function", "function": f}
}

// UnknownProvider is the InvalidInput error for a provider name not among known.
func UnknownProvider(name string, known []string) error {
	known = append([]string(nil), known...)
	sort.Strings(known)
	return fault.Invalid("provider", "unknown integration provider %q; known providers: %s", name, strings.Join(known, ", "))
}

// UnknownMethod is the InvalidInput error for a method the provider lacks; methods in its order.
func UnknownMethod(provider, method string, methods []string) error {
	return fault.Invalid("method", "unknown method %q for integration provider %q; its methods: %s", method, provider, strings.Join(methods, ", "))
}

// ProviderNotFound is GET /integrations/{provider}'s error for an unknown provider.
func ProviderNotFound(name string) error {
	return fault.New(fault.NotFound, "integration provider %q not found", name)
}

// AsNotFound turns a lookup's InvalidInput into the NotFound the catalogue routes answer, keeping
// its field and message.
func AsNotFound(err error) error {
	return &fault.Error{Kind: fault.NotFound, Field: fault.FieldOf(err), Msg: fault.Message(err)}
}
