package integrations

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"sinew/internal/fault"
	"sinew/internal/netguard"
)

// DefaultMaxBody bounds a provider's response body unless the request sets its own bound.
const DefaultMaxBody = 8 << 20

// excerptLen bounds how much of an error body goes into a message.
const excerptLen = 300

// Request is one HTTP request of a provider. Set at most one of JSON and Body.
type Request struct {
	Method string // default GET, or POST when a body is set
	URL    string
	Query  url.Values
	Header http.Header
	// JSON is marshalled as the body, with Content-Type application/json.
	JSON any
	// Body is sent as it is, with ContentType (form, multipart, ...).
	Body        []byte
	ContentType string
	// MaxBytes bounds the response body (default DefaultMaxBody).
	MaxBytes int64
}

// Response is a provider's successful (2xx) answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends req with the guarded client and reads the answer. A 2xx is a Response; every other
// outcome is a typed error (StatusError, or a connection failure: Transient; a refusal of the guard:
// Forbidden; the context's deadline: Timeout). URLs in errors and logs carry no query string.
func (e Env) Do(ctx context.Context, req Request) (*Response, error) {
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fault.New(fault.InvalidInput, "%s: %q is not an http(s) URL", e.FriendlyName, redactURL(req.URL))
	}
	if len(req.Query) > 0 {
		q := u.Query()
		for k, vs := range req.Query {
			for _, v := range vs {
				q.Add(k, v)
			}
		}
		u.RawQuery = q.Encode()
	}
	var body io.Reader
	contentType := req.ContentType
	switch {
	case req.JSON != nil:
		b, err := json.Marshal(req.JSON)
		if err != nil {
			return nil, fault.Wrap(fault.Internal, err, "%s: the request body is not JSON", e.FriendlyName)
		}
		body, contentType = bytes.NewReader(b), "application/json"
	case req.Body != nil:
		body = bytes.NewReader(req.Body)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
		if body != nil {
			method = http.MethodPost
		}
	}
	hr, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, errors.New(redactURL(u.String())), "%s: cannot build the request", e.FriendlyName)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	if contentType != "" {
		hr.Header.Set("Content-Type", contentType)
	}
	if hr.Header.Get("Accept") == "" {
		hr.Header.Set("Accept", "application/json")
	}
	hr.Header.Set("User-Agent", "sinew-integrations/1")

	start := time.Now()
	resp, err := e.client().Do(hr)
	if err != nil {
		e.logger().DebugContext(ctx, "provider request failed", "http_method", method, "url", redactURL(u.String()), "error", redactErr(err).Error())
		return nil, e.connFault(ctx, err)
	}
	defer resp.Body.Close()
	max := req.MaxBytes
	if max <= 0 {
		max = DefaultMaxBody
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, e.connFault(ctx, err)
	}
	e.logger().DebugContext(ctx, "provider request", "http_method", method, "url", redactURL(u.String()), "status", resp.StatusCode, "bytes", len(data), "duration", time.Since(start))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, StatusError(e.FriendlyName, resp.StatusCode, data)
	}
	if int64(len(data)) > max {
		return nil, fault.New(fault.TooLarge, "%s answered more than %d bytes", e.FriendlyName, max)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// DoJSON is Do, then decodes the 2xx body as JSON into out; a body that is not JSON is a Provider
// error (the service did not answer as documented).
func (e Env) DoJSON(ctx context.Context, req Request, out any) error {
	resp, err := e.Do(ctx, req)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fault.Wrap(fault.Provider, err, "%s answered with malformed JSON", e.FriendlyName)
	}
	return nil
}

func (e Env) client() *http.Client {
	if e.HTTP != nil {
		return e.HTTP
	}
	// An Env built by hand (not by a Registry) still goes through a guard.
	return redirectSafe(netguard.NewClient(netguard.New().NewTransport(), MaxRedirects))
}

// redirectSafe makes c's redirects to another origin carry only plain headers: a provider's key
// (X-BB-API-Key, Authorization ...) goes only to the API its setup names, never to where that API
// redirects.
func redirectSafe(c *http.Client) *http.Client {
	c.CheckRedirect = netguard.DropAcrossOrigins(c.CheckRedirect)
	return c
}

func (e Env) logger() interface {
	DebugContext(ctx context.Context, msg string, args ...any)
} {
	if e.Log != nil {
		return e.Log
	}
	return discard{}
}

type discard struct{}

func (discard) DebugContext(context.Context, string, ...any) {}

// HTTPError is the cause kept inside a StatusError: the status a service answered.
type HTTPError struct{ Status int }

func (e *HTTPError) Error() string { return fmt.Sprintf("HTTP %d", e.Status) }

// StatusOf gives the HTTP status behind an error made by StatusError (or Do), or 0.
func StatusOf(err error) int {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status
	}
	return 0
}

// StatusError classifies a non-2xx answer of service (a friendly name): 401 and 403 are Provider
// errors saying the credentials were refused; 408, 429, 5xx (524 included) are Transient; any other
// status is Provider. The message carries the first characters of the body, cleaned of control
// characters; the status stays available through StatusOf.
func StatusError(service string, status int, body []byte) error {
	ex := Excerpt(body)
	suffix := ""
	if ex != "" {
		suffix = ": " + ex
	}
	cause := &HTTPError{Status: status}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fault.Wrap(fault.Provider, cause, "%s refused the credentials in the setup (HTTP %d); check the API key and its permissions%s", service, status, suffix)
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500:
		return fault.Wrap(fault.Transient, cause, "%s is unavailable or rate limited (HTTP %d); the call will be retried%s", service, status, suffix)
	default:
		return fault.Wrap(fault.Provider, cause, "%s refused the request (HTTP %d)%s", service, status, suffix)
	}
}

// Excerpt gives the first characters of a body for a message: control characters become spaces,
// runs of spaces collapse, and it is cut at excerptLen characters.
func Excerpt(body []byte) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, string(body))
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > excerptLen {
		s = string(r[:excerptLen]) + "…"
	}
	return s
}

// connFault types a failure to get an answer at all.
func (e Env) connFault(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctxFault(ctx, e.FriendlyName, err)
	}
	clean := redactErr(err)
	var fe *fault.Error
	if errors.As(err, &fe) {
		// The guard's own verdict (Forbidden, or Transient for DNS and refused connections).
		return &fault.Error{Kind: fe.Kind, Msg: e.FriendlyName + ": " + fault.Message(fe), Err: clean}
	}
	var tooMany *netguard.TooManyRedirectsError
	if errors.As(err, &tooMany) {
		return fault.Wrap(fault.Provider, clean, "%s redirected too many times", e.FriendlyName)
	}
	return fault.Wrap(fault.Transient, clean, "could not reach %s", e.FriendlyName)
}

// ctxFault is the error for a call whose context ended: Timeout when its deadline ran out (the
// caller's bound; not retried), Transient when it was cancelled.
func ctxFault(ctx context.Context, service string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fault.Wrap(fault.Timeout, redactErr(err), "%s did not answer within the call's time bound", service)
	}
	return fault.Wrap(fault.Transient, redactErr(err), "the call to %s was cancelled", service)
}

// redactURL drops the query, fragment and user info of a URL: API keys travel there (OpenWeatherMap's
// appid, for one).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<unparsable URL>"
	}
	u.User = nil
	u.Fragment = ""
	if u.RawQuery != "" {
		u.RawQuery = "<redacted>"
	}
	return u.String()
}

// redactErr rebuilds a *url.Error with its URL redacted, so an error kept as a cause (and logged)
// holds no key from a query string.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &url.Error{Op: ue.Op, URL: redactURL(ue.URL), Err: ue.Err}
	}
	return err
}

// JoinURL joins a base URL and path segments with single slashes; segments are escaped.
func JoinURL(base string, segments ...string) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(base, "/"))
	for _, s := range segments {
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}
