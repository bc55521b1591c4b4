// Package mcp is the mcp integration.
//
// It offers list_tools (the default method) and call_tool against a Model Context Protocol server
// over streamable HTTP ("http") or SSE ("sse"), with the official Go SDK as client. There is no
// stdio transport, as in Julep (it was removed for security): the stdio fields of the setup are
// refused if set, so no caller can make sinew run a program.
//
// Every HTTP request goes through the network guard, redirects included. Where sinew differs from
// Julep: failures are typed errors (an unreachable server or a 5xx/429 is Sinew.Transient, an HTTP
// 4xx or a JSON-RPC error is Sinew.Provider, timeout_seconds running out is Sinew.Timeout) and there
// is no retry loop of the provider's own; list_tools follows pagination to the end; the setup's
// http_headers go only to the host of http_url, never to another host a redirect or an SSE endpoint
// names; response bodies are bounded.
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/mcp.py
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/fault"
	"sinew/internal/netguard"
)

// Setup is the provider's setup.
type Setup struct {
	Transport   string            `json:"transport" jsonschema:"enum=sse,enum=http" jsonschema_description:"MCP transport: http (streamable HTTP) or sse"`
	HTTPURL     string            `json:"http_url,omitempty" jsonschema:"format=uri" jsonschema_description:"the server's MCP endpoint URL (http or https)" sinew:"endpoint"`
	HTTPHeaders map[string]string `json:"http_headers,omitempty" jsonschema_description:"headers sent with every request to the server's host, e.g. Authorization" sinew:"secret"`
	// Julep's stdio fields: kept so a Julep setup parses, refused when set.
	Command string            `json:"command,omitempty" jsonschema_description:"not supported: stdio servers cannot be run"`
	Args    []string          `json:"args,omitempty" jsonschema_description:"not supported: stdio servers cannot be run"`
	Cwd     string            `json:"cwd,omitempty" jsonschema_description:"not supported: stdio servers cannot be run"`
	Env     map[string]string `json:"env,omitempty" jsonschema_description:"not supported: stdio servers cannot be run" sinew:"secret"`
}

// ListToolsArguments are list_tools' arguments: Julep's placeholder, ignored.
type ListToolsArguments struct {
	Dummy string `json:"dummy,omitempty" jsonschema_description:"placeholder, ignored"`
}

// ToolInfo is one tool the server offers.
type ToolInfo struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
	InputSchema any     `json:"input_schema"`
}

// ListToolsOutput is list_tools' result.
type ListToolsOutput struct {
	Tools []ToolInfo `json:"tools"`
}

// CallToolArguments are call_tool's arguments.
type CallToolArguments struct {
	ToolName       string         `json:"tool_name" jsonschema_description:"name of the tool to call"`
	Arguments      map[string]any `json:"arguments,omitempty" jsonschema_description:"the tool's arguments"`
	TimeoutSeconds *int           `json:"timeout_seconds,omitempty" jsonschema:"minimum=0,maximum=280,default=60" jsonschema_description:"bound on the call in seconds; 0 means the provider's own bound"`
}

// CallToolOutput is call_tool's result, normalised as Julep's: the text items joined by "\n" (null
// when there are none), the structured content, every content item as its JSON object, and the
// server's isError reported rather than raised.
type CallToolOutput struct {
	Text       *string          `json:"text"`
	Structured any              `json:"structured"`
	Content    []map[string]any `json:"content"`
	IsError    bool             `json:"is_error"`
}

// Env is what the provider takes from its surroundings.
type Env struct {
	// Guard dials every connection (required).
	Guard *netguard.Policy
	// Timeout bounds connecting and list_tools, and call_tool when timeout_seconds is 0 (default 60 s).
	Timeout time.Duration
	// MaxResponseBytes bounds each HTTP response body (default 8 MiB).
	MaxResponseBytes int64
	Log              *slog.Logger
}

const (
	defaultCallTimeout = 60 * time.Second
	// maxCallTimeout leaves the integration function (300 s, internal/deploy) time to store the
	// result after the longest call: a longer bound would be cut by Lambda, not by the provider.
	maxCallTimeout = 280 * time.Second
	maxTools       = 10000
)

// Validate checks the setup, naming the field at fault.
func (s Setup) Validate() error {
	switch s.Transport {
	case "http", "sse":
	case "stdio":
		return fault.Invalid("setup.transport", "setup.transport stdio is not supported: sinew runs no local MCP server; use http or sse")
	case "":
		return fault.Invalid("setup.transport", "setup.transport is required: http or sse")
	default:
		return fault.Invalid("setup.transport", "setup.transport must be http or sse, got %q", s.Transport)
	}
	for field, set := range map[string]bool{"setup.command": s.Command != "", "setup.args": len(s.Args) > 0, "setup.cwd": s.Cwd != "", "setup.env": len(s.Env) > 0} {
		if set {
			return fault.Invalid(field, "%s is for stdio servers, which sinew does not run; leave it out", field)
		}
	}
	if s.HTTPURL == "" {
		return fault.Invalid("setup.http_url", "setup.http_url is required for the %s transport (or an operator's SINEW_MCP_BASE_URL)", s.Transport)
	}
	u, err := url.Parse(s.HTTPURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fault.Invalid("setup.http_url", "setup.http_url must be an absolute http or https URL")
	}
	if u.User != nil {
		return fault.Invalid("setup.http_url", "setup.http_url may not carry credentials; put them in setup.http_headers")
	}
	for k, v := range s.HTTPHeaders {
		if !validHeaderName(k) {
			return fault.Invalid("setup.http_headers", "setup.http_headers has an invalid header name %q", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return fault.Invalid("setup.http_headers", "setup.http_headers[%s] may not contain CR, LF or NUL", k)
		}
	}
	return nil
}

// Validate checks call_tool's arguments, naming the field at fault.
func (a CallToolArguments) Validate() error {
	if strings.TrimSpace(a.ToolName) == "" {
		return fault.Invalid("tool_name", "tool_name is required: the name of the MCP tool to call")
	}
	if a.TimeoutSeconds != nil && (*a.TimeoutSeconds < 0 || *a.TimeoutSeconds > int(maxCallTimeout/time.Second)) {
		return fault.Invalid("timeout_seconds", "timeout_seconds must be from 0 to %d, got %d", int(maxCallTimeout/time.Second), *a.TimeoutSeconds)
	}
	return nil
}

// ListTools lists every tool the server offers, page after page.
func ListTools(ctx context.Context, env Env, setup Setup, _ ListToolsArguments) (ListToolsOutput, error) {
	if err := setup.Validate(); err != nil {
		return ListToolsOutput{}, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, env.timeout())
	defer cancel()
	s, err := connect(parent, ctx, env, setup, env.timeout(), false)
	if err != nil {
		return ListToolsOutput{}, err
	}
	defer s.close(ctx)
	out := ListToolsOutput{Tools: []ToolInfo{}}
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return ListToolsOutput{}, s.classify(ctx, err, "list_tools")
		}
		if len(out.Tools) >= maxTools {
			return ListToolsOutput{}, fault.New(fault.TooLarge, "the MCP server offers more than %d tools", maxTools)
		}
		info := ToolInfo{Name: t.Name, InputSchema: t.InputSchema}
		if t.Description != "" {
			d := t.Description
			info.Description = &d
		}
		out.Tools = append(out.Tools, info)
	}
	return out, nil
}

// CallTool calls one tool and normalises its result.
func CallTool(ctx context.Context, env Env, setup Setup, args CallToolArguments) (CallToolOutput, error) {
	if err := setup.Validate(); err != nil {
		return CallToolOutput{}, err
	}
	if err := args.Validate(); err != nil {
		return CallToolOutput{}, err
	}
	// The call's own bound covers connecting too: Julep bounds only the call, but a caller that sets
	// timeout_seconds means the whole operation.
	bound, callers := defaultCallTimeout, true
	if args.TimeoutSeconds != nil {
		bound = time.Duration(*args.TimeoutSeconds) * time.Second
	}
	if bound == 0 {
		bound, callers = env.timeout(), false
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	s, err := connect(parent, ctx, env, setup, bound, callers)
	if err != nil {
		return CallToolOutput{}, err
	}
	defer s.close(ctx)
	arguments := args.Arguments
	if arguments == nil {
		arguments = map[string]any{}
	}
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: args.ToolName, Arguments: arguments})
	if err != nil {
		return CallToolOutput{}, s.classify(ctx, err, "call_tool "+args.ToolName)
	}
	return normalise(res)
}

func normalise(res *sdk.CallToolResult) (CallToolOutput, error) {
	out := CallToolOutput{Structured: res.StructuredContent, Content: make([]map[string]any, 0, len(res.Content)), IsError: res.IsError}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok && tc.Text != "" {
			texts = append(texts, tc.Text)
		}
		b, err := json.Marshal(c)
		if err != nil {
			return CallToolOutput{}, fault.Wrap(fault.Provider, err, "the MCP server sent a content item that cannot be encoded")
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return CallToolOutput{}, fault.Wrap(fault.Provider, err, "the MCP server sent a content item that is not an object")
		}
		out.Content = append(out.Content, m)
	}
	if len(texts) > 0 {
		t := strings.Join(texts, "\n")
		out.Text = &t
	}
	if out.Structured != nil {
		// Keep the JSON value form (map[string]any etc.), not the SDK's raw message.
		if raw, ok := out.Structured.(json.RawMessage); ok {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return CallToolOutput{}, fault.Wrap(fault.Provider, err, "the MCP server sent structured content that is not JSON")
			}
			out.Structured = v
		}
	}
	return out, nil
}

// passed reports whether ctx is done or its deadline has come (a timer can lag the deadline).
func passed(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

func (e Env) timeout() time.Duration {
	if e.Timeout > 0 {
		return e.Timeout
	}
	return defaultCallTimeout
}

// session is one connected client session and what its HTTP traffic recorded, for typing errors.
type session struct {
	cs       *sdk.ClientSession
	rec      *recorder
	endpoint string
	// parent is the caller's context; the operation's runs out after limit, which is the caller's
	// own bound (timeout_seconds) when callers is set, else the provider's.
	parent  context.Context
	limit   time.Duration
	callers bool
}

// close ends the session. After the context ran out, the SDK's polite goodbye (an HTTP DELETE with
// its own 5 s bound) runs in the background so the caller's bound holds.
func (s *session) close(ctx context.Context) {
	if ctx.Err() != nil {
		go func() { _ = s.cs.Close() }()
		return
	}
	_ = s.cs.Close()
}

func connect(parent, ctx context.Context, env Env, setup Setup, limit time.Duration, callers bool) (*session, error) {
	if env.Guard == nil {
		return nil, fault.New(fault.Internal, "mcp: no network guard configured")
	}
	u, _ := url.Parse(setup.HTTPURL)
	maxBody := env.MaxResponseBytes
	if maxBody <= 0 {
		maxBody = 8 << 20
	}
	rec := &recorder{next: transportFor(env.Guard), origin: u.Host, headers: setup.HTTPHeaders, maxBody: maxBody}
	client := netguard.NewClient(rec, 5)

	var transport sdk.Transport
	switch setup.Transport {
	case "http":
		transport = &sdk.StreamableClientTransport{
			Endpoint:   setup.HTTPURL,
			HTTPClient: client,
			MaxRetries: -1, // no retry loop of the provider's own: transient failures go back typed
			// One request at a time is all a list or a call needs; the standalone stream would hold a
			// second connection open for server notifications nobody reads.
			DisableStandaloneSSE: true,
		}
	case "sse":
		transport = &sdk.SSEClientTransport{Endpoint: setup.HTTPURL, HTTPClient: client}
	}
	log := env.Log
	if log == nil {
		log = slog.Default()
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "sinew", Version: "1"}, &sdk.ClientOptions{Logger: log})
	s := &session{rec: rec, endpoint: redact(u), parent: parent, limit: limit, callers: callers}
	cs, err := c.Connect(ctx, transport, nil)
	if err != nil {
		return nil, s.classify(ctx, err, "connect")
	}
	s.cs = cs
	return s, nil
}

// classify types an error of the SDK. The SDK flattens causes into text, so the recorder's view of
// the HTTP traffic (a dial refused or failed, an HTTP status, a body over the bound) decides first.
func (s *session) classify(ctx context.Context, err error, step string) error {
	if dialErr := s.rec.dialErr(); dialErr != nil {
		var fe *fault.Error
		if errors.As(dialErr, &fe) && fe.Kind != fault.Transient {
			return fault.Wrap(fe.Kind, err, "%s: %s", fe.Msg, step)
		}
		if !passed(ctx) {
			return fault.Wrap(fault.Transient, err, "could not connect to the MCP server %s (%s)", s.endpoint, step)
		}
	}
	if s.rec.tooLarge() {
		return fault.Wrap(fault.TooLarge, err, "the MCP server %s sent a response over %d bytes (%s)", s.endpoint, s.rec.maxBody, step)
	}
	switch {
	case passed(s.parent):
		return fault.Wrap(fault.Timeout, err, "the call ran out of time during %s with the MCP server %s", step, s.endpoint)
	case passed(ctx) && s.callers:
		return fault.Wrap(fault.Timeout, err, "the MCP server %s did not finish %s within timeout_seconds (%s)", s.endpoint, step, s.limit)
	case passed(ctx):
		// The provider's own bound, not the caller's: a server that stops answering may answer later.
		return fault.Wrap(fault.Transient, err, "the MCP server %s did not answer %s within %s", s.endpoint, step, s.limit)
	}
	if code := s.rec.status(); code != 0 {
		switch code {
		case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout, 524:
			return fault.Wrap(fault.Transient, err, "the MCP server %s answered HTTP %d (%s)", s.endpoint, code, step)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fault.Wrap(fault.Provider, err, "the MCP server %s refused the request with HTTP %d (%s); check setup.http_headers", s.endpoint, code, step)
		default:
			return fault.Wrap(fault.Provider, err, "the MCP server %s answered HTTP %d (%s)", s.endpoint, code, step)
		}
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return fault.Wrap(fault.Provider, err, "the MCP server %s refused %s: %s", s.endpoint, step, we.Message)
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fault.Wrap(fault.Transient, err, "the connection to the MCP server %s failed (%s)", s.endpoint, step)
	}
	return fault.Wrap(fault.Provider, err, "the MCP server %s failed %s: %s", s.endpoint, step, firstLine(err.Error(), 300))
}

// transports keeps one guarded transport per guard, so warm calls to the same server reuse their
// connections (a Lambda keeps its guard for its lifetime).
var transports sync.Map // *netguard.Policy → *http.Transport

func transportFor(g *netguard.Policy) http.RoundTripper {
	if t, ok := transports.Load(g); ok {
		return t.(http.RoundTripper)
	}
	t, _ := transports.LoadOrStore(g, g.NewTransport())
	return t.(http.RoundTripper)
}

// recorder is the HTTP layer under the SDK: it adds the setup's headers to requests for the
// endpoint's own host, bounds response bodies, and remembers what went wrong.
type recorder struct {
	next    http.RoundTripper
	origin  string
	headers map[string]string
	maxBody int64

	mu       sync.Mutex
	lastDial error // the last transport error: the guard's refusal or a failed connection
	code     int
	overflow bool
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == r.origin && len(r.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range r.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		// http.Transport passes the guard's typed dial error through; keep it, since the SDK
		// flattens the errors it returns into text.
		if !errors.Is(err, context.Canceled) {
			r.mu.Lock()
			r.lastDial = err
			r.mu.Unlock()
		}
		return nil, err
	}
	if resp.StatusCode >= 400 {
		r.mu.Lock()
		r.code = resp.StatusCode
		r.mu.Unlock()
	}
	resp.Body = &limitedBody{rc: resp.Body, left: r.maxBody, over: func() {
		r.mu.Lock()
		r.overflow = true
		r.mu.Unlock()
	}}
	return resp, nil
}

func (r *recorder) dialErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastDial
}

func (r *recorder) status() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.code
}

func (r *recorder) tooLarge() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.overflow
}

// errBodyTooLarge ends a response body that passed the bound.
var errBodyTooLarge = errors.New("mcp: response body over the size bound")

type limitedBody struct {
	rc   io.ReadCloser
	left int64
	over func()
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body that ends exactly at the bound from one that goes past it.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			b.over()
			return 0, errBodyTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c > 0x7e || c <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

// redact drops the query (it may hold a token) from a URL for messages.
func redact(u *url.URL) string {
	v := *u
	v.RawQuery, v.ForceQuery, v.Fragment = "", false, ""
	return v.String()
}

func firstLine(s string, max int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// String of a setup never shows the headers' values (they carry tokens).
func (s Setup) String() string {
	return fmt.Sprintf("mcp.Setup{transport: %s, http_url: %s, %d headers}", s.Transport, s.HTTPURL, len(s.HTTPHeaders))
}
