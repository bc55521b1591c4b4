package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"sinew/internal/httprec"
)

// envInProcessAWS set to 0 sends the in-process functions' requests to local mode's own AWS APIs
// over loopback TCP, as any other client's, instead of handing them to the handler in-process.
const envInProcessAWS = "SINEW_LOCAL_IN_PROCESS_AWS"

// selfCalls serves the in-process functions' requests to local mode's own AWS endpoints (Step
// Functions, Lambda, EventBridge, KMS) with that endpoint's handler, in-process: the SDK still
// serializes the request and the same handler answers it, but without a loopback connection, its
// syscalls and a second HTTP parse, which under make soak's load were a fifth of the process's
// CPU. It is the innermost middleware of the Deserialize step, in the place of the SDK's HTTP
// client; every other request (DynamoDB Local) goes on to that client.
type selfCalls struct {
	hosts atomic.Pointer[map[string]http.Handler] // by host:port; nil until the endpoints serve
}

// serve hands the requests to hosts (host:port → handler) to their handlers from now on, unless
// envInProcessAWS turns it off.
func (s *selfCalls) serve(hosts map[string]http.Handler) {
	if os.Getenv(envInProcessAWS) == "0" {
		return
	}
	s.hosts.Store(&hosts)
}

// Register adds the middleware to a client's stack; add it after every other Deserialize
// middleware, so that it is the innermost.
func (s *selfCalls) Register(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("sinew.selfcalls",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			req, ok := in.Request.(*smithyhttp.Request)
			m := s.hosts.Load()
			if !ok || m == nil || (*m)[req.URL.Host] == nil {
				return next.HandleDeserialize(ctx, in)
			}
			// As the SDK's HTTP client handler does with its client's answer.
			built := req.Build(ctx)
			resp, err := serveInProcess((*m)[req.URL.Host], built)
			if built.Body != nil {
				_ = built.Body.Close()
			}
			if err != nil {
				return middleware.DeserializeOutput{}, middleware.Metadata{}, &smithyhttp.RequestSendError{Err: err}
			}
			return middleware.DeserializeOutput{RawResponse: &smithyhttp.Response{Response: resp}}, middleware.Metadata{}, nil
		}), middleware.After)
}

// serveInProcess gives h the request as net/http's server would have parsed it off the wire and
// answers the response as net/http's client would have read it. A panicking handler is, as for
// the server, a request that got no answer.
func serveInProcess(h http.Handler, r *http.Request) (resp *http.Response, err error) {
	// As a server's request: the context ends when the client gives up or the handler returns, and
	// carries none of the caller's values (an invocation's log, its Lambda context) or deadline.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := context.AfterFunc(r.Context(), cancel)
	defer stop()
	sr, err := serverRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	rec := httprec.New()
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("%s %s: the handler failed without an answer (%T)", r.Method, r.URL.Redacted(), p)
		}
	}()
	h.ServeHTTP(rec, sr)
	return response(rec, r), nil
}

// serverRequest is r as a server receives it, with ctx: the path and query only in URL, the host in Host,
// the body never nil.
func serverRequest(ctx context.Context, r *http.Request) (*http.Request, error) {
	u, err := url.ParseRequestURI(r.URL.RequestURI())
	if err != nil {
		return nil, fmt.Errorf("in-process request %s: %w", r.URL.Redacted(), err)
	}
	sr := r.Clone(ctx)
	sr.URL, sr.RequestURI, sr.RemoteAddr = u, r.URL.RequestURI(), "127.0.0.1:0"
	sr.Proto, sr.ProtoMajor, sr.ProtoMinor = "HTTP/1.1", 1, 1
	if sr.Host == "" {
		sr.Host = r.URL.Host
	}
	if sr.ContentLength > 0 {
		sr.Header.Set("Content-Length", strconv.FormatInt(sr.ContentLength, 10))
	}
	if sr.Body == nil {
		sr.Body = http.NoBody
	}
	return sr, nil
}

// response is rec's answer as the client reads it, with the headers net/http's server adds.
func response(rec *httprec.Recorder, req *http.Request) *http.Response {
	status, body, header := rec.Status(), rec.Body(), rec.Header()
	if header.Get("Content-Type") == "" && len(body) > 0 {
		header.Set("Content-Type", http.DetectContentType(body))
	}
	header.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: header, ContentLength: int64(len(body)),
		Body: io.NopCloser(bytes.NewReader(body)), Request: req}
}

// selfHosts are local mode's own AWS endpoints by host:port, each with its handler: the one AWS
// endpoint and each service's own. DynamoDB (proxied on the AWS endpoint) stays a request to
// DynamoDB Local either way; the HTTP API is not an AWS API.
func selfHosts(handlers map[string]http.Handler, listeners map[string]net.Listener) map[string]http.Handler {
	hosts := map[string]http.Handler{}
	for _, n := range []string{"aws", "stepfunctions", "lambda", "events", "kms"} {
		if h, l := handlers[n], listeners[n]; h != nil && l != nil {
			hosts[l.Addr().String()] = h
		}
	}
	return hosts
}
