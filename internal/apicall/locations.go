package apicall

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/tool"
)

// placeArguments moves each argument the definition's argument_locations names from the top level
// of the call to its request part: path, params, headers, cookies, json or data. The call is not
// changed. A null argument counts as not given; one that is also given in its part, under the
// same name, is refused rather than guessed between.
func placeArguments(def *tool.APICallDef, call map[string]any) (map[string]any, error) {
	if def == nil || len(def.ArgumentLocations) == 0 {
		return call, nil
	}
	var out map[string]any
	for _, arg := range slices.Sorted(maps.Keys(def.ArgumentLocations)) {
		v, given := call[arg]
		if !given {
			continue
		}
		if out == nil {
			out = maps.Clone(call)
		}
		delete(out, arg)
		if v == nil {
			continue
		}
		loc := def.ArgumentLocations[arg]
		if err := place(out, arg, loc, jsonv.Normalize(jsonv.Clone(v))); err != nil {
			return nil, err
		}
	}
	if out == nil {
		return call, nil
	}
	return out, nil
}

// partOf names the request part a location fills.
var partOf = map[string]string{tool.InPath: PartPath, tool.InQuery: PartParams, tool.InHeader: PartHeaders,
	tool.InCookie: PartCookies, tool.InBody: PartJSON, tool.InForm: PartData}

func place(out map[string]any, arg string, loc tool.ArgumentLocation, v any) error {
	part := partOf[loc.In]
	switch loc.In {
	case tool.InBody:
		if _, both := out[PartJSON]; both {
			return fault.Invalid(arg, "%s is the request's JSON body, which json gives too; give it once", arg)
		}
		out[PartJSON] = v
		return nil
	case tool.InForm:
		if _, ok := v.(map[string]any); !ok {
			return wrongType(arg, "an object of form fields", v)
		}
		if _, both := out[PartData]; both {
			return fault.Invalid(arg, "%s is the request's form body, which data gives too; give it once", arg)
		}
		out[PartData] = v
		return nil
	}
	if err := checkScalar(arg, loc.In, v); err != nil {
		return err
	}
	m, err := partObject(part, out[part])
	if err != nil {
		return err
	}
	name := loc.Target(arg)
	for k := range m {
		if k == name || (loc.In == tool.InHeader && http.CanonicalHeaderKey(k) == http.CanonicalHeaderKey(name)) {
			return fault.Invalid(arg, "%s fills %s %s, which %s gives too; give it once", arg, loc.In, name, part)
		}
	}
	m[name] = v
	out[part] = m
	return nil
}

// checkScalar refuses what a path, query, header or cookie value cannot be, naming the argument.
func checkScalar(arg, in string, v any) error {
	isScalar := func(x any) bool {
		switch x.(type) {
		case string, bool, int64, float64:
			return true
		}
		return false
	}
	if isScalar(v) {
		return nil
	}
	if a, ok := v.([]any); ok && (in == tool.InQuery || in == tool.InHeader) && !slices.ContainsFunc(a, func(e any) bool { return !isScalar(e) }) {
		return nil
	}
	if in == tool.InQuery || in == tool.InHeader {
		return wrongType(arg, "a string, number, boolean or an array of them (it goes in the "+in+")", v)
	}
	return wrongType(arg, "a string, number or boolean (it goes in the "+in+")", v)
}

// checkArguments checks a call against params_schema: a call to a tool with argument_locations
// by its arguments as given (raw), any other by checkParamsSchema.
func checkArguments(def *tool.APICallDef, raw, call, merged map[string]any) error {
	if def == nil || len(def.ArgumentLocations) == 0 {
		return checkParamsSchema(def, call, merged)
	}
	schema, err := paramsSchemaMap(def.ParamsSchema)
	if err != nil || schema == nil {
		return err
	}
	required, _ := schema["required"].([]any)
	delete(schema, "required")
	given := map[string]any{}
	for k, v := range raw {
		if _, declared := def.ParamsSchema.Properties[k]; declared && v != nil {
			given[k] = v
		}
	}
	if msg := validate(schema, jsonv.Normalize(jsonv.Clone(given)), ""); msg != "" {
		field, _, _ := strings.Cut(msg, " ")
		return fault.Invalid(field, "the arguments do not match the tool's params_schema: %s", msg)
	}
	for _, r := range required {
		name, _ := r.(string)
		if _, ok := given[name]; ok || presentAt(def, merged, name) {
			continue
		}
		return fault.Invalid(name, "the arguments do not match the tool's params_schema: %s is required", name)
	}
	return nil
}

// presentAt reports whether the merged parts already hold what argument arg fills (from the
// definition or the metadata).
func presentAt(def *tool.APICallDef, merged map[string]any, arg string) bool {
	loc, ok := def.ArgumentLocations[arg]
	if !ok {
		_, inParams := asMap(merged[PartParams])[arg]
		_, inPath := asMap(merged[PartPath])[arg]
		return inParams || inPath
	}
	part := partOf[loc.In]
	if loc.In == tool.InBody || loc.In == tool.InForm {
		_, ok := merged[part]
		return ok
	}
	m := asMap(merged[part])
	if loc.In == tool.InHeader {
		_, ok := m[http.CanonicalHeaderKey(loc.Target(arg))]
		return ok
	}
	_, ok = m[loc.Target(arg)]
	return ok
}
