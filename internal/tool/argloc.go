package tool

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"sinew/internal/fault"
)

// ArgumentLocation says where one argument of an api_call goes: {"in": "query", "name": "page[size]"}.
// The call gives the argument at its top level, by its own name (the key of argument_locations),
// and the executor puts it where the location says, under Name (the argument's own name when
// empty):
//   - path: the URL's {Name} placeholder;
//   - query: the query parameter Name (an array repeats it);
//   - header: the header Name (an array repeats it);
//   - cookie: the cookie Name;
//   - body: the whole JSON body (no Name);
//   - form: the whole form body, an object of fields (no Name), sent as
//     application/x-www-form-urlencoded.
//
// It lets an argument's name differ from the parameter it fills, since the model APIs accept
// property names of ^[A-Za-z0-9_.-]{1,64}$ only and an API's parameters may be named anything, and
// lets a header or body be an argument like any other.
type ArgumentLocation struct {
	In   string `json:"in"`
	Name string `json:"name,omitempty"`
}

// The places an argument can go.
const (
	InPath   = "path"
	InQuery  = "query"
	InHeader = "header"
	InCookie = "cookie"
	InBody   = "body"
	InForm   = "form"
)

// ArgumentPlaces lists the places, as argument_locations' "in" takes them.
var ArgumentPlaces = []string{InPath, InQuery, InHeader, InCookie, InBody, InForm}

// argNamePattern is the property-name rule of the model APIs' tool schemas.
var argNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`) })

// ValidArgumentName reports whether name can be an argument's name: the model APIs accept it as a
// property name, and it is not one of the request parts (params, json, ...), url or method, which
// an api_call call may also carry at its top level.
func ValidArgumentName(name string) bool {
	return argNamePattern().MatchString(name) && !slices.Contains(APICallParts, name) && name != "url" && name != "method"
}

// Target is the name the argument fills at its location.
func (l ArgumentLocation) Target(arg string) string {
	if l.Name == "" {
		return arg
	}
	return l.Name
}

func (d *APICallDef) validateLocations() error {
	if len(d.ArgumentLocations) == 0 {
		return nil
	}
	var placeholders []string
	if t, err := ParseURLTemplate(d.URL); err == nil {
		placeholders = t.Names()
	}
	whole := ""
	for _, arg := range sortedLocationKeys(d.ArgumentLocations) {
		loc := d.ArgumentLocations[arg]
		field := "api_call.argument_locations." + arg
		if !ValidArgumentName(arg) {
			return fault.Invalid(field, "%s: an argument's name must match ^[A-Za-z0-9_.-]{1,64}$ (the model APIs accept nothing else) and must not be url, method or a request part (%s)", field, strings.Join(APICallParts, ", "))
		}
		if d.ParamsSchema != nil {
			if _, ok := d.ParamsSchema.Properties[arg]; !ok {
				return fault.Invalid(field, "%s: api_call.params_schema declares no property %q; declare every argument it places", field, arg)
			}
		}
		if err := loc.validate(field, arg, placeholders); err != nil {
			return err
		}
		if loc.In == InBody || loc.In == InForm {
			if whole != "" {
				return fault.Invalid(field, "%s: %s and %s both give the whole request body; at most one argument may", field, whole, arg)
			}
			whole = arg
		}
	}
	return nil
}

func (l ArgumentLocation) validate(field, arg string, placeholders []string) error {
	target := l.Target(arg)
	switch l.In {
	case InPath:
		if !slices.Contains(placeholders, target) {
			return fault.Invalid(field+".name", "%s goes in the path as {%s}, but api_call.url has no such placeholder", field, target)
		}
	case InQuery:
	case InHeader, InCookie:
		if !tokenName(target) {
			return fault.Invalid(field+".name", "%s: %q is not a valid %s name", field, target, l.In)
		}
		if l.In == InHeader && strings.EqualFold(target, "Host") {
			return fault.Invalid(field+".name", "%s: the Host header is fixed by api_call.url", field)
		}
	case InBody, InForm:
		if l.Name != "" {
			return fault.Invalid(field+".name", "%s: an argument in %s is the whole body and takes no name", field, l.In)
		}
	default:
		return fault.Invalid(field+".in", "%s.in is %q: use one of %s", field, l.In, strings.Join(ArgumentPlaces, ", "))
	}
	if strings.TrimSpace(target) == "" {
		return fault.Invalid(field+".name", "%s.name is empty", field)
	}
	return nil
}

// tokenName is RFC 9110's token rule, which header and cookie names follow.
func tokenName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c <= ' ' || strings.IndexByte("\"(),/:;<=>?@[\\]{}\x7f", c) >= 0 {
			return false
		}
	}
	return true
}

func sortedLocationKeys(m map[string]ArgumentLocation) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
