package lambdaapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestTimeoutAnswersAsLambda: a function past its timeout answers what Lambda answers, the
// function error Sandbox.Timedout with "Task timed out after N seconds", whether it gives up at its
// context's deadline (with its own error) or ignores it; a function within its time answers itself.
func TestTimeoutAnswersAsLambda(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	fns := map[string]Invoker{
		"gives_up": InvokerFunc(func(ctx context.Context, _ []byte) ([]byte, *FunctionError, error) {
			<-ctx.Done()
			return nil, &FunctionError{Type: "Sinew.Timeout", Message: "the time budget ran out"}, nil
		}),
		"ignores": InvokerFunc(func(context.Context, []byte) ([]byte, *FunctionError, error) {
			<-release
			return []byte(`"late"`), nil, nil
		}),
		"quick": InvokerFunc(func(_ context.Context, p []byte) ([]byte, *FunctionError, error) { return p, nil, nil }),
	}
	svc := New(Options{Logger: quiet(), Timeout: func(string) time.Duration { return 100 * time.Millisecond }})
	for name, inv := range fns {
		if err := svc.Register(name, inv); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	for name := range fns {
		resp, err := http.Post(srv.URL+"/2015-03-31/functions/"+name+"/invocations", "application/json", strings.NewReader(`{"a":1}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if name == "quick" {
			if resp.Header.Get("X-Amz-Function-Error") != "" || string(body) != `{"a":1}` {
				t.Errorf("quick: %s %s", resp.Header.Get("X-Amz-Function-Error"), body)
			}
			continue
		}
		var fe FunctionError
		_ = json.Unmarshal(body, &fe)
		if resp.Header.Get("X-Amz-Function-Error") != "Unhandled" || fe.Type != TimedOut || !strings.Contains(fe.Message, "Task timed out after 0.10 seconds") {
			t.Errorf("%s: %s %s, want Sandbox.Timedout", name, resp.Header.Get("X-Amz-Function-Error"), body)
		}
	}
}

// The caller's own deadline is not the function's timeout: the function answers what it answers.
func TestCallerDeadlineIsNotATimeout(t *testing.T) {
	inv := WithTimeout(InvokerFunc(func(ctx context.Context, _ []byte) ([]byte, *FunctionError, error) {
		<-ctx.Done()
		return nil, &FunctionError{Type: "Sinew.Timeout", Message: "the caller's budget"}, nil
	}), time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, fe, err := inv.Invoke(ctx, nil)
	if err != nil || fe == nil || fe.Type != "Sinew.Timeout" {
		t.Fatalf("fe %v err %v, want the function's own answer", fe, err)
	}
}
