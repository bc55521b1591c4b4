// Package oaschema checks an OpenAPI 3.1 document in tests.
//
// It checks the document against the OpenAPI Initiative's schema for it, and each schema within it
// as JSON Schema 2020-12 whose references to #/components/schemas/ resolve within the document.
package oaschema

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// LoadSchema reads and resolves a JSON Schema file (the OpenAPI 3.1 schema).
func LoadSchema(path string) (*jsonschema.Resolved, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return s.Resolve(nil)
}

// Decode decodes a JSON document into the generic form the validator takes.
func Decode(raw []byte) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Doc is an OpenAPI document whose schemas can be compiled in place.
type Doc struct {
	doc  map[string]any
	defs map[string]any // the component schemas, their references rewritten to #/$defs/
}

const componentRef = "#/components/schemas/"

// NewDoc takes a decoded OpenAPI document.
func NewDoc(doc map[string]any) *Doc {
	d := &Doc{doc: doc, defs: map[string]any{}}
	if comps, ok := doc["components"].(map[string]any); ok {
		if schemas, ok := comps["schemas"].(map[string]any); ok {
			for name, s := range schemas {
				d.defs[name] = rewrite(s)
			}
		}
	}
	return d
}

// Compile resolves the schema at the JSON pointer ptr ("/paths/~1agents/post/...") in the
// document. The validator resolves references only through schema keywords, so the component
// schemas travel with it as $defs, and #/components/schemas/X becomes #/$defs/X.
func (d *Doc) Compile(ptr string) (*jsonschema.Resolved, error) {
	target, err := lookup(d.doc, ptr)
	if err != nil {
		return nil, err
	}
	m, ok := rewrite(target).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a schema object", ptr)
	}
	if _, has := m["$defs"]; has {
		return nil, fmt.Errorf("%s has $defs of its own", ptr)
	}
	m["$defs"] = d.defs
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", ptr, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ptr, err)
	}
	return r, nil
}

// rewrite deep-copies v with component references pointed at $defs.
func rewrite(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" && strings.HasPrefix(s, componentRef) {
				out[k] = "#/$defs/" + strings.TrimPrefix(s, componentRef)
				continue
			}
			out[k] = rewrite(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rewrite(e)
		}
		return out
	}
	return v
}

func lookup(v any, ptr string) (any, error) {
	if ptr == "" {
		return v, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("%q is not a JSON pointer", ptr)
	}
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	for _, tok := range strings.Split(ptr[1:], "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: %q is not under an object", ptr, tok)
		}
		if v, ok = m[unescape.Replace(tok)]; !ok {
			return nil, fmt.Errorf("%s: no %q", ptr, tok)
		}
	}
	return v, nil
}
