package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"sinew/internal/localaws/eventbridge"
	"sinew/internal/localaws/lambdaapi"
)

// settleStandIn is settle as routeStatusChanges invokes it: it counts its runs by execution name,
// holds "slow" until released, and fails "flaky" once and "broken" always.
type settleStandIn struct {
	t       *testing.T
	mu      sync.Mutex
	runs    map[string]int
	release chan struct{}
}

func (s *settleStandIn) Invoke(ctx context.Context, payload []byte) ([]byte, *lambdaapi.FunctionError, error) {
	var ev struct {
		Detail struct {
			Name string `json:"name"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		s.t.Errorf("settle got %s: %v", payload, err)
	}
	s.mu.Lock()
	s.runs[ev.Detail.Name]++
	n := s.runs[ev.Detail.Name]
	s.mu.Unlock()
	switch {
	case ev.Detail.Name == "slow":
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	case ev.Detail.Name == "broken", ev.Detail.Name == "flaky" && n == 1:
		return nil, &lambdaapi.FunctionError{Type: lambdaapi.TimedOut, Message: "Task timed out after 30.00 seconds"}, nil
	}
	return []byte("null"), nil, nil
}

func (s *settleStandIn) count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[name]
}

func putStatusChange(t *testing.T, events *eventbridge.Service, name, status string) {
	t.Helper()
	detail, _ := json.Marshal(map[string]any{"executionArn": "arn:aws:states:us-east-1:000000000000:execution:tool_call:" + name,
		"stateMachineArn": machineArn("tool_call"), "name": name, "status": status})
	if _, err := events.Put(t.Context(), "", "aws.states", "Step Functions Execution Status Change", detail, nil); err != nil {
		t.Fatal(err)
	}
}

// TestStatusChangesToSettle: local mode hands the "Execution Status Change" events of ended
// executions to settle side by side (a settle still running holds back no later event), runs a
// failed one again until settle succeeds or the retry policy runs out (then the event is in the
// dead-letter file), and delivers after a restart what settle had not finished: the event of a
// settle cut off by the stop, and none that settle had taken.
func TestStatusChangesToSettle(t *testing.T) {
	dir := t.TempDir()
	policy := &eventbridge.RetryPolicy{MaximumRetryAttempts: 2, MaximumEventAge: time.Hour}
	fast := func(int) time.Duration { return time.Millisecond }
	open := func(settle lambdaapi.Invoker) *eventbridge.Service {
		events, err := eventbridge.Open(eventbridge.Options{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		fns := &functions{m: map[string]lambdaapi.Invoker{"settle": settle}}
		if err := routeStatusChanges(events, fns, eventbridge.Target{Retry: policy, Backoff: fast}, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
		return events
	}
	first := &settleStandIn{t: t, runs: map[string]int{}, release: make(chan struct{})}
	events := open(first)
	for _, name := range []string{"slow", "flaky", "plain", "broken"} {
		putStatusChange(t, events, name, "SUCCEEDED")
	}
	putStatusChange(t, events, "started", "RUNNING") // not an end: not for settle
	want := map[string]int{"slow": 1, "flaky": 2, "plain": 1, "broken": 3, "started": 0}
	eventually(t, "the events behind a running settle to be settled, a failed one again, a broken one until its retries ran out", func() bool {
		dead, _ := eventbridge.ReadDeadLetterFile(filepath.Join(dir, eventbridge.DeadLetterFileName))
		return first.count("flaky") == want["flaky"] && first.count("plain") == want["plain"] && len(dead) == 1
	})
	for name, n := range want {
		if got := first.count(name); got != n {
			t.Errorf("settle ran %d times for %s, want %d", got, name, n)
		}
	}
	dead, _ := eventbridge.ReadDeadLetterFile(filepath.Join(dir, eventbridge.DeadLetterFileName))
	if len(dead) != 1 || dead[0].Attempts != 3 || dead[0].Target != "sinew-execution-changed" {
		t.Errorf("dead letters %+v, want broken's after 3 attempts", dead)
	}
	// The stop cuts slow's settle off: it is delivered again after the restart, and nothing else is.
	if err := events.Close(); err != nil {
		t.Fatal(err)
	}
	second := &settleStandIn{t: t, runs: map[string]int{}, release: make(chan struct{})}
	close(second.release)
	events = open(second)
	defer events.Close()
	eventually(t, "slow's event to reach settle after the restart", func() bool { return second.count("slow") == 1 })
	time.Sleep(50 * time.Millisecond)
	for _, name := range []string{"flaky", "plain", "broken", "started"} {
		if n := second.count(name); n != 0 {
			t.Errorf("after the restart settle ran %d times for %s, want none", n, name)
		}
	}
}
