package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

const childEnv = "SINEW_API_MAIN_CHILD"

// TestMain runs main itself when asked, so the test drives the real bootstrap.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestBootstrap runs main against an imitation of the Lambda Runtime API and sends it API Gateway
// events: the wiring (config, router, boundary) answers as deployed.
func TestBootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	type exchange struct {
		event      events.APIGatewayV2HTTPRequest
		wantStatus int
		wantBody   string
	}
	ev := func(method, path string) events.APIGatewayV2HTTPRequest {
		return events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "$default", RawPath: path,
			RequestContext: events.APIGatewayV2HTTPRequestContext{Stage: "$default", RequestID: "r1",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path}}}
	}
	authed := ev("GET", "/nothing-here")
	authed.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": "d1"}}}
	exchanges := []exchange{
		{ev("GET", "/healthz"), 200, `{"status":"ok"}`},
		{ev("POST", "/healthz"), 405, ""},
		{authed, 404, ""},
	}

	queue := make(chan []byte, len(exchanges))
	for _, x := range exchanges {
		b, _ := json.Marshal(x.event)
		queue <- b
	}
	posted := make(chan string, len(exchanges))
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/invocation/next"):
			select {
			case b := <-queue:
				w.Header().Set("Lambda-Runtime-Aws-Request-Id", fmt.Sprint(len(queue)))
				w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10))
				w.Write(b)
			case <-done:
				http.Error(w, "done", http.StatusGone)
			}
		case r.Method == "POST":
			b, _ := io.ReadAll(r.Body)
			w.WriteHeader(http.StatusAccepted)
			posted <- r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:] + " " + string(b)
		}
	}))
	defer srv.Close()
	defer close(done)

	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-5*time.Second))
	}
	defer cancel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(srv.URL, "http://"))
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	for i, x := range exchanges {
		var got string
		select {
		case got = <-posted:
		case <-ctx.Done():
			t.Fatalf("no answer to exchange %d\n%s", i, stderr.String())
		}
		kind, body, _ := strings.Cut(got, " ")
		if kind != "response" {
			t.Fatalf("exchange %d: reported %s %s", i, kind, body)
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != x.wantStatus || (x.wantBody != "" && resp.Body != x.wantBody) {
			t.Errorf("exchange %d (%s %s): %d %s, want %d %s", i, x.event.RequestContext.HTTP.Method, x.event.RawPath,
				resp.StatusCode, resp.Body, x.wantStatus, x.wantBody)
		}
	}
	if !strings.Contains(stderr.String(), `"msg":"request"`) {
		t.Errorf("the function should log each request as JSON:\n%s", stderr.String())
	}
}

// TestBadConfigurationFailsColdStart checks main refuses to serve with an invalid variable.
func TestBadConfigurationFailsColdStart(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "SINEW_CHAT_BUDGET_S=99", "AWS_LAMBDA_RUNTIME_API=127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("main started with an invalid configuration:\n%s", out)
	}
	if !strings.Contains(string(out), "SINEW_CHAT_BUDGET_S") {
		t.Errorf("the failure should name the variable:\n%s", out)
	}
}

// syncBuffer is the child's stderr, written by exec's copying goroutine while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
