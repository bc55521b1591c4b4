package apicall

import (
	"maps"
	"slices"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/tool"
)

// liftParameters reads a call made the way a model reads a params_schema that describes the
// request's parameters (tool.ParameterSchema.DescribesParameters): the model sees the schema as it
// is, as Julep shows it, and writes the parameters at the top level ({"q": "Paris"}). A top-level
// key that is a property of the schema and not a request part moves to path when the URL has a
// {placeholder} of that name, else to params. Every other key is left for MergeParts to judge; the
// documented form ({"params": {"q": "Paris"}}) needs no lifting. The call is not changed.
func liftParameters(def *tool.APICallDef, call map[string]any) (map[string]any, error) {
	if def == nil || !def.ParamsSchema.DescribesParameters() {
		return call, nil
	}
	names := placeholderSet(def.URL)
	var out map[string]any
	for _, k := range sortedKeys(call) {
		if _, declared := def.ParamsSchema.Properties[k]; !declared || slices.Contains(tool.APICallParts, k) || k == "url" || k == "method" {
			continue
		}
		if out == nil {
			out = maps.Clone(call)
		}
		part := PartParams
		if names[k] {
			part = PartPath
		}
		m, err := partObject(part, out[part])
		if err != nil {
			return nil, err
		}
		if _, both := m[k]; both {
			return nil, fault.Invalid(k, "%s is given both at the top level and in %s; give it once", k, part)
		}
		m[k] = call[k]
		out[part] = m
		delete(out, k)
	}
	if out == nil {
		return call, nil
	}
	return out, nil
}

// partObject gives a copy of a params or path part as an object to add to (a params query string
// parsed).
func partObject(part string, v any) (map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return maps.Clone(x), nil
	case string:
		if part == PartParams {
			return parseQuery(part, x)
		}
	}
	return nil, wrongType(part, "an object", v)
}

func placeholderSet(rawURL string) map[string]bool {
	t, err := tool.ParseURLTemplate(rawURL)
	if err != nil {
		return nil // prepare refuses the URL with its own message
	}
	set := map[string]bool{}
	for _, n := range t.Names() {
		set[n] = true
	}
	return set
}

// checkParamsSchema checks a call against params_schema. When the schema describes the request's
// parameters, it checks the query parameters and the path's placeholder values; otherwise the call's
// request parts. Either way: the types and enums of what the call itself gives, nothing undeclared
// when additionalProperties is false, and every required property present once the layers are merged
// (one from the definition or the metadata counts).
func checkParamsSchema(def *tool.APICallDef, call, merged map[string]any) error {
	if def == nil {
		return nil
	}
	schema, err := paramsSchemaMap(def.ParamsSchema)
	if err != nil || schema == nil {
		return err
	}
	given, present := orEmpty(call), merged
	where := "the arguments"
	if def.ParamsSchema.DescribesParameters() {
		names := placeholderSet(def.URL)
		given, present = parameters(call, names), parameters(merged, names)
		where = "the request's parameters (params and the URL's {placeholders} in path)"
	}
	required, _ := schema["required"].([]any)
	delete(schema, "required")
	if msg := validate(schema, jsonv.Normalize(jsonv.Clone(given)), ""); msg != "" {
		field, _, _ := strings.Cut(msg, " ")
		return fault.Invalid(field, "%s do not match the tool's params_schema: %s", where, msg)
	}
	for _, r := range required {
		name, _ := r.(string)
		key := name
		if key == PartJSONAlias && !def.ParamsSchema.DescribesParameters() {
			key = PartJSON
		}
		if _, ok := present[key]; !ok {
			return fault.Invalid(name, "%s do not match the tool's params_schema: %s is required", where, name)
		}
	}
	return nil
}

// parameters gives the request's parameters of a layer: its query parameters, and the path values
// of the URL's placeholders (names).
func parameters(layer map[string]any, names map[string]bool) map[string]any {
	out := map[string]any{}
	if p, ok := layer[PartParams]; ok {
		if s, isStr := p.(string); isStr {
			p, _ = parseQuery(PartParams, s)
		}
		if m, ok := p.(map[string]any); ok {
			maps.Copy(out, m)
		}
	}
	if path, ok := layer[PartPath].(map[string]any); ok {
		for k, v := range path {
			if names[k] {
				out[k] = v
			}
		}
	}
	return out
}
