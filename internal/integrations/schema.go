package integrations

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

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
// of them are required.
type compiledSchema struct {
	schema   *sjs.Schema
	defaults map[string]any
	required map[string]bool
}

// schemaFor reflects t into a JSON Schema (returned as JSON) and, when loc is not empty, compiles it
// for validation under that location.
func schemaFor(t reflect.Type, loc string) ([]byte, *compiledSchema, error) {
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
	if loc == "" {
		return raw, nil, nil
	}
	compiled, err := compile(raw, loc)
	if err != nil {
		return nil, nil, err
	}
	cs := &compiledSchema{schema: compiled, defaults: map[string]any{}, required: map[string]bool{}}
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

// compile compiles the JSON Schema raw under location loc.
func compile(raw []byte, loc string) (*sjs.Schema, error) {
	doc, err := sjs.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		return nil, err
	}
	c := sjs.NewCompiler()
	c.DefaultDraft(sjs.Draft2020)
	c.AssertFormat() // "format": "uri" and the like are rules here, not annotations
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// CheckArguments validates a call's arguments against the schema a client was shown for the tool
// (toolfmt's): a failure is InvalidInput naming the first offending argument, worded as the
// executors word theirs. A schema that does not compile is an Internal error.
func CheckArguments(schema map[string]any, args map[string]any) error {
	raw, err := json.Marshal(schema)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "the tool's schema cannot be encoded")
	}
	compiled, err := compile(raw, "sinew:/tool/arguments")
	if err != nil {
		return fault.Wrap(fault.Internal, err, "the tool's schema does not compile")
	}
	return (&compiledSchema{schema: compiled}).validate("arguments", args)
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

var printer = message.NewPrinter(language.English)

// validate checks v against the schema; a failure is InvalidInput whose Field is the path of the
// first offending value (root "setup" or "arguments", then dotted names and [index]es).
func (cs *compiledSchema) validate(root string, v map[string]any) error {
	err := cs.schema.Validate(map[string]any(v))
	if err == nil {
		return nil
	}
	var ve *sjs.ValidationError
	if !errors.As(err, &ve) {
		return fault.Wrap(fault.InvalidInput, err, "%s could not be validated", root)
	}
	type problem struct{ field, msg string }
	var probs []problem
	for _, leaf := range leaves(ve) {
		path := fieldPath(root, leaf.InstanceLocation)
		switch k := leaf.ErrorKind.(type) {
		case *kind.Required:
			for _, name := range k.Missing {
				probs = append(probs, problem{path + "." + name, path + "." + name + " is required"})
			}
		case *kind.AdditionalProperties:
			for _, name := range k.Properties {
				probs = append(probs, problem{path + "." + name, path + "." + name + " is not a known field"})
			}
		default:
			probs = append(probs, problem{path, path + " " + describe(leaf.ErrorKind)})
		}
	}
	if len(probs) == 0 {
		return fault.Invalid(root, "%s is invalid: %s", root, ve.ErrorKind.LocalizedString(printer))
	}
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].field < probs[j].field })
	msgs := make([]string, 0, 3)
	for i, p := range probs {
		if i == 3 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(probs)-3))
			break
		}
		msgs = append(msgs, p.msg)
	}
	return fault.Invalid(probs[0].field, "%s", strings.Join(msgs, "; "))
}

// describe says what rule a value broke without repeating the value: setup values are secrets, and
// an argument may be long.
func describe(k sjs.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("must be of type %s, not %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			b, _ := json.Marshal(w)
			want[i] = string(b)
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.Const:
		b, _ := json.Marshal(k.Want)
		return "must be " + string(b)
	case *kind.Pattern:
		return fmt.Sprintf("must match the pattern %s", k.Want)
	case *kind.Format:
		return fmt.Sprintf("must be a valid %s", k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d characters long", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long", k.Want)
	case *kind.Minimum:
		return "must be at least " + k.Want.RatString()
	case *kind.Maximum:
		return "must be at most " + k.Want.RatString()
	case *kind.ExclusiveMinimum:
		return "must be greater than " + k.Want.RatString()
	case *kind.ExclusiveMaximum:
		return "must be less than " + k.Want.RatString()
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items", k.Want)
	case *kind.FalseSchema:
		return "is not allowed"
	case *kind.AnyOf, *kind.OneOf:
		return "does not match any of the allowed forms"
	}
	return "is invalid (" + strings.Join(k.KeywordPath(), "/") + ")"
}

// leaves are the innermost errors: the ones that say what is wrong, not which keyword grouped them.
func leaves(e *sjs.ValidationError) []*sjs.ValidationError {
	if len(e.Causes) == 0 {
		return []*sjs.ValidationError{e}
	}
	var out []*sjs.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func fieldPath(root string, loc []string) string {
	var b strings.Builder
	b.WriteString(root)
	for _, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		b.WriteString("." + tok)
	}
	return b.String()
}
