// Package apicall is the api_call executor.
//
// It builds an HTTP request from a tool's APICallDef and the call's merged request parts, sends it
// through the network guard, and turns the answer into the result {status_code, headers, json,
// content} or a typed error.
//
// Where Julep differs (its execute_api_call:
// https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/agents-api/agents_api/activities/execute_api_call.py), sinew does what a user expects: a call cannot
// change the method, scheme, host or port; every APICallDef field is honoured (the definition's
// params, json, data, content, files, cookies and timeout are the bottom layer of the merge;
// include_response_content is honoured on every path; schema, "the schema of the response", is
// checked against the response's JSON; params_schema, which describes the request's parameters, is
// checked against them: see checkParamsSchema);
// redirects, time and response size are bounded; a 3xx that is not followed is a result.
//
// Redirects are followed only when the definition says so (api_call.follow_redirects): a call's
// arguments, x-api_call-args and x-api_call-setup may turn them off, never on, since the model
// writes a call's arguments. A hop to another origin (scheme, host and port) carries none of the
// headers the definition or the metadata set, resolved secrets included, nor Authorization or
// Cookie: a secret goes only where the definition sends it.
package apicall

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/netguard"
	"sinew/internal/tool"
)

// Result is an api_call's output. Content is the body in standard base64, left out when
// include_response_content is false; JSON is the body parsed, or null when it is not JSON.
type Result struct {
	StatusCode int               `json:"status_code"`
	Headers    map[string]string `json:"headers"`
	JSON       any               `json:"json"`
	Content    *string           `json:"content,omitempty"`
}

// Input is what the executor receives besides the definition: the call's arguments and the
// metadata entries for the tool (x-api_call-args, x-api_call-setup; nil when there are none).
type Input struct {
	Call      map[string]any
	MetaArgs  map[string]any
	MetaSetup map[string]any
	// CallID, when set, is sent as the Idempotency-Key header unless the request sets one: every
	// attempt of one call (a Retry, a re-run after a crash) carries the same key, so a service that
	// honours the convention performs the call once, where sinew alone cannot know whether a request
	// cut off by a crash arrived (local mode reruns a task that was running at a crash: at-least-once).
	CallID string
}

// IdempotencyHeader is the header that carries a call's id.
const IdempotencyHeader = "Idempotency-Key"

// StatusError is the cause of an error for a status that is not a result: the status and the first
// 500 characters of the body.
type StatusError struct {
	StatusCode int
	Body       string
}

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d", e.StatusCode) }

// Executor runs api_calls. It is safe for concurrent use and keeps one connection pool.
type Executor struct {
	transport http.RoundTripper
	log       *slog.Logger
	maxBytes  int64
}

// Option configures an Executor.
type Option func(*Executor)

// WithMaxResponseBytes lowers the response size cap (it cannot be raised past MaxResponseBytes).
func WithMaxResponseBytes(n int64) Option {
	return func(e *Executor) {
		if n > 0 && n < MaxResponseBytes {
			e.maxBytes = n
		}
	}
}

// WithLogger sets the logger (default slog.Default()). Lines carry the method, host, status, size
// and duration; never header values, the query or bodies, which may hold secrets.
func WithLogger(l *slog.Logger) Option { return func(e *Executor) { e.log = l } }

// New makes an Executor whose every connection goes through guard.
func New(guard *netguard.Policy, opts ...Option) *Executor {
	e := &Executor{transport: guard.NewTransport(), log: slog.Default(), maxBytes: MaxResponseBytes}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Execute makes the call: it places the arguments argument_locations names, merges the parts
// (MergeParts), checks them against params_schema,
// builds the request, and sends it within the call's timeout (default 30 s, at most 600 s; a deadline
// on ctx, such as the chat path's time budget, bounds it too). Errors are typed (package fault):
// InvalidInput for bad arguments, Forbidden for guard refusals, Transient for failures worth a retry
// (connection refused or reset, DNS, 408, 429, 500, 502, 503, 504, 524), Timeout when the call's own
// time ran out, TooLarge for a response over the cap, Provider for other statuses.
func (e *Executor) Execute(ctx context.Context, def *tool.APICallDef, in Input) (*Result, error) {
	call, err := placeArguments(def, in.Call)
	if err != nil {
		return nil, err
	}
	if call, err = liftParameters(def, call); err != nil {
		return nil, err
	}
	parts, err := MergeParts(def, call, in.MetaArgs, in.MetaSetup)
	if err != nil {
		return nil, err
	}
	if err := checkArguments(def, in.Call, call, parts); err != nil {
		return nil, err
	}
	p, err := prepare(def, parts)
	if err != nil {
		return nil, err
	}
	if in.CallID != "" && p.header.Get(IdempotencyHeader) == "" {
		p.header.Set(IdempotencyHeader, in.CallID)
	}

	callCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	redirects := 0
	if p.followRedirects {
		redirects = MaxRedirects
	}
	client := netguard.NewClient(e.transport, redirects)
	client.CheckRedirect = redirectPolicy(client.CheckRedirect, boundHeaders(def, in.MetaArgs, in.MetaSetup))
	req, err := p.newRequest(callCtx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		err = e.sendError(ctx, callCtx, p, err)
		e.log.Info("api_call failed", "method", p.method, "host", p.url.Host, "kind", fault.KindOf(err), "ms", time.Since(start).Milliseconds())
		return nil, err
	}
	defer resp.Body.Close()

	res, n, err := e.readResponse(ctx, callCtx, p, resp, def)
	e.log.Info("api_call", "method", p.method, "host", p.url.Host, "status", resp.StatusCode, "bytes", n, "kind", fault.KindOf(err), "ms", time.Since(start).Milliseconds())
	return res, err
}

// redirectPolicy wraps next (the guard's bound on redirects) so that a hop to another origin than
// the definition's (scheme, host and port; netguard.CrossOrigin) carries none of the bound headers;
// the call's own headers go on.
func redirectPolicy(next func(*http.Request, []*http.Request) error, bound []string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if err := next(req, via); err != nil {
			return err
		}
		if netguard.CrossOrigin(req, via) {
			for _, h := range bound {
				req.Header.Del(h)
			}
		}
		return nil
	}
}

// sendError types an error from sending the request or following its redirects.
func (e *Executor) sendError(ctx, callCtx context.Context, p *prepared, err error) error {
	// Drop *url.Error's text: it repeats the URL, whose query may hold a key.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if te := timeoutError(ctx, callCtx, p); te != nil {
		return te
	}
	var tm *netguard.TooManyRedirectsError
	if errors.As(err, &tm) {
		return fault.Wrap(fault.Provider, err, "the API at %s redirected more than %d times", p.url.Host, tm.Max)
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe
	}
	var cve *tls.CertificateVerificationError
	if errors.As(err, &cve) {
		return fault.Wrap(fault.Provider, err, "the TLS certificate of %s could not be verified", p.url.Host)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("api_call to %s: %w", p.url.Host, err)
	}
	return fault.Wrap(fault.Transient, err, "the request to %s failed", p.url.Host)
}

// timeoutError says whose time ran out, if any: the call's own timeout, or the caller's deadline.
func timeoutError(ctx, callCtx context.Context, p *prepared) error {
	if !errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fault.Wrap(fault.Timeout, ctx.Err(), "the api_call to %s ran out of the caller's time budget", p.url.Host)
	}
	return fault.Wrap(fault.Timeout, callCtx.Err(), "the api_call to %s did not finish within its timeout of %s", p.url.Host, p.timeout)
}

func (e *Executor) readResponse(ctx, callCtx context.Context, p *prepared, resp *http.Response, def *tool.APICallDef) (*Result, int, error) {
	code := resp.StatusCode
	if code < 200 || code >= 400 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4*errorBodyChars))
		return nil, len(body), statusError(code, p.url.Host, body)
	}
	if resp.ContentLength > e.maxBytes {
		return nil, 0, tooLarge(p, e.maxBytes, fmt.Sprintf(" (Content-Length %d)", resp.ContentLength))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, e.maxBytes+1))
	if err != nil {
		if te := timeoutError(ctx, callCtx, p); te != nil {
			return nil, len(body), te
		}
		return nil, len(body), fault.Wrap(fault.Transient, err, "reading the response from %s failed", p.url.Host)
	}
	if int64(len(body)) > e.maxBytes {
		return nil, len(body), tooLarge(p, e.maxBytes, "")
	}

	res := &Result{StatusCode: code, Headers: make(map[string]string, len(resp.Header))}
	for _, k := range sortedHeaderKeys(resp.Header) {
		lk := strings.ToLower(k)
		if prev, ok := res.Headers[lk]; ok {
			res.Headers[lk] = prev + ", " + strings.Join(resp.Header[k], ", ")
			continue
		}
		res.Headers[lk] = strings.Join(resp.Header[k], ", ")
	}
	if len(body) > 0 {
		if v, err := jsonv.Decode(body); err == nil {
			res.JSON = v
		}
	}
	if p.includeContent {
		s := base64.StdEncoding.EncodeToString(body)
		res.Content = &s
	}
	if def != nil && def.Schema != nil && code < 300 {
		if res.JSON == nil && len(body) > 0 {
			return nil, len(body), fault.New(fault.Provider, "the response from %s is not JSON, but the tool's api_call.schema describes a JSON response", p.url.Host)
		}
		if msg := validate(jsonv.Normalize(jsonv.Clone(map[string]any(def.Schema))).(map[string]any), res.JSON, "response"); msg != "" {
			return nil, len(body), fault.New(fault.Provider, "the response from %s does not match the tool's api_call.schema: %s", p.url.Host, msg)
		}
	}
	return res, len(body), nil
}

// sortedHeaderKeys is sorted so that two spellings of one name join in a stable order.
func sortedHeaderKeys(h http.Header) []string { return slices.Sorted(maps.Keys(h)) }

func tooLarge(p *prepared, limit int64, detail string) error {
	return fault.New(fault.TooLarge, "the response from %s is larger than the %d-byte limit%s; ask the API for less (a page, a filter)", p.url.Host, limit, detail)
}

// statusError types a status that is not a result.
func statusError(code int, host string, body []byte) error {
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	if utf8.RuneCountInString(text) > errorBodyChars {
		text = string([]rune(text)[:errorBodyChars])
	}
	kind := fault.Provider
	switch code {
	case 408, 429, 500, 502, 503, 504, 524:
		kind = fault.Transient
	}
	status := fmt.Sprintf("%d", code)
	if st := http.StatusText(code); st != "" {
		status += " " + st
	}
	msg := fmt.Sprintf("the API at %s answered %s", host, status)
	if kind == fault.Provider && code >= 400 && code < 500 {
		msg += " (the request was refused; check the tool's definition and arguments)"
	}
	if text != "" {
		msg += ": " + text
	}
	return &fault.Error{Kind: kind, Msg: msg, Err: &StatusError{StatusCode: code, Body: text}}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
