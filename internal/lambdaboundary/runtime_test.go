package lambdaboundary

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
)

const childEnv = "SINEW_LAMBDABOUNDARY_CHILD"

// TestMain doubles as a Lambda bootstrap: run with childEnv set, the test binary serves handle
// through lambda.Start, polling the Runtime API named by AWS_LAMBDA_RUNTIME_API, as a deployed
// function does.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		lambda.Start(Handler(handle))
		return
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}

type reported struct {
	id, kind, body string // kind is "response" or "error"
}

// fakeRuntimeAPI imitates the Lambda Runtime API: it hands out the queued events one by one on
// .../invocation/next and reports each answer or error posted back.
func fakeRuntimeAPI(t *testing.T, events []string) (addr string, results <-chan reported) {
	t.Helper()
	queue := make(chan string, len(events))
	for _, e := range events {
		queue <- e
	}
	out := make(chan reported, len(events))
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const prefix = "/2018-06-01/runtime/invocation/"
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		switch {
		case ok && r.Method == http.MethodGet && rest == "next":
			select {
			case e := <-queue:
				w.Header().Set("Lambda-Runtime-Aws-Request-Id", fmt.Sprintf("req-%d", len(queue)))
				w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10))
				w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:000000000000:function:test")
				io.WriteString(w, e)
			case <-done: // no more events: hold the poll until the test ends
				http.Error(w, "shutting down", http.StatusGone)
			}
		case ok && r.Method == http.MethodPost:
			id, kind, _ := strings.Cut(rest, "/")
			b, _ := io.ReadAll(r.Body)
			w.WriteHeader(http.StatusAccepted)
			out <- reported{id: id, kind: kind, body: string(b)}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return strings.TrimPrefix(srv.URL, "http://"), out
}

// TestRuntimeAPILoop runs the handler as a real bootstrap process against an imitation of the Lambda
// Runtime API, and checks the errorType the runtime reports for each kind is exactly the Sinew name.
func TestRuntimeAPILoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	var events []string
	var want []string
	for _, k := range kinds {
		events = append(events, fmt.Sprintf(`{"kind":%q}`, k))
		want = append(want, string(k))
	}
	events = append(events, `{"untyped":true}`, `{"echo":3}`, `{"echo":"ok"}`, `{"panic":true}`)
	want = append(want, "Sinew.Internal", "Sinew.InvalidInput", "", "Sinew.Internal")

	addr, results := fakeRuntimeAPI(t, events)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Bound the wait by the test binary's own -timeout, so a hang fails with the child's log rather
	// than a bare panic that leaves the child running.
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-5*time.Second))
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "AWS_LAMBDA_RUNTIME_API="+addr, "AWS_LAMBDA_FUNCTION_NAME=test")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	for i, w := range want {
		var r reported
		select {
		case r = <-results:
		case err := <-exited:
			// The child exits after the last event's panic, maybe before this loop has read the
			// answers it posted: those already posted still count.
			select {
			case r = <-results:
				exited <- err
			default:
				t.Fatalf("bootstrap exited after %d of %d events: %v\n%s", i, len(want), err, stderr.String())
			}
		case <-ctx.Done():
			t.Fatalf("no answer to event %d (%s)\n%s", i, events[i], stderr.String())
		}
		if w == "" {
			if r.kind != "response" || r.body != `{"echo":"ok"}` {
				t.Errorf("event %s: reported %s %s, want the response", events[i], r.kind, r.body)
			}
			continue
		}
		var body struct {
			Type    string `json:"errorType"`
			Message string `json:"errorMessage"`
		}
		if err := json.Unmarshal([]byte(r.body), &body); err != nil || r.kind != "error" {
			t.Fatalf("event %s: reported %s %q: %v", events[i], r.kind, r.body, err)
		}
		if body.Type != w {
			t.Errorf("event %s: errorType %q, want %q", events[i], body.Type, w)
		}
		if strings.Contains(body.Message, "internals") {
			t.Errorf("event %s: message %q leaks the error's internals", events[i], body.Message)
		}
	}
	// A panic ends the process (ShouldExit) so Lambda starts a fresh one, as for an unwrapped panic.
	select {
	case err := <-exited:
		if err == nil {
			t.Errorf("bootstrap exited cleanly after a panic; want a failure exit")
		}
	case <-ctx.Done():
		t.Errorf("bootstrap still running after a panic")
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
