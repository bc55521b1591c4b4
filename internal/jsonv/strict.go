package jsonv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"sinew/internal/fault"
)

// Strict is how DecodeStrict reads one kind of document sent to sinew (an HTTP request's body, a
// Lambda event) and how its errors name it. The errors are InvalidInput errors naming the field at
// fault, which the boundaries return as they are: their messages are part of what clients see.
type Strict struct {
	Subject string // the document, as messages name it: "the request body"
	Field   string // the field an error about the whole document names: "body"
	UTF8    string // what to do about bytes that are not UTF-8: "send JSON encoded as UTF-8"
	Unknown string // an unknown field's message, given the field's path: "unknown field %q"
	// Object refuses a document other than an object for a struct or a map before decoding, so
	// the message says an object is wanted rather than naming Go's view of the mismatch.
	Object bool
	// AllowUnknown ignores unknown fields: the events AWS makes gain fields over time.
	AllowUnknown bool
	// Numbers gives the numbers that land in interface values this package's form (int64 or
	// float64), as everywhere else in sinew, rather than encoding/json's float64.
	Numbers bool
}

// Decode decodes one JSON value from data into v, a non-nil pointer: an empty document, bytes that
// are not UTF-8, malformed JSON, a value of the wrong type or an unknown field (each named by its
// path, tools[1].api_call.method), and data after the value are InvalidInput errors a caller can
// act on. An error a field's own UnmarshalJSON returns as a *fault.Error is returned as it is.
func (s Strict) Decode(data []byte, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return fault.Invalid(s.Field, "%s is empty; send a JSON object", s.Subject)
	}
	// JSON is UTF-8 (RFC 8259); encoding/json would put U+FFFD in place of invalid bytes and the
	// damaged text would be stored.
	if !utf8.Valid(data) {
		return fault.Invalid(s.Field, "%s is not valid UTF-8; %s", s.Subject, s.UTF8)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fault.New(fault.Internal, "jsonv.Strict.Decode needs a non-nil pointer, got %T", v)
	}
	if k := rv.Elem().Kind(); s.Object && (k == reflect.Struct || k == reflect.Map) && trimmed[0] != '{' {
		return fault.Invalid(s.Field, "%s must be a JSON object", s.Subject)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if !s.AllowUnknown {
		dec.DisallowUnknownFields()
	}
	if s.Numbers {
		dec.UseNumber()
	}
	if err := dec.Decode(v); err != nil {
		return s.decodeError(err, data, rv.Elem().Type())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fault.Invalid(s.Field, "%s has data after its JSON value", s.Subject)
	}
	if s.Numbers {
		normalizeNumbers(rv)
	}
	return nil
}

func (s Strict) decodeError(err error, data []byte, t reflect.Type) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var fe *fault.Error
	switch {
	case errors.As(err, &fe):
		return err // a field's own UnmarshalJSON said what is wrong
	case errors.As(err, &se):
		return fault.Invalid(s.Field, "%s is not valid JSON: %s (at byte %d)", s.Subject, strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fault.Invalid(s.Field, "%s ends in the middle of its JSON value", s.Subject)
	case errors.As(err, &te):
		// encoding/json's Field leaves out array indices and map keys; the offset finds them.
		field := pathAt(data, te.Offset)
		if field == "" {
			field = te.Field
		}
		if field == "" {
			return fault.Invalid(s.Field, "%s must be %s, not %s", s.Subject, KindOf(te.Type), te.Value)
		}
		return fault.Invalid(field, "%s must be %s, not %s", field, KindOf(te.Type), te.Value)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if n, uerr := strconv.Unquote(name); uerr == nil {
			name = n
		}
		// encoding/json names only the key; find where it is.
		path := name
		if v, derr := Decode(data); derr == nil {
			if p, found := unknownPath(v, t, ""); found {
				path = p
			}
		}
		return fault.Invalid(path, s.Unknown, path)
	}
	return fault.Invalid(s.Field, "%s is invalid: %s", s.Subject, strings.TrimPrefix(err.Error(), "json: "))
}

// pathAt gives the path (tools[1].api_call.method) of the value that ends at or spans offset in
// body, "" for the top-level value or when body does not tokenize that far.
func pathAt(body []byte, offset int64) string {
	type frame struct {
		array  bool
		index  int
		key    string
		inKey  bool // an object frame waiting for its next key
		prefix string
	}
	var stack []*frame
	path := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.array {
			return fmt.Sprintf("%s[%d]", f.prefix, f.index)
		}
		if f.prefix == "" {
			return f.key
		}
		return f.prefix + "." + f.key
	}
	done := func() { // the current value is complete
		if len(stack) == 0 {
			return
		}
		if f := stack[len(stack)-1]; f.array {
			f.index++
		} else {
			f.inKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		reached := dec.InputOffset() >= offset
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				p := path()
				if reached {
					return p
				}
				stack = append(stack, &frame{array: t == '[', inKey: t == '{', prefix: p})
			default:
				stack = stack[:len(stack)-1]
				done()
			}
		case string:
			if len(stack) > 0 && stack[len(stack)-1].inKey {
				stack[len(stack)-1].key, stack[len(stack)-1].inKey = t, false
				continue
			}
			if reached {
				return path()
			}
			done()
		default:
			if reached {
				return path()
			}
			done()
		}
	}
}

// unknownPath finds the first object key in v that type t has no field for, as a dotted path with
// array indices (tools[0].api_call.methd).
func unknownPath(v any, t reflect.Type, prefix string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			fields := jsonFields(t)
			for _, k := range sortedKeys(x) {
				ft, ok := fields[k]
				if !ok {
					for name, f := range fields { // encoding/json matches keys case-insensitively
						if strings.EqualFold(name, k) {
							ft, ok = f, true
							break
						}
					}
				}
				if !ok {
					return join(k), true
				}
				if p, found := unknownPath(x[k], ft, join(k)); found {
					return p, true
				}
			}
		case reflect.Map:
			for _, k := range sortedKeys(x) {
				if p, found := unknownPath(x[k], t.Elem(), join(k)); found {
					return p, true
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range x {
				if p, found := unknownPath(e, t.Elem(), fmt.Sprintf("%s[%d]", prefix, i)); found {
					return p, true
				}
			}
		}
	}
	return "", false
}

// jsonFields maps the JSON names of t's fields (embedded structs flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = ft
	}
	return out
}

// sortedKeys orders keys so an error names the same field every time.
func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

var anyType = reflect.TypeFor[any]()

// normalizeNumbers turns the json.Numbers that UseNumber left in interface values into this
// package's int64 or float64.
func normalizeNumbers(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normalizeNumbers(v.Elem())
		}
	case reflect.Interface:
		if !v.IsNil() && v.CanSet() && v.Type() == anyType {
			v.Set(reflect.ValueOf(Normalize(v.Elem().Interface())))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				normalizeNumbers(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			normalizeNumbers(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		et := v.Type().Elem()
		iter := v.MapRange()
		for iter.Next() {
			// Map elements are not addressable: normalize a copy and put it back.
			cp := reflect.New(et).Elem()
			cp.Set(iter.Value())
			normalizeNumbers(cp)
			v.SetMapIndex(iter.Key(), cp)
		}
	}
}
