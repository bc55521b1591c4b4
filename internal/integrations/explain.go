package integrations

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	gjs "github.com/google/jsonschema-go/jsonschema"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// resolvedSchema is a schema in the validator's form. The validator answers valid or not; its
// error text names no instance path and may quote the value (setup values are secrets), so sinew's
// message comes from explain, which walks the schema beside the value and words each problem from
// the path and the keyword only. explain also asserts "format", which the validator only annotates.
type resolvedSchema struct {
	root      *gjs.Schema
	resolved  *gjs.Resolved
	hasFormat bool     // the schema may use "format": explain runs on every value
	patterns  sync.Map // pattern → *regexp.Regexp, compiled once per schema
}

// resolveSchema unmarshals and resolves the JSON Schema raw (draft 2020-12 unless it says otherwise).
func resolveSchema(raw []byte) (*resolvedSchema, error) {
	var s gjs.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decoding the schema: %w", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("resolving the schema: %w", err)
	}
	// A property named "format" matches too; explain then runs for nothing, which costs only time.
	return &resolvedSchema{root: &s, resolved: r, hasFormat: bytes.Contains(raw, []byte(`"format"`))}, nil
}

// validate checks v against the schema; a failure is InvalidInput whose Field is the path of the
// first offending value (root "setup" or "arguments", then dotted names and [index]es), and whose
// message lists up to three problems without any value.
func (rs *resolvedSchema) validate(root string, v map[string]any) error {
	verr := rs.resolved.Validate(v)
	if verr == nil && !rs.hasFormat {
		return nil
	}
	x := &explainer{rs: rs}
	x.check(rs.root, v, root, 0)
	if verr == nil {
		// The validator accepted v: only the formats it does not assert can refuse it, so a rule
		// explain reads differently (a float's multipleOf, say) never refuses a valid value.
		x.probs = slices.DeleteFunc(x.probs, func(p problem) bool { return !p.format })
	}
	if len(x.probs) == 0 {
		if verr == nil {
			return nil
		}
		// A rule explain does not word: the validator's text may quote the value, so it stays out.
		return fault.Invalid(root, "%s does not match its schema", root)
	}
	sort.SliceStable(x.probs, func(i, j int) bool { return x.probs[i].field < x.probs[j].field })
	msgs := make([]string, 0, 4)
	for i, p := range x.probs {
		if i == 3 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(x.probs)-3))
			break
		}
		msgs = append(msgs, p.field+" "+p.msg)
	}
	return fault.Invalid(x.probs[0].field, "%s", strings.Join(msgs, "; "))
}

func (rs *resolvedSchema) pattern(p string) *regexp.Regexp {
	if re, ok := rs.patterns.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	// Resolve compiled every pattern already, so this cannot fail.
	re := regexp.MustCompile(p)
	rs.patterns.Store(p, re)
	return re
}

type problem struct {
	field, msg string
	format     bool // a format the validator does not assert
}

// explainer collects the problems of a value against a schema.
type explainer struct {
	rs    *resolvedSchema
	probs []problem
}

// maxRefs bounds how many $refs explain follows without descending into the value, so a schema
// that refers to itself in place cannot loop.
const maxRefs = 32

func (x *explainer) add(field, msg string) {
	x.probs = append(x.probs, problem{field: field, msg: msg})
}

// passes reports whether v satisfies s, without recording anything.
func (x *explainer) passes(s *gjs.Schema, v any, path string, refs int) bool {
	sub := &explainer{rs: x.rs}
	sub.check(s, v, path, refs)
	return len(sub.probs) == 0
}

// check records the problems of v (at path) against s. The validator has the final word on
// validity; check only has to find and word what it rejects.
func (x *explainer) check(s *gjs.Schema, v any, path string, refs int) {
	if s == nil {
		return
	}
	if s.Ref != "" && refs < maxRefs {
		if target := x.localRef(s.Ref); target != nil {
			x.check(target, v, path, refs+1)
		}
	}
	if !typeAdmits(s, v) {
		x.add(path, "must be of type "+strings.Join(typesOf(s), " or ")+", not "+jsonv.TypeName(v))
		return // the other keywords are moot on a value of the wrong type
	}
	if s.Enum != nil && !containsJSON(s.Enum, v) {
		want := make([]string, len(s.Enum))
		for i, w := range s.Enum {
			want[i] = jsonText(w)
		}
		x.add(path, "must be one of "+strings.Join(want, ", "))
	}
	if s.Const != nil && !jsonv.Equal(jsonv.Normalize(*s.Const), v) {
		x.add(path, "must be "+jsonText(*s.Const))
	}
	switch val := v.(type) {
	case int64, float64:
		x.number(s, val, path)
	case string:
		x.str(s, val, path)
	case []any:
		x.array(s, val, path)
	case map[string]any:
		x.object(s, val, path, refs)
	}
	for _, sub := range s.AllOf {
		x.check(sub, v, path, refs)
	}
	if len(s.AnyOf) > 0 && !x.anyPasses(s.AnyOf, v, path, refs) {
		x.noneMatch(s.AnyOf, v, path, refs)
	}
	if len(s.OneOf) > 0 {
		n := 0
		for _, b := range s.OneOf {
			if x.passes(b, v, path, refs) {
				n++
			}
		}
		switch {
		case n == 0:
			x.noneMatch(s.OneOf, v, path, refs)
		case n > 1:
			x.add(path, "matches more than one of the allowed forms")
		}
	}
	if s.Not != nil && x.passes(s.Not, v, path, refs) {
		x.add(path, "is not allowed")
	}
	if s.If != nil {
		if x.passes(s.If, v, path, refs) {
			x.check(s.Then, v, path, refs)
		} else {
			x.check(s.Else, v, path, refs)
		}
	}
}

func (x *explainer) anyPasses(branches []*gjs.Schema, v any, path string, refs int) bool {
	for _, b := range branches {
		if x.passes(b, v, path, refs) {
			return true
		}
	}
	return false
}

// noneMatch words a value no branch of an anyOf or oneOf accepts: by the one branch whose type
// fits, if there is one (its problems are the precise ones), else by the types allowed.
func (x *explainer) noneMatch(branches []*gjs.Schema, v any, path string, refs int) {
	var fits []*gjs.Schema
	var types []string
	for _, b := range branches {
		if typeAdmits(b, v) {
			fits = append(fits, b)
		}
		types = append(types, typesOf(b)...)
	}
	switch {
	case len(fits) == 1:
		n := len(x.probs)
		x.check(fits[0], v, path, refs)
		if len(x.probs) == n {
			x.add(path, "does not match any of the allowed forms")
		}
	case len(fits) == 0 && len(types) > 0:
		x.add(path, "must be of type "+strings.Join(types, " or ")+", not "+jsonv.TypeName(v))
	default:
		x.add(path, "does not match any of the allowed forms")
	}
}

func (x *explainer) number(s *gjs.Schema, v any, path string) {
	f, _ := jsonv.ToFloat(v)
	if s.Minimum != nil && f < *s.Minimum {
		x.add(path, "must be at least "+num(*s.Minimum))
	}
	if s.Maximum != nil && f > *s.Maximum {
		x.add(path, "must be at most "+num(*s.Maximum))
	}
	if s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum {
		x.add(path, "must be greater than "+num(*s.ExclusiveMinimum))
	}
	if s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum {
		x.add(path, "must be less than "+num(*s.ExclusiveMaximum))
	}
	if m := s.MultipleOf; m != nil && *m > 0 {
		if q := f / *m; q != math.Trunc(q) {
			x.add(path, "must be a multiple of "+num(*m))
		}
	}
}

func (x *explainer) str(s *gjs.Schema, v string, path string) {
	n := utf8.RuneCountInString(v)
	if s.MinLength != nil && n < *s.MinLength {
		x.add(path, fmt.Sprintf("must be at least %d characters long", *s.MinLength))
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		x.add(path, fmt.Sprintf("must be at most %d characters long", *s.MaxLength))
	}
	if s.Pattern != "" && !x.rs.pattern(s.Pattern).MatchString(v) {
		x.add(path, "must match the pattern "+s.Pattern)
	}
	if s.Format != "" && !validFormat(s.Format, v) {
		x.probs = append(x.probs, problem{field: path, msg: "must be a valid " + s.Format, format: true})
	}
}

// array checks an array's keywords; its items are values of their own, so $ref counting starts over.
func (x *explainer) array(s *gjs.Schema, v []any, path string) {
	prefix := s.PrefixItems
	if prefix == nil {
		prefix = s.ItemsArray // draft-07's array form of items
	}
	for i, item := range v {
		ip := path + "[" + strconv.Itoa(i) + "]"
		switch {
		case i < len(prefix):
			x.check(prefix[i], item, ip, 0)
		case s.Items != nil:
			x.check(s.Items, item, ip, 0)
		case s.AdditionalItems != nil && s.ItemsArray != nil:
			x.check(s.AdditionalItems, item, ip, 0)
		}
	}
	if s.MinItems != nil && len(v) < *s.MinItems {
		x.add(path, fmt.Sprintf("must have at least %d items", *s.MinItems))
	}
	if s.MaxItems != nil && len(v) > *s.MaxItems {
		x.add(path, fmt.Sprintf("must have at most %d items", *s.MaxItems))
	}
	if s.UniqueItems {
	dup:
		for i := range v {
			for j := i + 1; j < len(v); j++ {
				if jsonv.Equal(v[i], v[j]) {
					x.add(path, fmt.Sprintf("must not repeat an item (items %d and %d are equal)", i, j))
					break dup
				}
			}
		}
	}
	if s.Contains != nil {
		n := 0
		for i, item := range v {
			if x.passes(s.Contains, item, path+"["+strconv.Itoa(i)+"]", 0) {
				n++
			}
		}
		minC := 1
		if s.MinContains != nil {
			minC = *s.MinContains
		}
		if n < minC {
			x.add(path, fmt.Sprintf("must have at least %d items matching its contains schema", minC))
		}
		if s.MaxContains != nil && n > *s.MaxContains {
			x.add(path, fmt.Sprintf("must have at most %d items matching its contains schema", *s.MaxContains))
		}
	}
}

func (x *explainer) object(s *gjs.Schema, v map[string]any, path string, refs int) {
	for _, name := range s.Required {
		if _, ok := v[name]; !ok {
			x.add(path+"."+name, "is required")
		}
	}
	for name, deps := range s.DependentRequired {
		if _, ok := v[name]; !ok {
			continue
		}
		for _, d := range deps {
			if _, ok := v[d]; !ok {
				x.add(path+"."+d, "is required when "+name+" is given")
			}
		}
	}
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fp := path + "." + name
		known := false
		if sub, ok := s.Properties[name]; ok {
			known = true
			x.check(sub, v[name], fp, 0)
		}
		for p, sub := range s.PatternProperties {
			if x.rs.pattern(p).MatchString(name) {
				known = true
				x.check(sub, v[name], fp, 0)
			}
		}
		if !known && s.AdditionalProperties != nil {
			if isFalse(s.AdditionalProperties) {
				x.add(fp, "is not a known field")
			} else {
				x.check(s.AdditionalProperties, v[name], fp, 0)
			}
		}
		if s.PropertyNames != nil && !x.passes(s.PropertyNames, name, fp, 0) {
			x.add(fp, "is not an allowed field name")
		}
	}
	if s.MinProperties != nil && len(v) < *s.MinProperties {
		x.add(path, fmt.Sprintf("must have at least %d fields", *s.MinProperties))
	}
	if s.MaxProperties != nil && len(v) > *s.MaxProperties {
		x.add(path, fmt.Sprintf("must have at most %d fields", *s.MaxProperties))
	}
	for name, sub := range s.DependentSchemas {
		if _, ok := v[name]; ok {
			x.check(sub, v, path, refs)
		}
	}
}

// localRef finds the target of a reference within the root schema ("#", "#/$defs/x",
// "#/definitions/x"); other references are left to the validator.
func (x *explainer) localRef(ref string) *gjs.Schema {
	root := x.rs.root
	switch {
	case ref == "#":
		return root
	case strings.HasPrefix(ref, "#/$defs/"):
		return root.Defs[unescapePointer(strings.TrimPrefix(ref, "#/$defs/"))]
	case strings.HasPrefix(ref, "#/definitions/"):
		return root.Definitions[unescapePointer(strings.TrimPrefix(ref, "#/definitions/"))]
	}
	return nil
}

func unescapePointer(s string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
}

// isFalse reports whether s refuses everything: the schema false, which the validator's form holds
// as {"not": {}}.
func isFalse(s *gjs.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// typesOf lists the types s allows (none: any).
func typesOf(s *gjs.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// typeAdmits reports whether v is of a type s allows.
func typeAdmits(s *gjs.Schema, v any) bool {
	types := typesOf(s)
	if len(types) == 0 {
		return true
	}
	got := jsonv.TypeName(v)
	for _, t := range types {
		if t == got || t == "integer" && isInteger(v) {
			return true
		}
	}
	return false
}

func isInteger(v any) bool {
	switch n := v.(type) {
	case int64:
		return true
	case float64:
		return n == math.Trunc(n) && !math.IsInf(n, 0)
	}
	return false
}

func containsJSON(set []any, v any) bool {
	for _, w := range set {
		if jsonv.Equal(jsonv.Normalize(w), v) {
			return true
		}
	}
	return false
}

// jsonText is a schema's (never an instance's) value as JSON.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
