package lambdaapi

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestAsync: no more events run at once than the concurrency allows, a failed one is retried after each
// delay and then dropped, and a cancelled context ends a retry's wait.
func TestAsync(t *testing.T) {
	cases := []struct {
		name        string
		concurrency int
		delays      []time.Duration
		fail        int // how many first runs of each event fail
		cancel      bool
		wantRuns    int // per event
	}{
		{name: "all succeed", concurrency: 3, wantRuns: 1},
		{name: "one failure retried", concurrency: 2, delays: []time.Duration{time.Millisecond}, fail: 1, wantRuns: 2},
		{name: "retries spent", concurrency: 2, delays: []time.Duration{time.Millisecond, time.Millisecond}, fail: 5, wantRuns: 3},
		{name: "cancelled while waiting to retry", concurrency: 2, delays: []time.Duration{time.Hour}, fail: 5, cancel: true, wantRuns: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			running, most := 0, 0
			runs := map[string]int{}
			inv := InvokerFunc(func(_ context.Context, p []byte) ([]byte, *FunctionError, error) {
				mu.Lock()
				running++
				most = max(most, running)
				runs[string(p)]++
				n := runs[string(p)]
				mu.Unlock()
				time.Sleep(2 * time.Millisecond) // the others start meanwhile, up to the bound
				mu.Lock()
				running--
				mu.Unlock()
				if n <= tc.fail {
					return nil, &FunctionError{Type: "Sinew.Transient", Message: "try again"}, nil
				}
				return []byte("null"), nil, nil
			})
			q := NewAsync(inv, AsyncOptions{Name: "f", Concurrency: tc.concurrency, RetryDelays: tc.delays})
			events := []string{"a", "b", "c", "d", "e", "f"}
			for _, e := range events {
				q.Invoke(ctx, []byte(e))
			}
			if tc.cancel {
				for done := false; !done; time.Sleep(time.Millisecond) {
					mu.Lock()
					done = len(runs) == len(events) && running == 0
					mu.Unlock()
				}
				cancel()
			}
			q.Wait()
			if most > tc.concurrency {
				t.Errorf("%d ran at once, want at most %d", most, tc.concurrency)
			}
			for _, e := range events {
				if runs[e] != tc.wantRuns {
					t.Errorf("event %s ran %d times, want %d (all: %v)", e, runs[e], tc.wantRuns, runs)
				}
			}
		})
	}
}
