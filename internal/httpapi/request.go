package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Request is one request as a handler sees it.
type Request struct {
	Method string
	Path   string // without a named stage's prefix
	Route  string // the matched pattern
	// DeveloperID is the authenticated caller, from the JWT claim; empty only on public routes. Store
	// calls take it from here, never from a body or a query.
	DeveloperID string
	Event       *events.APIGatewayV2HTTPRequest

	params map[string]string
	query  url.Values
	body   []byte
}

// Param is the path parameter name, unescaped.
func (r *Request) Param(name string) string { return r.params[name] }

// Query is the parsed query string.
func (r *Request) Query() url.Values { return r.query }

// Header is a request header; API Gateway lower-cases names and joins repeated values with commas.
func (r *Request) Header(name string) string {
	if v, ok := r.Event.Headers[strings.ToLower(name)]; ok {
		return v
	}
	for k, v := range r.Event.Headers { // events built by hand may keep the sender's case
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// Body is the request body, base64-decoded when API Gateway encoded it, within the route's limit.
func (r *Request) Body() []byte { return r.body }

// Decode is DecodeJSON of the body.
func (r *Request) Decode(v any) error { return DecodeJSON(r.body, v) }

// MaxIdempotencyKey is the longest Idempotency-Key accepted.
const MaxIdempotencyKey = 255

// IdempotencyKey is the Idempotency-Key header, "" when absent; a key over 255 characters or with
// characters other than printable ASCII is an InvalidInput naming the header.
func (r *Request) IdempotencyKey() (string, error) {
	k := r.Header("Idempotency-Key")
	if err := CheckIdempotencyKey("Idempotency-Key", k); err != nil {
		return "", err
	}
	return k, nil
}

// CheckIdempotencyKey checks an idempotency key given in field: at most 255 characters, printable
// ASCII only; "" (no key) passes.
func CheckIdempotencyKey(field, k string) error {
	if len(k) > MaxIdempotencyKey {
		return fault.Invalid(field, "%s is %d characters; at most %d are allowed", field, len(k), MaxIdempotencyKey)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return fault.Invalid(field, "%s may hold only printable ASCII characters", field)
		}
	}
	return nil
}

// Page is a list request's ?limit= and ?cursor=.
type Page struct {
	Limit  int
	Cursor string // opaque, made by the store; "" for the first page
}

// Pagination bounds: ?limit=1..100 (default 20) and ?cursor=.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	maxCursor    = 4096
)

// Page parses ?limit= (1..100, default 20) and ?cursor=.
func (r *Request) Page() (Page, error) { return ParsePage(r.query) }

// ParsePage parses ?limit= (1..100, default 20) and ?cursor= from q.
func ParsePage(q url.Values) (Page, error) {
	p := Page{Limit: DefaultLimit, Cursor: q.Get("cursor")}
	if s, ok := q["limit"]; ok {
		n, err := strconv.Atoi(s[0])
		if err != nil || n < 1 || n > MaxLimit {
			return Page{}, fault.Invalid("limit", "limit must be an integer from 1 to %d, not %q", MaxLimit, s[0])
		}
		p.Limit = n
	}
	if len(p.Cursor) > maxCursor {
		return Page{}, fault.Invalid("cursor", "cursor is not one this API gave out")
	}
	return p, nil
}

// List is a list answer: {"items": [...], "next_cursor": "..." or null}.
type List[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// NewList makes a list answer; next "" means the last page (next_cursor null).
func NewList[T any](items []T, next string) List[T] {
	if items == nil {
		items = []T{}
	}
	l := List[T]{Items: items}
	if next != "" {
		l.NextCursor = &next
	}
	return l
}

// DecodeJSON decodes one JSON value from body into v, strictly: an empty body, a body that is not an
// object when v is a struct or map, an unknown field (named by its path), a value of the wrong type
// (named by its path), malformed JSON and data after the value are InvalidInput errors a caller can
// act on. Numbers that land in interface values take the jsonv form (int64 or float64), as
// everywhere else in sinew.
func DecodeJSON(body []byte, v any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return fault.Invalid("body", "the request body is empty; send a JSON object")
	}
	// JSON is UTF-8 (RFC 8259); encoding/json would put U+FFFD in place of invalid bytes and the
	// damaged text would be stored.
	if !utf8.Valid(body) {
		return fault.Invalid("body", "the request body is not valid UTF-8; send JSON encoded as UTF-8")
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fault.New(fault.Internal, "httpapi.DecodeJSON needs a non-nil pointer, got %T", v)
	}
	if k := rv.Elem().Kind(); (k == reflect.Struct || k == reflect.Map) && trimmed[0] != '{' {
		return fault.Invalid("body", "the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, body, rv.Elem().Type())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fault.Invalid("body", "the request body has data after its JSON value")
	}
	normalizeNumbers(rv)
	return nil
}

func decodeError(err error, body []byte, t reflect.Type) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var fe *fault.Error
	switch {
	case errors.As(err, &fe):
		return err // a field's own UnmarshalJSON said what is wrong
	case errors.As(err, &se):
		return fault.Invalid("body", "the request body is not valid JSON: %s (at byte %d)", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fault.Invalid("body", "the request body ends in the middle of its JSON value")
	case errors.As(err, &te):
		// encoding/json's Field leaves out array indices and map keys; the offset finds them.
		field := jsonPathAt(body, te.Offset)
		if field == "" {
			field = te.Field
		}
		name := field
		if name == "" {
			name, field = "the body", "body"
		}
		return fault.Invalid(field, "%s must be %s, not %s", name, jsonv.KindOf(te.Type), te.Value)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if n, uerr := strconv.Unquote(name); uerr == nil {
			name = n
		}
		// encoding/json names only the key; find where it is.
		path := name
		if v, derr := jsonv.Decode(body); derr == nil {
			if p, found := unknownPath(v, t, ""); found {
				path = p
			}
		}
		return fault.Invalid(path, "unknown field %q", path)
	}
	return fault.Invalid("body", "the request body is invalid: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonPathAt gives the path (tools[1].api_call.method) of the value that ends at or spans offset in
// body, "" for the top-level value or when body does not tokenize that far.
func jsonPathAt(body []byte, offset int64) string {
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

// normalizeNumbers turns the json.Numbers that UseNumber left in interface values into jsonv's
// int64 or float64.
func normalizeNumbers(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normalizeNumbers(v.Elem())
		}
	case reflect.Interface:
		if !v.IsNil() && v.CanSet() && v.Type() == anyType {
			v.Set(reflect.ValueOf(jsonv.Normalize(v.Elem().Interface())))
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
