package integrations

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/invopop/jsonschema"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// reflector generates one self-contained schema per type: no $defs or $ref (models take inline
// schemas best), no $id, and additionalProperties false on structs, so a misspelt field is named
// instead of silently dropped.
var reflector = &jsonschema.Reflector{
	Anonymous:      true,
	DoNotReference: true,
	ExpandedStruct: true,
}

// objectSchemas replaces the boolean schema true (what an `any` reflects to) by its equivalent {}
// under items and properties: some model APIs accept only object schemas there.
func objectSchemas(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch {
			case k == "items" && e == true:
				x[k] = map[string]any{}
			case k == "properties":
				if props, ok := e.(map[string]any); ok {
					for name, p := range props {
						if p == true {
							props[name] = map[string]any{}
						} else {
							objectSchemas(p)
						}
					}
				}
			default:
				objectSchemas(e)
			}
		}
	case []any:
		for _, e := range x {
			objectSchemas(e)
		}
	}
	return v
}

// compiledSchema is a schema ready to validate, with its top-level properties' defaults and which
// of them are required. The validator's form is built on the first validation: a registry that only
// lists its schemas (the catalogue) never pays for it.
type compiledSchema struct {
	resolve  func() (*resolvedSchema, error)
	defaults map[string]any
	required map[string]bool
}

// schemaFor reflects t into a JSON Schema (returned as JSON) and, when validate is set, readies it
// for validation.
func schemaFor(t reflect.Type, validate bool) ([]byte, *compiledSchema, error) {
	s := reflector.ReflectFromType(t)
	s.Version = "" // the model and the catalogue need no $schema
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, nil, err
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil, nil, err
	}
	if raw, err = json.Marshal(objectSchemas(generic)); err != nil {
		return nil, nil, err
	}
	if !validate {
		return raw, nil, nil
	}
	cs := &compiledSchema{
		resolve:  sync.OnceValues(func() (*resolvedSchema, error) { return resolveSchema(raw) }),
		defaults: map[string]any{},
		required: map[string]bool{},
	}
	var top struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, nil, err
	}
	for name, p := range top.Properties {
		if len(p.Default) > 0 {
			v, err := jsonv.Decode(p.Default)
			if err != nil {
				return nil, nil, fmt.Errorf("default of %s: %w", name, err)
			}
			cs.defaults[name] = v
		}
	}
	for _, name := range top.Required {
		cs.required[name] = true
	}
	return raw, cs, nil
}

// CheckArguments validates a call's arguments against the schema a client was shown for the tool
// (toolfmt's): a failure is InvalidInput naming the first offending argument, worded as the
// executors word theirs. A schema that does not resolve is an Internal error.
func CheckArguments(schema map[string]any, args map[string]any) error {
	raw, err := json.Marshal(schema)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "the tool's schema cannot be encoded")
	}
	rs, err := resolveSchema(raw)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "the tool's schema does not compile")
	}
	return rs.validate("arguments", args)
}

// prepare returns a copy of v with the defaults of absent top-level properties filled in. A null
// value of an optional property counts as absent, as pydantic's `X | None = None` fields take it.
func (cs *compiledSchema) prepare(v map[string]any) map[string]any {
	out := make(map[string]any, len(v)+len(cs.defaults))
	for k, x := range v {
		if x == nil && !cs.required[k] {
			continue
		}
		out[k] = x
	}
	for k, d := range cs.defaults {
		if _, ok := out[k]; !ok {
			out[k] = jsonv.Normalize(cloneJSON(d))
		}
	}
	return out
}

// cloneJSON deep-copies a JSON value so a default is never shared between calls.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneJSON(e)
		}
		return s
	default:
		return v
	}
}

// validate checks v against the schema; a failure is InvalidInput whose Field is the path of the
// first offending value (root "setup" or "arguments", then dotted names and [index]es).
func (cs *compiledSchema) validate(root string, v map[string]any) error {
	rs, err := cs.resolve()
	if err != nil {
		return fault.Wrap(fault.Internal, err, "the %s schema does not compile", root)
	}
	return rs.validate(root, v)
}
