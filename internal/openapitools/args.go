package openapitools

import (
	"fmt"
	"maps"
	"mime"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"sinew/internal/tool"
)

// args are one tool's arguments as they are being made.
type args struct {
	conv     converter
	props    map[string]tool.PropertyDefinition
	required []string
	locs     map[string]tool.ArgumentLocation
}

func newArgs() *args {
	return &args{props: map[string]tool.PropertyDefinition{}, locs: map[string]tool.ArgumentLocation{}}
}

func (a *args) schema() *tool.ParameterSchema {
	return &tool.ParameterSchema{Type: "object", Properties: a.props, Required: a.required}
}

// add declares an argument for the parameter name at in, under a name the model APIs accept and
// no other argument of the tool has: the parameter's own when it can be, else made from it and,
// on a clash, the place it goes.
func (a *args) add(name, in string, p tool.PropertyDefinition, required bool) {
	arg := argName(name)
	if !a.free(arg) {
		arg = argName(arg + "_" + in)
	}
	for i := 2; !a.free(arg); i++ {
		arg = argName(fmt.Sprintf("%s_%s_%d", name, in, i))
	}
	loc := tool.ArgumentLocation{In: in}
	if in != tool.InBody && in != tool.InForm && name != arg {
		loc.Name = name
	}
	a.props[arg], a.locs[arg] = p, loc
	if required {
		a.required = append(a.required, arg)
	}
}

func (a *args) free(arg string) bool {
	_, taken := a.props[arg]
	return !taken && tool.ValidArgumentName(arg)
}

// argName maps a parameter's name into ^[A-Za-z0-9_.-]{1,64}$, keeping its end when it is longer.
func argName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c == '_' || c == '.' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			b[i] = '_'
		}
	}
	s := string(b)
	if s == "" {
		s = "_"
	}
	if len(s) > 64 {
		s = s[len(s)-64:]
	}
	if !tool.ValidArgumentName(s) && len(s) < 64 {
		s += "_"
	}
	return s
}

// ignoredHeaders are header parameters the OpenAPI specification says to ignore: the request's
// own machinery sets them.
var ignoredHeaders = []string{"accept", "content-type", "authorization"}

// parameters declares the operation's parameters (the path item's, overridden by the operation's
// own of the same name and place) as arguments, or says which cannot be one.
func (a *args) parameters(o opRef, bound map[string]bool) string {
	var list []*openapi3.Parameter
	index := map[string]int{}
	for _, refs := range []openapi3.Parameters{o.item.Parameters, o.op.Parameters} {
		for _, r := range refs {
			if r == nil || r.Value == nil {
				continue
			}
			k := r.Value.In + ":" + r.Value.Name
			if i, ok := index[k]; ok {
				list[i] = r.Value
				continue
			}
			index[k] = len(list)
			list = append(list, r.Value)
		}
	}
	for _, p := range list {
		if p.In == "header" && slices.Contains(ignoredHeaders, strings.ToLower(p.Name)) || bound[p.In+":"+strings.ToLower(p.Name)] {
			continue
		}
		if why := serializable(p); why != "" {
			return why
		}
		prop := a.conv.property(p.Schema, p.Description, 0)
		a.add(p.Name, p.In, prop, p.Required || p.In == "path")
	}
	for _, name := range placeholders(o.path) {
		if _, ok := index["path:"+name]; !ok {
			return fmt.Sprintf("its path has {%s}, but it declares no path parameter %s", name, name)
		}
	}
	return ""
}

// serializable says why a parameter cannot be sent from an argument, or "": api_call sends a
// scalar in the path, query, a header or a cookie, and an array as a repeated query parameter or
// header; other styles would need serializing the document describes but a request part cannot
// express.
func serializable(p *openapi3.Parameter) string {
	what := fmt.Sprintf("%s parameter %s", p.In, p.Name)
	if p.Schema == nil {
		if len(p.Content) > 0 {
			return what + " is described by content (a serialized value), which api_call cannot send"
		}
		return ""
	}
	typ := flatten(p.Schema.Value, nil).mainType()
	explode := p.Explode == nil || *p.Explode
	switch p.In {
	case "path":
		if (p.Style != "" && p.Style != "simple") || typ == "array" || typ == "object" {
			return what + " is an array, an object or of style " + p.Style + ", which api_call cannot put in a path"
		}
	case "query":
		if p.Style != "" && p.Style != "form" {
			return fmt.Sprintf("%s has style %s, which api_call cannot send", what, p.Style)
		}
		if typ == "object" {
			return what + " is an object, which api_call cannot spread into the query"
		}
		if typ == "array" && !explode {
			return what + " is an array sent comma-separated (explode: false), which api_call cannot send"
		}
	case "header":
		if typ == "object" {
			return what + " is an object, which api_call cannot send as a header"
		}
	case "cookie":
		if typ == "array" || typ == "object" {
			return what + " is an array or an object, which api_call cannot send as a cookie"
		}
	default:
		return fmt.Sprintf("parameter %s is in %q, which is not path, query, header or cookie", p.Name, p.In)
	}
	return ""
}

// placeholders lists a path template's {names}.
func placeholders(path string) []string {
	var out []string
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(path[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, path[i+1:i+j])
		path = path[i+j+1:]
	}
}

// body declares the request body as the argument "body": a JSON body whole, or a form's fields.
func (a *args) body(op *openapi3.Operation) string {
	if op.RequestBody == nil || op.RequestBody.Value == nil || len(op.RequestBody.Value.Content) == 0 {
		return ""
	}
	rb := op.RequestBody.Value
	mt, in := pickMedia(rb.Content)
	if in == "" {
		return fmt.Sprintf("its request body is %s; api_call builds JSON and form (application/x-www-form-urlencoded) bodies from arguments, not multipart, binary or text ones",
			strings.Join(slices.Sorted(maps.Keys(rb.Content)), " or "))
	}
	schema := rb.Content[mt].Schema
	if isBinary(schema) {
		return fmt.Sprintf("its request body (%s) is binary, which an argument cannot carry", mt)
	}
	if in == tool.InForm {
		if why := formFields(schema); why != "" {
			return why
		}
	}
	a.add("body", in, a.conv.property(schema, rb.Description, 0), rb.Required)
	return ""
}

// pickMedia chooses the body's media type: JSON first, then a form.
func pickMedia(content openapi3.Content) (string, string) {
	keys := slices.Sorted(maps.Keys(content))
	for _, pass := range []func(string) bool{
		func(t string) bool { return t == "application/json" },
		func(t string) bool { return strings.HasSuffix(t, "+json") || strings.HasSuffix(t, "/json") },
		func(t string) bool { return t == "*/*" },
	} {
		for _, k := range keys {
			if t, _, err := mime.ParseMediaType(k); err == nil && pass(t) {
				return k, tool.InBody
			}
		}
	}
	for _, k := range keys {
		if t, _, err := mime.ParseMediaType(k); err == nil && t == "application/x-www-form-urlencoded" {
			return k, tool.InForm
		}
	}
	return "", ""
}

// formFields says why a form body cannot be sent from an argument: api_call writes a form's
// fields as scalars or repeated scalars.
func formFields(schema *openapi3.SchemaRef) string {
	if schema == nil || schema.Value == nil {
		return ""
	}
	f := flatten(schema.Value, nil)
	if t := f.mainType(); t != "object" && t != "" {
		return fmt.Sprintf("its form body is of type %s, not an object of fields", t)
	}
	for _, k := range slices.Sorted(maps.Keys(f.props)) {
		ref := f.props[k]
		if ref == nil || ref.Value == nil {
			continue
		}
		g := flatten(ref.Value, nil)
		t := g.mainType()
		if isBinary(ref) {
			return fmt.Sprintf("its form field %s is a file, which api_call does not send in a form", k)
		}
		if t == "object" || (t == "array" && g.items != nil && g.items.Value != nil && flatten(g.items.Value, nil).mainType() == "object") {
			return fmt.Sprintf("its form field %s is an object, which a form's fields cannot carry", k)
		}
	}
	return ""
}
