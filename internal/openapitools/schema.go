package openapitools

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"sinew/internal/tool"
)

// Bounds of the schema shown to the model for one tool: a body can nest without end (a recursive
// schema) or hold thousands of properties, and the model reads all of it on every turn. Past the
// bounds a value keeps its type and loses its inner detail, which the API's own checks still cover.
const (
	maxDepth       = 6    // levels of nesting below an argument
	maxNodes       = 400  // properties and items described, per tool
	maxDescription = 1000 // characters of one property's description
)

// converter turns OpenAPI schemas into the PropertyDefinitions of a params_schema. One per tool:
// the node budget is the tool's.
type converter struct {
	nodes int
	stack []*openapi3.Schema // the schemas being converted, to stop at a recursion
}

// flat is a schema with its allOf merged in.
type flat struct {
	types    []string
	format   string
	desc     string
	enum     []any
	props    map[string]*openapi3.SchemaRef
	required []string
	items    *openapi3.SchemaRef
	alts     []*openapi3.SchemaRef // oneOf and anyOf
	readOnly bool
}

// flatten merges s with its allOf members, recursively; a member already being merged (a
// recursion through allOf) is left out.
func flatten(s *openapi3.Schema, seen []*openapi3.Schema) flat {
	f := flat{props: map[string]*openapi3.SchemaRef{}}
	if s == nil || slices.Contains(seen, s) {
		return f
	}
	seen = append(seen, s)
	if s.Type != nil {
		f.types = append(f.types, s.Type.Slice()...)
	}
	f.format, f.desc, f.enum, f.items, f.readOnly = s.Format, s.Description, s.Enum, s.Items, s.ReadOnly
	if s.Const != nil && len(f.enum) == 0 {
		f.enum = []any{s.Const}
	}
	maps.Copy(f.props, s.Properties)
	f.required = append(f.required, s.Required...)
	f.alts = append(append(f.alts, s.OneOf...), s.AnyOf...)
	for _, m := range s.AllOf {
		if m == nil || m.Value == nil {
			continue
		}
		g := flatten(m.Value, seen)
		if len(f.types) == 0 {
			f.types = g.types
		}
		f.format = or(f.format, g.format)
		f.desc = or(f.desc, g.desc)
		if len(f.enum) == 0 {
			f.enum = g.enum
		}
		if f.items == nil {
			f.items = g.items
		}
		for k, v := range g.props {
			if _, ok := f.props[k]; !ok {
				f.props[k] = v
			}
		}
		f.required = append(f.required, g.required...)
		f.alts = append(f.alts, g.alts...)
	}
	return f
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// mainType is the schema's type for the model: the first that is not "null" (3.1 writes a nullable
// string as ["string", "null"]), else what its keywords imply.
func (f flat) mainType() string {
	for _, t := range f.types {
		if t != "null" {
			return t
		}
	}
	switch {
	case len(f.props) > 0:
		return "object"
	case f.items != nil:
		return "array"
	}
	return ""
}

// isBinary reports a schema for raw bytes, which a JSON argument cannot carry.
func isBinary(ref *openapi3.SchemaRef) bool {
	if ref == nil || ref.Value == nil {
		return false
	}
	f := flatten(ref.Value, nil)
	return f.mainType() == "string" && f.format == "binary"
}

// property converts ref; desc, when set, replaces the schema's own description (a parameter's).
func (c *converter) property(ref *openapi3.SchemaRef, desc string, depth int) tool.PropertyDefinition {
	if ref == nil || ref.Value == nil {
		return tool.PropertyDefinition{Description: clip(desc)}
	}
	s := ref.Value
	f := flatten(s, nil)
	p := tool.PropertyDefinition{Type: f.mainType(), Format: f.format, Description: clip(or(desc, f.desc))}
	c.nodes++
	if p.Type == "" && len(f.alts) > 0 {
		c.alternatives(&p, f.alts, depth)
	}
	c.enum(&p, f.enum)
	if slices.Contains(c.stack, s) {
		p.Description = clip(strings.TrimSpace(p.Description + " (recursive: described above)"))
		return p
	}
	if depth >= maxDepth || c.nodes >= maxNodes {
		return p
	}
	c.stack = append(c.stack, s)
	defer func() { c.stack = c.stack[:len(c.stack)-1] }()
	switch p.Type {
	case "object":
		p.Properties, p.Required = c.object(f, depth)
	case "array":
		if f.items != nil {
			it := c.property(f.items, "", depth+1)
			p.Items = &it
		}
	}
	return p
}

// object converts an object's properties, leaving out the read-only ones (a request does not
// send them).
func (c *converter) object(f flat, depth int) (map[string]tool.PropertyDefinition, []string) {
	if len(f.props) == 0 {
		return nil, nil
	}
	props := map[string]tool.PropertyDefinition{}
	for _, k := range slices.Sorted(maps.Keys(f.props)) {
		ref := f.props[k]
		if ref != nil && ref.Value != nil && ref.Value.ReadOnly {
			continue
		}
		if c.nodes >= maxNodes {
			break
		}
		props[k] = c.property(ref, "", depth+1)
	}
	var req []string
	for _, r := range f.required {
		if _, ok := props[r]; ok && !slices.Contains(req, r) {
			req = append(req, r)
		}
	}
	return props, req
}

// alternatives describes a oneOf or anyOf without a type of its own: its members' common type
// when they agree (objects merged, none of their properties required, since which member applies
// is the caller's choice), else no type, with the types named in the description.
func (c *converter) alternatives(p *tool.PropertyDefinition, alts []*openapi3.SchemaRef, depth int) {
	var types []string
	merged := flat{props: map[string]*openapi3.SchemaRef{}}
	for _, a := range alts {
		if a == nil || a.Value == nil {
			continue
		}
		g := flatten(a.Value, nil)
		if t := g.mainType(); t != "" && !slices.Contains(types, t) {
			types = append(types, t)
		}
		for k, v := range g.props {
			if _, ok := merged.props[k]; !ok {
				merged.props[k] = v
			}
		}
		if merged.items == nil {
			merged.items = g.items
		}
	}
	if len(types) != 1 {
		if len(types) > 1 {
			p.Description = clip(strings.TrimSpace(p.Description + " (one of: " + strings.Join(types, ", ") + ")"))
		}
		return
	}
	p.Type = types[0]
	if p.Type == "object" && depth < maxDepth && c.nodes < maxNodes {
		p.Properties, _ = c.object(merged, depth)
	}
	if p.Type == "array" && merged.items != nil && depth < maxDepth && c.nodes < maxNodes {
		it := c.property(merged.items, "", depth+1)
		p.Items = &it
	}
}

// enum keeps an enum of strings as one; the model APIs' schemas and sinew's ParameterSchema take
// enums of strings, so other values are named in the description instead.
func (c *converter) enum(p *tool.PropertyDefinition, enum []any) {
	if len(enum) == 0 {
		return
	}
	var strs []string
	var shown []string
	for _, e := range enum {
		if s, ok := e.(string); ok {
			strs = append(strs, s)
		}
		shown = append(shown, fmt.Sprint(e))
	}
	if len(strs) == len(enum) && (p.Type == "string" || p.Type == "") {
		p.Enum = strs
		return
	}
	p.Description = clip(strings.TrimSpace(p.Description + " (one of: " + strings.Join(shown, ", ") + ")"))
}

// clip bounds a description, on a character boundary.
func clip(s string) string { return truncate(strings.TrimSpace(s), maxDescription) }

// truncate cuts s to at most n bytes on a character boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
