package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/httprec"
)

// transportOptions: stateless (each request stands alone, as Lambda serves it) and JSON answers
// (API Gateway's HTTP API cannot stream a Lambda's answer). The router has bounded the body. The
// SDK's DNS-rebinding guard is for servers a browser can reach without credentials; these routes
// need a bearer token, and the request made here has no Host of the caller's to check.
var transportOptions = &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: -1,
	DisableLocalhostProtection: true}

// serveMCP runs one request through the SDK's streamable HTTP handler and gives its answer as the
// router's response.
func serveMCP(ctx context.Context, srv *mcp.Server, r *httpapi.Request) (*httpapi.Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, "http://sinew"+r.Path, bytes.NewReader(r.Body()))
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "mcp: making the request")
	}
	for k, v := range r.Event.Headers {
		req.Header.Set(k, v)
	}
	// Every answer here is JSON, which a client that sends no Accept at all takes as well.
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	rec := httprec.New()
	mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, transportOptions).ServeHTTP(rec, req)
	return response(rec), nil
}

// response is w's answer as the router's: JSON as it is; the transport's plain-text refusals
// (a missing Accept, a wrong Content-Type) as sinew's error body with the same status.
func response(w *httprec.Recorder) *httpapi.Response {
	status := w.Status()
	resp := &httpapi.Response{Status: status, Headers: map[string]string{}}
	if allow := w.Header().Get("Allow"); allow != "" {
		resp.Headers["allow"] = allow
	}
	body := bytes.TrimSpace(w.Body())
	if len(body) == 0 {
		return resp
	}
	if mt, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type")); mt == "application/json" && json.Valid(body) {
		resp.Body = json.RawMessage(body)
		return resp
	}
	typ := string(fault.InvalidInput)
	switch {
	case status == http.StatusRequestEntityTooLarge:
		typ = string(fault.TooLarge)
	case status >= 500:
		typ = string(fault.Internal)
	}
	resp.Body = httpapi.ErrorBody{Error: httpapi.ErrorDetail{Type: typ, Message: "mcp: " + strings.TrimSpace(string(body))}}
	return resp
}
