// Package toolfmt presents sinew's tools to a model as functions, each by the tool's
// own name (Julep names integrations "<provider>_<method>", so two tools of one method collide):
//   - function: its parameters;
//   - integration: its method's argument schema from the provider registry, or its params_schema
//     when it has one (an imported MCP tool); the description is the tool's own, else the method's;
//   - api_call: its params_schema as it is, as Julep shows it: the request's parameters (the
//     executor takes them at the top level of the call as well as in params and path), or, when
//     every property names a request part, the request parts the call may carry;
//   - system: the handler's parameters, through an injected func; the description is the tool's
//     own, else the handler's.
//
// Pre-applied arguments keep the schema honest, by what the merge does with them:
//   - an integration's definition arguments (and the metadata args the caller passes in) win over
//     the call's, so the model cannot change them: those properties are removed, from properties
//     and from required;
//   - a system tool's definition arguments, and an api_call definition's request parts, are
//     defaults the call overrides: those properties stay, are no longer required, and a system
//     default is shown as the property's "default"; a system definition's resource_id likewise
//     makes <resource>_id optional.
//
// A tool with no parameters gets the empty object schema, which both model APIs accept.
package toolfmt

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/integrations/schemas"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/tool"
)

// Integrations gives a provider method's model-facing schema (schemas.Catalogue and
// integrations.Registry do).
type Integrations interface {
	ToolSchema(provider, method, name string) (schemas.Function, error)
}

// SystemSchema gives a system handler's parameters (a JSON Schema object) and description:
// system.Parameters and system.Description, injected so this package does not depend on the system
// executor.
type SystemSchema func(resource, subresource, operation string) (params map[string]any, description string, err error)

// Formatter formats tools.
type Formatter struct {
	Integrations Integrations
	System       SystemSchema
}

// Formatted is a tool with the function the model sees for it.
type Formatted struct {
	Tool     *tool.Tool
	Function llm.Function
}

// Format formats one tool. metaArgs are the x-integration-args the merge will add for it (nil for
// none); they are fixed like the definition's arguments.
func (f *Formatter) Format(t *tool.Tool, metaArgs map[string]any) (llm.Function, error) {
	fn := llm.Function{Name: t.Name, Description: t.Description}
	switch t.Type {
	case tool.TypeFunction:
		if t.Function != nil && t.Function.Parameters != nil {
			fn.Parameters = clone(t.Function.Parameters)
		}
	case tool.TypeIntegration:
		d := t.Integration
		if d.ParamsSchema != nil {
			fn.Parameters = clone(d.ParamsSchema)
			break
		}
		if f.Integrations == nil {
			return fn, fault.New(fault.Internal, "toolfmt: no integration registry to format tool %q", t.Name)
		}
		s, err := f.Integrations.ToolSchema(d.Provider, d.Method, t.Name)
		if err != nil {
			return fn, fault.Wrap(fault.KindOf(err), err, "tool %q names integration %s %s, which has no schema", t.Name, d.Provider, d.Method)
		}
		if fn.Description == "" {
			fn.Description = s.Description
		}
		fn.Parameters = s.Parameters
		for _, fixed := range []map[string]any{d.Arguments, metaArgs} {
			for k := range fixed {
				removeProperty(fn.Parameters, k)
			}
		}
	case tool.TypeAPICall:
		if ps := t.APICall.ParamsSchema; ps != nil {
			m, err := asMap(ps)
			if err != nil {
				return fn, fault.Wrap(fault.Internal, err, "tool %q: params_schema cannot be encoded", t.Name)
			}
			fn.Parameters = m
			defaults := apiCallDefaults(t.APICall)
			if ps.DescribesParameters() {
				defaults = defParamNames(t.APICall)
			}
			for _, part := range defaults {
				unrequire(fn.Parameters, part)
			}
		}
	case tool.TypeSystem:
		d := t.System
		if f.System == nil {
			return fn, fault.New(fault.Internal, "toolfmt: no system schema source to format tool %q", t.Name)
		}
		params, desc, err := f.System(d.Resource, d.Subresource, d.Operation)
		if err != nil {
			return fn, fault.Wrap(fault.KindOf(err), err, "tool %q names system call %s.%s, which has no schema", t.Name, d.Resource, d.Operation)
		}
		if fn.Description == "" {
			fn.Description = desc
		}
		fn.Parameters = clone(params)
		for k, v := range d.Arguments {
			unrequire(fn.Parameters, k)
			if p, ok := property(fn.Parameters, k); ok {
				p["default"] = jsonv.Clone(v)
			}
		}
		if d.ResourceID != "" {
			unrequire(fn.Parameters, d.Resource+"_id")
		}
	default:
		return fn, fault.Invalid("type", "tool %q has type %q, which sinew cannot show to a model", t.Name, t.Type)
	}
	if fn.Parameters == nil {
		fn.Parameters = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return fn, nil
}

// FormatAll formats a toolset. Names must be unique: the model calls tools by name. metaArgs maps
// a tool's name to its x-integration-args (may be nil).
func (f *Formatter) FormatAll(tools []*tool.Tool, metaArgs map[string]map[string]any) ([]Formatted, error) {
	out := make([]Formatted, 0, len(tools))
	seen := make(map[string]int, len(tools))
	for i, t := range tools {
		if t == nil {
			return nil, fault.Invalid(fmt.Sprintf("tools[%d]", i), "tools[%d] is null", i)
		}
		if j, dup := seen[t.Name]; dup {
			return nil, fault.Invalid(fmt.Sprintf("tools[%d].name", i), "tools[%d] and tools[%d] are both named %q: a model calls tools by name", j, i, t.Name)
		}
		seen[t.Name] = i
		fn, err := f.Format(t, metaArgs[t.Name])
		if err != nil {
			return nil, err
		}
		out = append(out, Formatted{Tool: t, Function: fn})
	}
	return out, nil
}

// Functions gives the functions of a formatted toolset.
func Functions(fs []Formatted) []llm.Function {
	out := make([]llm.Function, len(fs))
	for i, f := range fs {
		out[i] = f.Function
	}
	return out
}

// apiCallDefaults lists the request parts an api_call definition already supplies.
func apiCallDefaults(d *tool.APICallDef) []string {
	var parts []string
	if len(d.Headers) > 0 {
		parts = append(parts, "headers")
	}
	if d.Content != nil {
		parts = append(parts, "content")
	}
	if len(d.Data) > 0 {
		parts = append(parts, "data")
	}
	if len(d.Files) > 0 {
		parts = append(parts, "files")
	}
	if len(d.JSON) > 0 {
		parts = append(parts, "json", "json_")
	}
	if len(d.Cookies) > 0 {
		parts = append(parts, "cookies")
	}
	if len(d.Params) > 0 && string(d.Params) != "null" {
		parts = append(parts, "params")
	}
	if d.Timeout != nil {
		parts = append(parts, "timeout")
	}
	return parts
}

// defParamNames lists the query parameters an api_call definition already supplies (its params, an
// object or a query string).
func defParamNames(d *tool.APICallDef) []string {
	v, err := jsonv.Decode(d.Params)
	if err != nil {
		return nil
	}
	switch p := v.(type) {
	case map[string]any:
		return slices.Collect(maps.Keys(p))
	case string:
		q, _ := url.ParseQuery(strings.TrimPrefix(p, "?"))
		return slices.Collect(maps.Keys(q))
	}
	return nil
}

func removeProperty(schema map[string]any, name string) {
	if props, ok := schema["properties"].(map[string]any); ok {
		delete(props, name)
	}
	unrequire(schema, name)
}

func unrequire(schema map[string]any, name string) {
	switch req := schema["required"].(type) {
	case []any:
		req = slices.DeleteFunc(slices.Clone(req), func(v any) bool { return v == name })
		if len(req) == 0 {
			delete(schema, "required")
		} else {
			schema["required"] = req
		}
	case []string:
		req = slices.DeleteFunc(slices.Clone(req), func(v string) bool { return v == name })
		if len(req) == 0 {
			delete(schema, "required")
		} else {
			schema["required"] = req
		}
	}
}

func property(schema map[string]any, name string) (map[string]any, bool) {
	props, _ := schema["properties"].(map[string]any)
	p, ok := props[name].(map[string]any)
	return p, ok
}

func clone(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return jsonv.Clone(m).(map[string]any)
}

// asMap turns a typed schema into its JSON object form.
func asMap(v any) (map[string]any, error) {
	raw, err := jsonv.Encode(v)
	if err != nil {
		return nil, err
	}
	d, err := jsonv.Decode(raw)
	if err != nil {
		return nil, err
	}
	m, _ := d.(map[string]any)
	return m, nil
}
