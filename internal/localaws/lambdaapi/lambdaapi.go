// Package lambdaapi is local mode's stand-in for the Lambda Invoke API.
//
// It serves `POST /2015-03-31/functions/{FunctionName}/invocations` over a registry of in-process
// handlers, so the chat path's dispatcher reaches the executors through the same SDK call locally
// as in AWS (AWS_ENDPOINT_URL_LAMBDA). RequestResponse answers the function's payload, a function
// error as 200 with `X-Amz-Function-Error: Unhandled` and `{"errorType", "errorMessage"}`; Event
// runs the function in the background (202); DryRun answers 204; LogType Tail returns the last 4 KB
// of the invocation's log (Lambda's START/END/REPORT lines around what the function logged with its
// context, see TeeLogs). ListFunctions and GetFunction describe the registered functions; any other
// operation answers UnknownOperationException. Service errors use Lambda's codes and statuses.
package lambdaapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"sinew/internal/localaws/awsjson"
	"sinew/internal/localaws/outbox"

	"github.com/google/uuid"
)

// Lambda's payload limits.
const (
	MaxSyncPayload  = 6 << 20 // RequestResponse request and response: 6 MB
	MaxAsyncPayload = 1 << 20 // Event request: 1 MB
	// maxResponse is what Lambda checks the function's response against (6 MB and 100 bytes).
	maxResponse = MaxSyncPayload + 100
)

// FunctionError is a function's failure as Lambda reports it: sinew's handlers name it with the
// fixed names of package fault (Sinew.Transient, ...).
type FunctionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
}

func (e *FunctionError) Error() string { return e.Type + ": " + e.Message }

// Invoker runs one function in-process. A *FunctionError is the function's own failure (Lambda
// answers it with X-Amz-Function-Error); a non-nil error is a failure to run the function at all
// (Lambda's ServiceException).
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, *FunctionError, error)
}

// InvokerFunc adapts a function to Invoker.
type InvokerFunc func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error)

// Invoke calls f.
func (f InvokerFunc) Invoke(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
	return f(ctx, payload)
}

// Options configure a Service.
type Options struct {
	Region  string // default us-east-1
	Account string // default 000000000000
	Logger  *slog.Logger
	// Timeout is a function's timeout (its deployed one); nil or 0 is Lambda's maximum.
	Timeout func(name string) time.Duration
}

// MaxTimeout is Lambda's longest function timeout.
const MaxTimeout = 15 * time.Minute

// Service is the Invoke API endpoint. It is safe for concurrent use.
type Service struct {
	region, account string
	log             *slog.Logger
	timeout         func(name string) time.Duration

	mu  sync.RWMutex
	fns map[string]Invoker

	started time.Time // the functions' LastModified

	async   sync.WaitGroup // Event invocations still running, when not journaled
	closing chan struct{}
	once    sync.Once
	outbox  *outbox.Outbox // the Event invocations' journal (StartAsync), or nil (s.mu)
}

// New makes an endpoint with no functions; Register adds them.
func New(opts Options) *Service {
	s := &Service{
		region:  opts.Region,
		account: opts.Account,
		log:     opts.Logger,
		timeout: opts.Timeout,
		fns:     map[string]Invoker{},
		closing: make(chan struct{}),
		started: time.Now().UTC(),
	}
	if s.region == "" {
		s.region = "us-east-1"
	}
	if s.account == "" {
		s.account = "000000000000"
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

var plainName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Register makes inv answer for the function called name (a plain function name, as deployed).
func (s *Service) Register(name string, inv Invoker) error {
	if !plainName.MatchString(name) {
		return fmt.Errorf("lambdaapi: function name %q must be 1 to 64 letters, digits, hyphens or underscores", name)
	}
	if inv == nil {
		return fmt.Errorf("lambdaapi: function %s: nil invoker", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fns[name] = inv
	return nil
}

// Close stops accepting Event invocations and waits for the running ones, or for ctx; journaled
// ones still running are stopped, and run again after the next start.
func (s *Service) Close(ctx context.Context) error {
	s.once.Do(func() { close(s.closing) })
	s.mu.RLock()
	ob := s.outbox
	s.mu.RUnlock()
	if ob != nil {
		if err := ob.Close(); err != nil {
			return fmt.Errorf("lambdaapi: %w", err)
		}
	}
	done := make(chan struct{})
	go func() { s.async.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("lambdaapi: waiting for event invocations: %w", ctx.Err())
	}
}

// apiError is a Lambda service error.
type apiError struct {
	status  int
	code    string
	message string
}

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

func (s *Service) functionARN(name string) string {
	return "arn:aws:lambda:" + s.region + ":" + s.account + ":function:" + name
}

// The FunctionName forms Lambda accepts: a name, name:qualifier, a partial ARN
// (account:function:name) or a full ARN, each with an optional qualifier.
var functionNamePattern = regexp.MustCompile(`^(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9_.-]+)(:(\$LATEST|[a-zA-Z0-9_-]+))?$`)

const functionNameRegex = `(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_\.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?`

// resolve finds the invoker for a FunctionName and Qualifier.
func (s *Service) resolve(ref, qualifier string) (Invoker, string, *apiError) {
	if len(ref) < 1 || len(ref) > 170 || !functionNamePattern.MatchString(ref) {
		return nil, "", errorf(http.StatusBadRequest, "ValidationException",
			"1 validation error detected: Value '%s' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: %s", awsjson.Clip(ref, 200), functionNameRegex)
	}
	m := functionNamePattern.FindStringSubmatch(ref)
	region := strings.TrimSuffix(m[3], ":")
	account := strings.TrimSuffix(m[5], ":")
	name, nameQualifier := m[7], m[9]
	if m[1] != "" && (region == "" || account == "") {
		return nil, "", errorf(http.StatusBadRequest, "ValidationException",
			"1 validation error detected: Value '%s' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: %s", awsjson.Clip(ref, 200), functionNameRegex)
	}
	if len(qualifier) > 128 || !qualifierPattern.MatchString(qualifier) {
		return nil, "", errorf(http.StatusBadRequest, "ValidationException",
			"1 validation error detected: Value '%s' at 'qualifier' failed to satisfy constraint: Member must satisfy regular expression pattern: (|[a-zA-Z0-9$_-]+)", awsjson.Clip(qualifier, 200))
	}
	if nameQualifier != "" && qualifier != "" && nameQualifier != qualifier {
		return nil, "", errorf(http.StatusBadRequest, "InvalidParameterValueException", "The derived qualifier from the function name does not match the specified qualifier.")
	}
	if qualifier == "" {
		qualifier = nameQualifier
	}
	arn := s.functionARN(name)
	if qualifier != "" {
		arn += ":" + qualifier
	}
	if (region != "" && region != s.region) || (account != "" && account != s.account) {
		return nil, "", errorf(http.StatusNotFound, "ResourceNotFoundException", "Function not found: %s", awsjson.Clip(ref, 200))
	}
	s.mu.RLock()
	inv, ok := s.fns[name]
	s.mu.RUnlock()
	// Local functions have one version: $LATEST.
	if !ok || (qualifier != "" && qualifier != "$LATEST") {
		return nil, "", errorf(http.StatusNotFound, "ResourceNotFoundException", "Function not found: %s", arn)
	}
	return inv, name, nil
}

var qualifierPattern = regexp.MustCompile(`^[a-zA-Z0-9$_-]*$`)

// ServeHTTP answers Invoke requests. It never panics on any input, a panicking function included.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	reqID := uuid.NewString()
	w.Header().Set("X-Amzn-RequestId", reqID)
	attrs := []any{"request_id", reqID}
	status, outcome := s.serve(w, r, &attrs)
	attrs = append(attrs, "status", status, "outcome", outcome, "duration_ms", time.Since(start).Milliseconds())
	s.log.InfoContext(r.Context(), "lambda invoke", attrs...)
}

func (s *Service) serve(w http.ResponseWriter, r *http.Request, attrs *[]any) (int, string) {
	if st, out, ok := s.serveControl(w, r); ok {
		return st, out
	}
	ref, ok := functionFromPath(r.URL)
	if !ok {
		return s.writeError(w, errorf(http.StatusNotFound, "UnknownOperationException", "Unknown operation: %s %s", r.Method, awsjson.Clip(r.URL.Path, 200)))
	}
	if r.Method != http.MethodPost {
		return s.writeError(w, errorf(http.StatusMethodNotAllowed, "UnknownOperationException", "Invoke accepts only POST"))
	}
	invType := r.Header.Get("X-Amz-Invocation-Type")
	limit := int64(MaxSyncPayload)
	operation := "InvokeFunction"
	switch invType {
	case "", "RequestResponse":
		invType = "RequestResponse"
	case "Event":
		limit, operation = MaxAsyncPayload, "InvokeAsync"
	case "DryRun":
	default:
		return s.writeError(w, errorf(http.StatusBadRequest, "ValidationException",
			"1 validation error detected: Value '%s' at 'invocationType' failed to satisfy constraint: Member must satisfy enum value set: [Event, RequestResponse, DryRun]", awsjson.Clip(invType, 200)))
	}
	*attrs = append(*attrs, "invocation_type", invType)
	tail, lerr := logType(r)
	if lerr != nil {
		return s.writeError(w, lerr)
	}
	inv, name, aerr := s.resolve(ref, r.URL.Query().Get("Qualifier"))
	if aerr != nil {
		return s.writeError(w, aerr)
	}
	*attrs = append(*attrs, "function", name)
	payload, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return s.writeError(w, errorf(http.StatusRequestEntityTooLarge, "RequestTooLargeException",
				"Request must be smaller than %d bytes for the %s operation", limit, operation))
		}
		return s.writeError(w, errorf(http.StatusBadRequest, "InvalidRequestContentException", "Could not read the request body"))
	}
	if len(bytes.TrimSpace(payload)) == 0 {
		payload = []byte("{}") // what Lambda hands a function invoked without a payload
	}
	if aerr := checkJSON(payload); aerr != nil {
		return s.writeError(w, aerr)
	}
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	switch invType {
	case "DryRun":
		w.WriteHeader(http.StatusNoContent)
		return http.StatusNoContent, "dry run"
	case "Event":
		select {
		case <-s.closing:
			return s.writeError(w, errorf(http.StatusServiceUnavailable, "ServiceException", "local mode is shutting down"))
		default:
		}
		if err := s.queueEvent(r.Context(), name, inv, payload); err != nil {
			s.log.ErrorContext(r.Context(), "journaling an event invocation", "function", name, "error", err)
			return s.writeError(w, errorf(http.StatusInternalServerError, "ServiceException", "the invocation could not be queued"))
		}
		w.WriteHeader(http.StatusAccepted)
		return http.StatusAccepted, "queued"
	}
	return s.invokeSync(w, r, name, inv, payload, tail)
}

// invokeSync runs a RequestResponse invocation and writes its answer. As in AWS, it runs to its
// end (or its timeout) even when the caller stops waiting: the caller's executor may have given up
// on a call whose side effect happens.
func (s *Service) invokeSync(w http.ResponseWriter, r *http.Request, name string, inv Invoker, payload []byte, tail bool) (int, string) {
	// The function's own time bound runs inside the logged run, so a time-out is logged as AWS logs it.
	bounded := WithTimeout(InvokerFunc(func(ctx context.Context, p []byte) ([]byte, *FunctionError, error) {
		return s.run(ctx, name, inv, p)
	}), s.timeoutOf(name))
	var (
		out  []byte
		ferr *FunctionError
		err  error
	)
	if tail {
		var logResult string
		out, ferr, logResult, err = s.runLogged(context.WithoutCancel(r.Context()), w.Header().Get("X-Amzn-RequestId"), name, bounded, payload)
		w.Header().Set("X-Amz-Log-Result", logResult)
	} else {
		// No log to answer: copying every line of it was CPU spent for nothing.
		out, ferr, err = bounded.Invoke(context.WithoutCancel(r.Context()), payload)
	}
	var th *Throttled
	if errors.As(err, &th) {
		return s.writeThrottled(w, th)
	}
	if err != nil {
		s.log.ErrorContext(r.Context(), "lambda invoker failed", "function", name, "error", err)
		return s.writeError(w, errorf(http.StatusInternalServerError, "ServiceException", "The function %s could not be run: see the local-mode log", name))
	}
	if ferr == nil && len(out) > maxResponse {
		ferr = &FunctionError{Type: "Function.ResponseSizeTooLarge", Message: fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", maxResponse)}
	}
	w.Header().Set("Content-Type", "application/json")
	if ferr != nil {
		body, _ := json.Marshal(ferr)
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return http.StatusOK, "function error " + awsjson.Clip(ferr.Type, 200)
	}
	if len(out) == 0 {
		out = []byte("null")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return http.StatusOK, "ok"
}

// timeoutOf is function name's timeout (0 for Lambda's maximum).
func (s *Service) timeoutOf(name string) time.Duration {
	if s.timeout == nil {
		return 0
	}
	return s.timeout(name)
}

// run calls the function, turning a panic into the function error a crashed runtime gives.
func (s *Service) run(ctx context.Context, name string, inv Invoker, payload []byte) (out []byte, ferr *FunctionError, err error) {
	defer func() {
		if p := recover(); p != nil {
			// The panic value may carry request data: log its type and the stack, not the value.
			s.log.ErrorContext(ctx, "lambda function panicked", "function", name, "panic_type", fmt.Sprintf("%T", p), "stack", string(debug.Stack()))
			out, ferr, err = nil, &FunctionError{Type: "Runtime.ExitError", Message: "the function panicked; see the local-mode log"}, nil
		}
	}()
	return inv.Invoke(ctx, payload)
}

func (s *Service) runEvent(ctx context.Context, name string, inv Invoker, payload []byte) {
	defer s.async.Done()
	_, ferr, err := s.run(WithEvent(ctx), name, inv, payload)
	switch {
	case err != nil:
		s.log.ErrorContext(ctx, "lambda event invocation could not run", "function", name, "error", err)
	case ferr != nil:
		s.log.WarnContext(ctx, "lambda event invocation failed", "function", name, "error_type", ferr.Type)
	default:
		s.log.InfoContext(ctx, "lambda event invocation done", "function", name)
	}
}

// functionFromPath extracts {FunctionName} from /2015-03-31/functions/{FunctionName}/invocations.
func functionFromPath(u *url.URL) (string, bool) {
	rest, ok := strings.CutPrefix(u.EscapedPath(), "/2015-03-31/functions/")
	if !ok {
		return "", false
	}
	escaped, ok := strings.CutSuffix(rest, "/invocations")
	if !ok || escaped == "" || strings.Contains(escaped, "/") {
		return "", false
	}
	name, err := url.PathUnescape(escaped)
	if err != nil {
		return "", false
	}
	return name, true
}

func checkJSON(payload []byte) *apiError {
	var v any
	dec := json.NewDecoder(bytes.NewReader(payload))
	err := dec.Decode(&v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("data after the JSON value")
		}
	}
	if err == nil {
		return nil
	}
	// The reason names a position, never the payload's content.
	reason := "the payload is not valid JSON"
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		reason = fmt.Sprintf("invalid JSON at byte offset %d", syn.Offset)
	} else if errors.Is(err, io.ErrUnexpectedEOF) {
		reason = "unexpected end of input"
	}
	return errorf(http.StatusBadRequest, "InvalidRequestContentException", "Could not parse request body into json: Could not parse payload into json: %s", reason)
}

// writeError answers as Lambda does: the code in X-Amzn-ErrorType and the body, with Lambda's
// "Type": "User" for the caller's mistakes.
func (s *Service) writeError(w http.ResponseWriter, e *apiError) (int, string) {
	typ := "User"
	if e.status >= 500 {
		typ = "Service"
	}
	body, _ := json.Marshal(struct {
		Type     string `json:"Type"`
		CodeType string `json:"__type"`
		Message  string `json:"message"`
	}{typ, e.code, e.message})
	w.Header().Set("X-Amzn-ErrorType", e.code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
	return e.status, e.code
}

// Throttled is an invoker's refusal for want of concurrency (local mode's emulated account
// concurrency): Invoke answers 429 TooManyRequestsException with its Reason, as Lambda does, and
// the caller's SDK retries it.
type Throttled struct {
	Reason  string // ConcurrentInvocationLimitExceeded, ...
	Message string
}

func (e *Throttled) Error() string {
	return "TooManyRequestsException: " + e.Message + " (" + e.Reason + ")"
}

func (s *Service) writeThrottled(w http.ResponseWriter, th *Throttled) (int, string) {
	body, _ := json.Marshal(struct {
		Type     string `json:"Type"`
		CodeType string `json:"__type"`
		Message  string `json:"message"`
		Reason   string `json:"Reason"`
	}{"User", "TooManyRequestsException", th.Message, th.Reason})
	w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(body)
	return http.StatusTooManyRequests, "TooManyRequestsException"
}

type eventKey struct{}

// WithEvent marks ctx as an Event (asynchronous) invocation's: Lambda queues those, so an
// invoker that would refuse a synchronous one for want of concurrency waits instead.
func WithEvent(ctx context.Context) context.Context { return context.WithValue(ctx, eventKey{}, true) }

// IsEvent reports whether ctx is an Event invocation's (WithEvent).
func IsEvent(ctx context.Context) bool { v, _ := ctx.Value(eventKey{}).(bool); return v }
