package lambdaapi

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"sinew/internal/localaws/outbox"
)

// flaky is a function that fails its first fail runs (all of them when fail < 0), or, with block,
// waits for its context to end.
type flaky struct {
	mu    sync.Mutex
	runs  int
	fail  int
	block bool
}

func (f *flaky) Invoke(ctx context.Context, _ []byte) ([]byte, *FunctionError, error) {
	f.mu.Lock()
	f.runs++
	n := f.runs
	f.mu.Unlock()
	if f.block {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	}
	if f.fail < 0 || n <= f.fail {
		return nil, &FunctionError{Type: "Sinew.Transient", Message: "try again"}, nil
	}
	return []byte("null"), nil, nil
}

func (f *flaky) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs
}

// startAsync is start with the Event invocations journaled in dir.
func startAsync(t *testing.T, dir string, f *flaky) (*Service, *awslambda.Client) {
	t.Helper()
	svc, client, _ := start(t, map[string]Invoker{"f": f})
	if err := svc.StartAsync(dir, AsyncOptions{Backoff: func(int) time.Duration { return time.Millisecond }}); err != nil {
		t.Fatal(err)
	}
	return svc, client
}

func invokeEvent(t *testing.T, client *awslambda.Client) {
	t.Helper()
	out, err := client.Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("f"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{"a":1}`)})
	if err != nil || out.StatusCode != 202 {
		t.Fatalf("Event invoke: %v %v", out, err)
	}
}

func waitRuns(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestAsyncJournaled: a journaled Event invocation runs until the function succeeds, with Lambda's
// two retries, and then goes to the dead-letter file.
func TestAsyncJournaled(t *testing.T) {
	tests := []struct {
		name string
		fail int
		runs int
		dead bool
	}{
		{"runs once", 0, 1, false},
		{"retried once", 1, 2, false},
		{"retries spent", -1, 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := &flaky{fail: tc.fail}
			_, client := startAsync(t, dir, f)
			invokeEvent(t, client)
			waitRuns(t, "the invocation to end", func() bool {
				p, _ := outbox.PendingIn(filepath.Join(dir, AsyncJournalFileName))
				return f.count() >= tc.runs && len(p) == 0
			})
			time.Sleep(20 * time.Millisecond)
			if got := f.count(); got != tc.runs {
				t.Errorf("%d runs, want %d", got, tc.runs)
			}
			dead, err := outbox.ReadDeadLetters(filepath.Join(dir, AsyncDeadLetterFileName))
			if err != nil || (len(dead) == 1) != tc.dead {
				t.Errorf("dead letters %+v %v, want dead=%v", dead, err, tc.dead)
			}
		})
	}
}

// TestAsyncAcrossRestart: an Event invocation is journaled before its 202, and one that the stop
// cut off runs after the next start, once.
func TestAsyncAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	first := &flaky{block: true}
	svc, client := startAsync(t, dir, first)
	invokeEvent(t, client)
	if p, err := outbox.PendingIn(filepath.Join(dir, AsyncJournalFileName)); err != nil || len(p) != 1 {
		t.Fatalf("journal after the 202: %v %v, want the invocation", p, err)
	}
	waitRuns(t, "the first run to start", func() bool { return first.count() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	second := &flaky{}
	startAsync(t, dir, second)
	waitRuns(t, "the cut-off invocation to run after the restart", func() bool { return second.count() == 1 })
	time.Sleep(20 * time.Millisecond)
	if n := second.count(); n != 1 {
		t.Errorf("%d runs after the restart, want 1", n)
	}
}
