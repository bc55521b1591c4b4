// Package httpapi is sinew's HTTP layer over API Gateway HTTP API events (payload format 2.0).
//
// It holds a router of method + path patterns, each route documented by its OpenAPI operation so
// `GET /openapi.json` is built from what is registered; the developer id from the JWT authorizer's
// claims; typed fault errors turned into statuses (StatusOf) and the error body {"error": {type,
// message, field}}; body limits, a strict JSON decoder, cursor pagination; one slog line per
// request, never the body. The same router serves local mode through HTTPHandler, a net/http
// adapter.
package httpapi

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"sinew/internal/fault"
)

// DefaultMaxBody is the body limit of a route that sets none (over it is a 413).
const DefaultMaxBody = 1 << 20

// HandlerFunc answers one request. A nil response with a nil error is a 204; an error becomes the
// error body with the status of its fault Kind.
type HandlerFunc func(ctx context.Context, r *Request) (*Response, error)

// Route is one method + path pattern and what answers it.
type Route struct {
	Method string
	// Path is a pattern of literal segments and {name} parameters: /agents/{agent_id}/tools/{tool_id}.
	Path string
	// Public routes need no developer id (only GET /openapi.json and GET /healthz are).
	Public bool
	// MaxBody is the route's own body limit in bytes; 0 means the router's (1 MiB by default).
	MaxBody int64
	// Function is the function that serves the route when deployed ("api" when empty): the CDK sends
	// the routes of other functions (chat) to them, and the rest to api.
	Function string
	Op       Operation
	Handler  HandlerFunc
}

// Options configure a Router.
type Options struct {
	JWTClaim string       // the claim holding the developer id; "sub" when empty (SINEW_JWT_CLAIM)
	MaxBody  int64        // the default body limit; DefaultMaxBody when 0
	Logger   *slog.Logger // slog.Default() when nil
	Title    string       // the OpenAPI document's title; "sinew" when empty
	Version  string       // the OpenAPI document's info.version; "0.0.0" when empty
}

// Router dispatches API Gateway HTTP API events to the registered routes.
type Router struct {
	opts    Options
	routes  []*route
	schemas map[string]any
	// documented are routes another function serves, listed in this router's OpenAPI document
	// only (Document).
	documented []*route
}

type route struct {
	Route
	segs []segment
}

type segment struct {
	lit   string
	param string // non-empty for a {param} segment
}

var paramNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// New makes a router serving GET /healthz and GET /openapi.json.
func New(opts Options) *Router {
	if opts.JWTClaim == "" {
		opts.JWTClaim = "sub"
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Title == "" {
		opts.Title = "sinew"
	}
	if opts.Version == "" {
		opts.Version = "0.0.0"
	}
	rt := &Router{opts: opts, schemas: map[string]any{}}
	rt.Schema("Error", errorSchema)
	rt.registerBuiltins()
	return rt
}

// Handle registers a route. A malformed pattern or a second route for the same method and pattern is
// a programming error, found when the function starts, so it panics.
func (rt *Router) Handle(r Route) {
	if r.Handler == nil {
		panic(fmt.Sprintf("httpapi: %s %s has no handler", r.Method, r.Path))
	}
	r.Method = strings.ToUpper(r.Method)
	if r.Method == "" || strings.ContainsAny(r.Method, " /") {
		panic(fmt.Sprintf("httpapi: bad method %q for %s", r.Method, r.Path))
	}
	segs, err := parsePattern(r.Path)
	if err != nil {
		panic(fmt.Sprintf("httpapi: %s %s: %v", r.Method, r.Path, err))
	}
	for _, o := range rt.routes {
		if o.Method == r.Method && samePattern(o.segs, segs) {
			panic(fmt.Sprintf("httpapi: %s %s registered twice (as %s)", r.Method, r.Path, o.Path))
		}
	}
	if r.Function == "" {
		r.Function = "api"
	}
	rt.routes = append(rt.routes, &route{Route: r, segs: segs})
}

func parsePattern(p string) ([]segment, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("the pattern must start with /")
	}
	if p == "/" {
		return nil, nil
	}
	var segs []segment
	seen := map[string]bool{}
	for _, s := range strings.Split(p[1:], "/") {
		switch {
		case s == "":
			return nil, fmt.Errorf("empty segment")
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			name := s[1 : len(s)-1]
			if !paramNameRE.MatchString(name) {
				return nil, fmt.Errorf("bad parameter name %q", name)
			}
			if seen[name] {
				return nil, fmt.Errorf("parameter %q twice", name)
			}
			seen[name] = true
			segs = append(segs, segment{param: name})
		case strings.ContainsAny(s, "{}"):
			return nil, fmt.Errorf("a parameter must be a whole segment: %q", s)
		default:
			segs = append(segs, segment{lit: s})
		}
	}
	return segs, nil
}

func samePattern(a, b []segment) bool {
	return slices.EqualFunc(a, b, func(x, y segment) bool { return x.lit == y.lit && (x.param == "") == (y.param == "") })
}

// match gives the path parameters when the segments match the route's pattern.
func (r *route) match(path []string) (map[string]string, bool) {
	if len(path) != len(r.segs) {
		return nil, false
	}
	var params map[string]string
	for i, s := range r.segs {
		if s.param == "" {
			if path[i] != s.lit {
				return nil, false
			}
			continue
		}
		if path[i] == "" {
			return nil, false
		}
		if params == nil {
			params = map[string]string{}
		}
		params[s.param] = path[i]
	}
	return params, true
}

// moreSpecific reports whether a should win over b for the same path: the first segment where one is
// a literal and the other a parameter decides (/executions/pending over /executions/{id}).
func moreSpecific(a, b *route) bool {
	for i := range a.segs {
		al, bl := a.segs[i].param == "", b.segs[i].param == ""
		if al != bl {
			return al
		}
	}
	return false
}

// RouteInfo is what the deployment needs to know of a route.
type RouteInfo struct {
	Method, Path, Function string
	Public                 bool
}

// Routes lists the registered routes in registration order: the CDK makes the public ones without
// the JWT authorizer and sends each to its function.
func (rt *Router) Routes() []RouteInfo {
	out := make([]RouteInfo, 0, len(rt.routes))
	for _, r := range rt.routes {
		out = append(out, RouteInfo{Method: r.Method, Path: r.Path, Function: r.Function, Public: r.Public})
	}
	return out
}

// ServeEvent answers one API Gateway HTTP API event: the Lambda handler of the HTTP functions. It
// never returns an error: every failure is an HTTP answer.
func (rt *Router) ServeEvent(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	start := time.Now()
	req := &Request{Event: &ev, Method: strings.ToUpper(ev.RequestContext.HTTP.Method)}
	resp, matched, err := rt.serve(ctx, req)
	out := rt.render(ctx, req, resp, err)
	rt.logRequest(ctx, req, matched, out.StatusCode, time.Since(start), err)
	return out, nil
}

func (rt *Router) serve(ctx context.Context, req *Request) (resp *Response, matched *route, err error) {
	ev := req.Event
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	// A named stage prefixes the path with its name; the $default stage does not.
	if st := ev.RequestContext.Stage; st != "" && st != "$default" {
		if rest, ok := strings.CutPrefix(path, "/"+st); ok && (rest == "" || rest[0] == '/') {
			path = rest
		}
	}
	if path == "" {
		path = "/"
	}
	segs, err := splitPath(path)
	if err != nil {
		return nil, nil, err
	}
	req.Path = path

	var allow []string
	for _, r := range rt.routes {
		params, ok := r.match(segs)
		if !ok {
			continue
		}
		if r.Method != req.Method {
			if !slices.Contains(allow, r.Method) {
				allow = append(allow, r.Method)
			}
			continue
		}
		if matched == nil || moreSpecific(r, matched) {
			matched, req.params = r, params
		}
	}
	if matched == nil {
		if len(allow) > 0 {
			slices.Sort(allow)
			return nil, nil, &httpError{status: http.StatusMethodNotAllowed, typ: TypeMethodNotAllowed,
				msg:     fmt.Sprintf("%s is not allowed on %s; allowed: %s", req.Method, path, strings.Join(allow, ", ")),
				headers: map[string]string{"allow": strings.Join(allow, ", ")}}
		}
		return nil, nil, fault.New(fault.NotFound, "no route %s %s", req.Method, path)
	}
	req.Route = matched.Path

	if !matched.Public {
		var claims map[string]string
		if a := ev.RequestContext.Authorizer; a != nil && a.JWT != nil {
			claims = a.JWT.Claims
		}
		req.DeveloperID = claims[rt.opts.JWTClaim]
		if req.DeveloperID == "" {
			return nil, matched, fault.New(fault.Unauthorized, "a bearer token whose %q claim names the developer is required", rt.opts.JWTClaim)
		}
	}

	limit := matched.MaxBody
	if limit <= 0 {
		limit = rt.opts.MaxBody
	}
	if req.body, err = readBody(ev, limit); err != nil {
		return nil, matched, err
	}
	if req.query, err = parseQuery(ev); err != nil {
		return nil, matched, err
	}

	defer func() {
		if p := recover(); p != nil {
			rt.opts.Logger.ErrorContext(ctx, "handler panicked", "route", matched.Path, "method", req.Method,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp, err = nil, fault.New(fault.Internal, "internal error")
		}
	}()
	resp, err = matched.Handler(ctx, req)
	return resp, matched, err
}

// splitPath splits an escaped path into unescaped segments; a trailing slash is ignored.
func splitPath(p string) ([]string, error) {
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return nil, nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, fault.Invalid("path", "the path has a malformed escape in %q", s)
		}
		parts[i] = u
	}
	return parts, nil
}

func readBody(ev *events.APIGatewayV2HTTPRequest, limit int64) ([]byte, error) {
	tooLarge := func(n int64) error {
		return fault.New(fault.TooLarge, "the request body is %d bytes; this route accepts at most %d", n, limit)
	}
	if !ev.IsBase64Encoded {
		if int64(len(ev.Body)) > limit {
			return nil, tooLarge(int64(len(ev.Body)))
		}
		return []byte(ev.Body), nil
	}
	// Refuse before decoding what cannot fit.
	if n := int64(base64.StdEncoding.DecodedLen(len(ev.Body))); n > limit+2 {
		return nil, tooLarge(n)
	}
	b, err := base64.StdEncoding.DecodeString(ev.Body)
	if err != nil {
		return nil, fault.Invalid("body", "the request body is marked base64 but does not decode: %v", err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(int64(len(b)))
	}
	return b, nil
}

func parseQuery(ev *events.APIGatewayV2HTTPRequest) (url.Values, error) {
	if ev.RawQueryString == "" {
		q := url.Values{}
		// API Gateway joins a repeated parameter's values with commas in this map; the raw string is
		// the exact form, used when present.
		for k, v := range ev.QueryStringParameters {
			q.Set(k, v)
		}
		return q, nil
	}
	q, err := url.ParseQuery(ev.RawQueryString)
	if err != nil {
		return nil, fault.Invalid("query", "the query string is malformed: %v", err)
	}
	return q, nil
}

func (rt *Router) logRequest(ctx context.Context, req *Request, matched *route, status int, d time.Duration, err error) {
	routeName := ""
	if matched != nil {
		routeName = matched.Path
	}
	attrs := []slog.Attr{
		slog.String("method", req.Method),
		slog.String("route", routeName),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.String("developer_id", req.DeveloperID),
		slog.String("request_id", req.Event.RequestContext.RequestID),
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
		if err != nil {
			// The full error, for the operator; the caller saw only a generic message.
			attrs = append(attrs, slog.String("error", err.Error()))
		}
	}
	rt.opts.Logger.LogAttrs(ctx, level, "request", attrs...)
}
