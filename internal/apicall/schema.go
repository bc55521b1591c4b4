package apicall

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"sinew/internal/jsonv"
	"sinew/internal/tool"
)

// validate checks v against the JSON Schema subset the tool model uses (type, properties, required,
// additionalProperties, enum, items) and gives the first violation, naming the path from root, or "".
// It is deliberately small: params_schema is Julep's ParameterSchema, and an api_call's response
// schema rarely needs more; keywords it does not know are ignored, never guessed at.
func validate(schema map[string]any, v any, path string) string {
	if schema == nil {
		return ""
	}
	if t, ok := schema["type"]; ok {
		var types []string
		switch x := t.(type) {
		case string:
			types = []string{x}
		case []any:
			for _, e := range x {
				if s, ok := e.(string); ok {
					types = append(types, s)
				}
			}
		}
		if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return hasType(t, v) }) {
			return fmt.Sprintf("%s must be %s, got %s", path, strings.Join(types, " or "), jsonv.TypeName(v))
		}
	}
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		if !slices.ContainsFunc(enum, func(e any) bool { return jsonv.Equal(e, v) }) {
			return fmt.Sprintf("%s must be one of %s, got %s", path, jsonv.EncodeString(enum), jsonv.EncodeString(v))
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					if _, present := x[name]; !present {
						return fmt.Sprintf("%s is required", join(path, name))
					}
				}
			}
		}
		for _, k := range sortedKeys(x) {
			sub, known := props[k].(map[string]any)
			if !known {
				if ap, ok := schema["additionalProperties"].(bool); ok && !ap {
					return fmt.Sprintf("%s is not allowed (additionalProperties is false)", join(path, k))
				}
				continue
			}
			if msg := validate(sub, x[k], join(path, k)); msg != "" {
				return msg
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, e := range x {
				if msg := validate(items, e, fmt.Sprintf("%s[%d]", path, i)); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func hasType(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := jsonv.ToFloat(v)
		return ok
	case "integer":
		f, ok := jsonv.ToFloat(v)
		return ok && f == math.Trunc(f)
	}
	return true // a type this subset does not know constrains nothing
}

// paramsSchemaMap gives params_schema in the map form validate reads.
func paramsSchemaMap(ps *tool.ParameterSchema) (map[string]any, error) {
	if ps == nil {
		return nil, nil
	}
	b, err := json.Marshal(ps)
	if err != nil {
		return nil, fmt.Errorf("encoding params_schema: %w", err)
	}
	v, err := jsonv.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decoding params_schema: %w", err)
	}
	m, _ := v.(map[string]any)
	return m, nil
}
