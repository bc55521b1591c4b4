package lambdaapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sinew/internal/localaws/awsjson"
	"sinew/internal/testenv/awscli"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

var echo = InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
	return payload, nil, nil
})

// recorder remembers the payloads of Event invocations.
type recorder struct {
	mu   sync.Mutex
	got  [][]byte
	done chan struct{}
}

func (r *recorder) Invoke(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
	r.mu.Lock()
	r.got = append(r.got, payload)
	r.mu.Unlock()
	r.done <- struct{}{}
	return nil, nil, nil
}

func start(t testing.TB, fns map[string]Invoker) (*Service, *awslambda.Client, string) {
	t.Helper()
	svc := New(Options{Logger: quiet()})
	for name, inv := range fns {
		if err := svc.Register(name, inv); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(svc)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := svc.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	client := awslambda.New(awslambda.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(srv.URL),
		HTTPClient:   srv.Client(),
		// Retries would hide what the endpoint answered first.
		RetryMaxAttempts: 1,
	})
	return svc, client, srv.URL
}

func TestInvokeRequestResponse(t *testing.T) {
	ctx := context.Background()
	failing := InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
		return nil, &FunctionError{Type: "Sinew.Transient", Message: "the provider answered 503; try again"}, nil
	})
	panicking := InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
		panic("boom with secret data")
	})
	huge := InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
		return []byte(`"` + strings.Repeat("x", maxResponse) + `"`), nil, nil
	})
	_, client, _ := start(t, map[string]Invoker{"sinew-apicall": echo, "sinew-fail": failing, "sinew-panic": panicking, "sinew-huge": huge})
	tests := []struct {
		name      string
		fn        string
		qualifier string
		payload   []byte
		want      string
		funcErr   string
	}{
		{"name", "sinew-apicall", "", []byte(`{"call":{"id":"call_1"}}`), `{"call":{"id":"call_1"}}`, ""},
		{"full ARN", "arn:aws:lambda:us-east-1:000000000000:function:sinew-apicall", "", []byte(`[1,2]`), `[1,2]`, ""},
		{"ARN with qualifier", "arn:aws:lambda:us-east-1:000000000000:function:sinew-apicall:$LATEST", "", []byte(`"s"`), `"s"`, ""},
		{"partial ARN", "000000000000:function:sinew-apicall", "", []byte(`3`), `3`, ""},
		{"qualifier parameter", "sinew-apicall", "$LATEST", []byte(`null`), `null`, ""},
		{"no payload", "sinew-apicall", "", nil, `{}`, ""},
		{"function error", "sinew-fail", "", []byte(`{}`), `{"errorType":"Sinew.Transient","errorMessage":"the provider answered 503; try again"}`, "Unhandled"},
		{"panic", "sinew-panic", "", []byte(`{}`), `{"errorType":"Runtime.ExitError","errorMessage":"the function panicked; see the local-mode log"}`, "Unhandled"},
		{"response too large", "sinew-huge", "", []byte(`{}`), `{"errorType":"Function.ResponseSizeTooLarge","errorMessage":"Response payload size exceeded maximum allowed payload size (6291556 bytes)."}`, "Unhandled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &awslambda.InvokeInput{FunctionName: aws.String(tc.fn), Payload: tc.payload}
			if tc.qualifier != "" {
				in.Qualifier = aws.String(tc.qualifier)
			}
			out, err := client.Invoke(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if out.StatusCode != 200 {
				t.Errorf("StatusCode = %d, want 200", out.StatusCode)
			}
			if string(out.Payload) != tc.want {
				t.Errorf("Payload = %s, want %s", awsjson.Clip(string(out.Payload), 200), tc.want)
			}
			if aws.ToString(out.FunctionError) != tc.funcErr {
				t.Errorf("FunctionError = %q, want %q", aws.ToString(out.FunctionError), tc.funcErr)
			}
			if aws.ToString(out.ExecutedVersion) != "$LATEST" {
				t.Errorf("ExecutedVersion = %q", aws.ToString(out.ExecutedVersion))
			}
		})
	}
}

func TestInvokeEventAndDryRun(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{done: make(chan struct{}, 1)}
	_, client, _ := start(t, map[string]Invoker{"sinew-settle": rec})
	out, err := client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("sinew-settle"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{"detail":{"status":"FAILED"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if out.StatusCode != 202 || len(out.Payload) != 0 {
		t.Errorf("Event: status %d payload %q", out.StatusCode, out.Payload)
	}
	select {
	case <-rec.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the Event invocation never ran")
	}
	out, err = client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("sinew-settle"), InvocationType: types.InvocationTypeDryRun, Payload: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if out.StatusCode != 204 {
		t.Errorf("DryRun: status %d", out.StatusCode)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.got) != 1 || string(rec.got[0]) != `{"detail":{"status":"FAILED"}}` {
		t.Errorf("function ran with %q, want the one Event payload (DryRun must not run it)", rec.got)
	}
}

// TestCloseWaitsForEvents: Close returns only after running Event invocations finish.
func TestCloseWaitsForEvents(t *testing.T) {
	release := make(chan struct{})
	finished := make(chan struct{})
	slow := InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
		<-release
		close(finished)
		return nil, nil, nil
	})
	svc := New(Options{Logger: quiet()})
	if err := svc.Register("slow", slow); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/2015-03-31/functions/slow/invocations", strings.NewReader(`{}`))
	req.Header.Set("X-Amz-Invocation-Type", "Event")
	rec := httptest.NewRecorder()
	svc.ServeHTTP(rec, req)
	if rec.Code != 202 {
		t.Fatalf("status %d", rec.Code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := svc.Close(ctx); err == nil {
		t.Error("Close returned before the running invocation finished")
	}
	close(release)
	if err := svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-finished:
	default:
		t.Error("Close returned but the invocation had not finished")
	}
	// After Close, new Event invocations are refused rather than lost.
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("POST", "/2015-03-31/functions/slow/invocations", strings.NewReader(`{}`))
	req.Header.Set("X-Amz-Invocation-Type", "Event")
	svc.ServeHTTP(rec, req)
	if rec.Code != 503 {
		t.Errorf("Event after Close: status %d, want 503", rec.Code)
	}
}

func TestInvokeErrors(t *testing.T) {
	ctx := context.Background()
	broken := InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
		return nil, nil, errors.New("dial unix /tmp/rie.sock: connection refused")
	})
	_, client, _ := start(t, map[string]Invoker{"sinew-apicall": echo, "sinew-broken": broken})
	tests := []struct {
		name    string
		in      awslambda.InvokeInput
		code    string
		message string
	}{
		{"unknown function", awslambda.InvokeInput{FunctionName: aws.String("nope")}, "ResourceNotFoundException", "Function not found: arn:aws:lambda:us-east-1:000000000000:function:nope"},
		{"unknown version", awslambda.InvokeInput{FunctionName: aws.String("sinew-apicall:7")}, "ResourceNotFoundException", "Function not found: arn:aws:lambda:us-east-1:000000000000:function:sinew-apicall:7"},
		{"other account", awslambda.InvokeInput{FunctionName: aws.String("arn:aws:lambda:us-east-1:111111111111:function:sinew-apicall")}, "ResourceNotFoundException", "Function not found: arn:aws:lambda:us-east-1:111111111111:function:sinew-apicall"},
		{"qualifier mismatch", awslambda.InvokeInput{FunctionName: aws.String("sinew-apicall:$LATEST"), Qualifier: aws.String("live")}, "InvalidParameterValueException", "The derived qualifier from the function name does not match the specified qualifier."},
		{"bad name", awslambda.InvokeInput{FunctionName: aws.String("no spaces allowed")}, "ValidationException", ""},
		{"invalid JSON", awslambda.InvokeInput{FunctionName: aws.String("sinew-apicall"), Payload: []byte(`{"a":`)}, "InvalidRequestContentException", "Could not parse request body into json: Could not parse payload into json: unexpected end of input"},
		{"trailing data", awslambda.InvokeInput{FunctionName: aws.String("sinew-apicall"), Payload: []byte(`{} x`)}, "InvalidRequestContentException", ""},
		{"too large", awslambda.InvokeInput{FunctionName: aws.String("sinew-apicall"), Payload: bigJSON(MaxSyncPayload + 1)}, "RequestTooLargeException", "Request must be smaller than 6291456 bytes for the InvokeFunction operation"},
		{"event too large", awslambda.InvokeInput{FunctionName: aws.String("sinew-apicall"), InvocationType: types.InvocationTypeEvent, Payload: bigJSON(MaxAsyncPayload + 1)}, "RequestTooLargeException", "Request must be smaller than 1048576 bytes for the InvokeAsync operation"},
		{"invoker failure", awslambda.InvokeInput{FunctionName: aws.String("sinew-broken")}, "ServiceException", "The function sinew-broken could not be run: see the local-mode log"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.Invoke(ctx, &tc.in)
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error = %v, want %s", err, tc.code)
			}
			if apiErr.ErrorCode() != tc.code {
				t.Errorf("code = %s, want %s (%s)", apiErr.ErrorCode(), tc.code, apiErr.ErrorMessage())
			}
			if tc.message != "" && apiErr.ErrorMessage() != tc.message {
				t.Errorf("message = %q, want %q", apiErr.ErrorMessage(), tc.message)
			}
		})
	}
	// The exact payload limit itself is accepted.
	out, err := client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("sinew-apicall"), Payload: bigJSON(MaxSyncPayload)})
	if err != nil || len(out.Payload) != MaxSyncPayload {
		t.Errorf("a payload of exactly 6 MB: %v", err)
	}
}

// bigJSON is a JSON string of exactly n bytes.
func bigJSON(n int) []byte {
	b := bytes.Repeat([]byte("a"), n)
	b[0], b[n-1] = '"', '"'
	return b
}

func TestRawPaths(t *testing.T) {
	_, _, url := start(t, map[string]Invoker{"f": echo})
	tests := []struct {
		method, path, invType string
		status                int
		code                  string
	}{
		{"POST", "/2015-03-31/functions/f/invocations", "Bogus", 400, "ValidationException"},
		{"GET", "/2015-03-31/functions/f/invocations", "", 405, "UnknownOperationException"},
		{"POST", "/2015-03-31/functions/f", "", 404, "UnknownOperationException"},
		{"POST", "/2015-03-31/functions//invocations", "", 404, "UnknownOperationException"},
		{"POST", "/2015-03-31/functions/a%2Fb/invocations", "", 400, "ValidationException"},
		{"POST", "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aus-east-1%3A000000000000%3Afunction%3Af/invocations", "", 200, ""},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(tc.method, url+tc.path, strings.NewReader(`{}`))
		if tc.invType != "" {
			req.Header.Set("X-Amz-Invocation-Type", tc.invType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("X-Amzn-ErrorType") != tc.code {
			t.Errorf("%s %s: %d %s %s, want %d %s", tc.method, tc.path, resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), body, tc.status, tc.code)
		}
		if tc.code != "" {
			var e struct {
				Type    string `json:"__type"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Type != tc.code || e.Message == "" {
				t.Errorf("%s %s: error body %s", tc.method, tc.path, body)
			}
		}
	}
}

func TestRegisterRejectsBadNames(t *testing.T) {
	svc := New(Options{Logger: quiet()})
	for _, name := range []string{"", "a:b", strings.Repeat("a", 65), "arn:aws:lambda:us-east-1:000000000000:function:f"} {
		if err := svc.Register(name, echo); err == nil {
			t.Errorf("Register(%q) accepted", name)
		}
	}
	if err := svc.Register("ok", nil); err == nil {
		t.Error("Register accepted a nil invoker")
	}
}

// TestCLI invokes through the AWS CLI, as a user of local mode would.
func TestCLI(t *testing.T) {
	cli := awscli.Find(t)
	failing := InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
		return nil, &FunctionError{Type: "Sinew.NotFound", Message: "no tool named x"}, nil
	})
	_, _, url := start(t, map[string]Invoker{"echo": echo, "fail": failing})
	dir := t.TempDir()
	run := func(args ...string) ([]byte, []byte, error) {
		cmd := exec.Command(cli.Path, append(args, "--endpoint-url", url, "--output", "json")...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return out, stderr.Bytes(), err
	}
	outFile := filepath.Join(dir, "out.json")
	stdout, stderr, err := run(append([]string{"lambda", "invoke", "--function-name", "echo", "--payload", `{"hello":"world"}`, outFile}, cli.RawBlobArgs()...)...)
	if err != nil {
		t.Fatalf("invoke: %v: %s", err, stderr)
	}
	var meta struct {
		StatusCode      int
		FunctionError   string
		ExecutedVersion string
	}
	if err := json.Unmarshal(stdout, &meta); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(outFile)
	if meta.StatusCode != 200 || string(got) != `{"hello":"world"}` || meta.ExecutedVersion != "$LATEST" {
		t.Errorf("invoke echo: %+v payload %s", meta, got)
	}
	stdout, stderr, err = run("lambda", "invoke", "--function-name", "fail", outFile)
	if err != nil {
		t.Fatalf("invoke fail: %v: %s", err, stderr)
	}
	meta = struct {
		StatusCode      int
		FunctionError   string
		ExecutedVersion string
	}{}
	_ = json.Unmarshal(stdout, &meta)
	got, _ = os.ReadFile(outFile)
	if meta.FunctionError != "Unhandled" || !strings.Contains(string(got), `"errorType":"Sinew.NotFound"`) {
		t.Errorf("invoke fail: %+v payload %s", meta, got)
	}
	_, stderr, err = run("lambda", "invoke", "--function-name", "missing", outFile)
	if err == nil || !strings.Contains(string(stderr), "ResourceNotFoundException") {
		t.Errorf("invoke missing: err %v, stderr %s", err, stderr)
	}
	_, stderr, err = run(append([]string{"lambda", "invoke", "--function-name", "echo", "--invocation-type", "Event", "--payload", `{"a":1}`, outFile}, cli.RawBlobArgs()...)...)
	if err != nil {
		t.Errorf("invoke Event: %v: %s", err, stderr)
	}
}

// BenchmarkInvoke is one RequestResponse round trip of an echo function through the SDK on
// loopback; BenchmarkInvokeInProcess is the same call without the API, the baseline.
func BenchmarkInvoke(b *testing.B) {
	ctx := context.Background()
	_, client, _ := start(b, map[string]Invoker{"echo": echo})
	payload := []byte(`{"call":{"id":"call_0123456789abcdefghijklmn","type":"integration","integration":{"name":"dummy","arguments":{"x":1}}},"context":{"developer_id":"d"}}`)
	for b.Loop() {
		if _, err := client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("echo"), Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInvokeInProcess(b *testing.B) {
	ctx := context.Background()
	payload := []byte(`{"call":{"id":"call_0123456789abcdefghijklmn","type":"integration","integration":{"name":"dummy","arguments":{"x":1}}},"context":{"developer_id":"d"}}`)
	for b.Loop() {
		if _, _, err := echo.Invoke(ctx, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEndpointFromEnvironment: the default SDK configuration finds this endpoint through
// AWS_ENDPOINT_URL_LAMBDA.
func TestEndpointFromEnvironment(t *testing.T) {
	_, _, url := start(t, map[string]Invoker{"echo": echo})
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", url)
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out, err := awslambda.NewFromConfig(cfg).Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("echo"), Payload: []byte(`{"a":1}`)})
	if err != nil || string(out.Payload) != `{"a":1}` {
		t.Fatalf("Invoke through AWS_ENDPOINT_URL_LAMBDA: %v", err)
	}
}

// TestSyncInvocationOutlivesItsCaller: a caller that stops waiting (its context canceled, as the
// chat's budget does) does not cancel the function, which runs to its end as in AWS; the
// function's own timeout still bounds it.
func TestSyncInvocationOutlivesItsCaller(t *testing.T) {
	finished := make(chan error, 2)
	slow := InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
		select {
		case <-time.After(300 * time.Millisecond):
			finished <- nil
		case <-ctx.Done():
			finished <- ctx.Err()
		}
		return payload, nil, nil
	})
	svc := New(Options{Logger: quiet(), Timeout: func(name string) time.Duration {
		if name == "short" {
			return 50 * time.Millisecond
		}
		return 0
	}})
	for _, n := range []string{"slow", "short"} {
		if err := svc.Register(n, slow); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	for _, tc := range []struct {
		name string
		want error
	}{{"slow", nil}, {"short", context.DeadlineExceeded}} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/2015-03-31/functions/"+tc.name+"/invocations", strings.NewReader(`{}`))
		if _, err := srv.Client().Do(req); err == nil {
			t.Errorf("%s: the caller's request should have been cut off", tc.name)
		}
		cancel()
		select {
		case err := <-finished:
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: the function ended with %v, want %v", tc.name, err, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the function never ended", tc.name)
		}
	}
}
