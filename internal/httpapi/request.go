package httpapi

import (
	"net/url"
	"strconv"
	"strings"

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

// DecodeJSON decodes one JSON value from body into v, strictly (jsonv.Strict): an empty body, a
// body that is not an object when v is a struct or map, an unknown field (named by its path), a
// value of the wrong type (named by its path), malformed JSON and data after the value are
// InvalidInput errors a caller can act on. Numbers that land in interface values take the jsonv
// form (int64 or float64), as everywhere else in sinew.
func DecodeJSON(body []byte, v any) error { return bodyJSON.Decode(body, v) }

var bodyJSON = jsonv.Strict{Subject: "the request body", Field: "body", UTF8: "send JSON encoded as UTF-8",
	Unknown: "unknown field %q", Object: true, Numbers: true}
