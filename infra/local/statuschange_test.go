package main

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"sinew/internal/localaws/eventbridge"
	"sinew/internal/localaws/lambdaapi"
)

// TestStatusChangesToSettle: local mode hands the "Execution Status Change" events of ended
// executions to settle as Lambda runs asynchronous invocations: a settle still running holds back
// no later event (under load, events queued one after another behind slow settles recorded
// function calls' outcomes long after their executions ended), one that fails is run again, and
// one that keeps failing is run no more than its retries allow.
func TestStatusChangesToSettle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := eventbridge.Open(eventbridge.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	var mu sync.Mutex
	runs := map[string]int{} // settle's runs by execution name
	release := make(chan struct{})
	settle := lambdaapi.InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *lambdaapi.FunctionError, error) {
		var ev struct {
			Detail struct {
				Name string `json:"name"`
			} `json:"detail"`
		}
		if err := json.Unmarshal(payload, &ev); err != nil {
			t.Errorf("settle got %s: %v", payload, err)
		}
		mu.Lock()
		runs[ev.Detail.Name]++
		n := runs[ev.Detail.Name]
		mu.Unlock()
		switch {
		case ev.Detail.Name == "slow":
			<-release
		case ev.Detail.Name == "broken", ev.Detail.Name == "flaky" && n == 1:
			return nil, &lambdaapi.FunctionError{Type: lambdaapi.TimedOut, Message: "Task timed out after 30.00 seconds"}, nil
		}
		return []byte("null"), nil, nil
	})
	fns := &functions{m: map[string]lambdaapi.Invoker{"settle": settle}}
	q := routeStatusChanges(ctx, events, fns, lambdaapi.AsyncOptions{RetryDelays: []time.Duration{time.Millisecond}})
	if q == nil {
		t.Fatal("no route to settle")
	}
	for _, name := range []string{"slow", "flaky", "plain", "broken"} {
		detail, _ := json.Marshal(map[string]any{"executionArn": "arn:aws:states:us-east-1:000000000000:execution:tool_call:" + name,
			"stateMachineArn": machineArn("tool_call"), "name": name, "status": "SUCCEEDED"})
		if _, err := events.Put(ctx, "", "aws.states", "Step Functions Execution Status Change", detail, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int{"slow": 1, "flaky": 2, "plain": 1, "broken": 2}
	eventually(t, "the events behind a running settle to be settled, a failed one twice", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return runs["flaky"] == want["flaky"] && runs["plain"] == want["plain"] && runs["broken"] == want["broken"]
	})
	close(release)
	q.Wait()
	mu.Lock()
	defer mu.Unlock()
	for name, n := range want {
		if runs[name] != n {
			t.Errorf("settle ran %d times for %s, want %d (all: %v)", runs[name], name, n, runs)
		}
	}
}
