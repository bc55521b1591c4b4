package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// A replay of the load's DynamoDB requests at the times the load sent them, to DynamoDB Local
// alone: the same requests arriving as they did, without local mode's CPU or the test's clients
// beside DynamoDB Local. Its answers' times, beside the same requests' times on the wire in the
// load, say how much of the load's wait for DynamoDB Local came from the requests themselves and
// how much from the machine it shared.

// timedRun is what a replay at the recorded times found.
type timedRun struct {
	replayRun
	replayed map[string]time.Duration // the replay's answer times summed, by operation
	recorded map[string]time.Duration // the load's times on the wire summed, by operation
	n        map[string]int
	span     time.Duration // from the first request sent to the last answer, in the replay
	loadSpan time.Duration // the same in the load
}

// replayTimed sends setup one at a time, then each of load at its recorded time's offset from the
// first (a goroutine each, nothing bounding those in flight), and times the answers.
func replayTimed(t testing.TB, endpoint string, setup, load []replayReq) *timedRun {
	if len(load) == 0 {
		t.Fatal("no DynamoDB requests recorded during the load")
	}
	ctx := context.Background()
	hc := pooledClient()
	r := &timedRun{replayRun: replayRun{Differ: map[string]int{}}, replayed: map[string]time.Duration{},
		recorded: map[string]time.Duration{}, n: map[string]int{}}
	for _, q := range setup {
		r.count(q)(sendRecorded(ctx, hc, endpoint, q))
	}
	took := make([]time.Duration, len(load))
	var wg sync.WaitGroup
	began := time.Now()
	for i, q := range load {
		time.Sleep(time.Until(began.Add(time.Duration(q.at - load[0].at))))
		wg.Go(func() {
			s := time.Now()
			r.count(q)(sendRecorded(ctx, hc, endpoint, q))
			took[i] = time.Since(s)
		})
	}
	wg.Wait()
	r.span = time.Since(began)
	r.check(t, len(setup)+len(load))
	var loadEnd int64
	for i, q := range load {
		r.replayed[q.op] += took[i]
		r.recorded[q.op] += time.Duration(q.wire)
		r.n[q.op]++
		loadEnd = max(loadEnd, q.at+q.wire)
	}
	r.loadSpan = time.Duration(loadEnd - load[0].at)
	return r
}

// inFlight is the mean of requests in flight over span whose times sum to total (Little's law).
func inFlight(times map[string]time.Duration, span time.Duration) float64 {
	var total time.Duration
	for _, d := range times {
		total += d
	}
	if span <= 0 {
		return 0
	}
	return total.Seconds() / span.Seconds()
}

func (r *timedRun) String() string {
	ops := make([]string, 0, len(r.n))
	for op := range r.n {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	parts := make([]string, 0, len(ops))
	ms := func(d time.Duration, n int) float64 { return d.Seconds() * 1000 / float64(n) }
	for _, op := range ops {
		parts = append(parts, fmt.Sprintf("%s %.1f ms (%.1f in the load)", op, ms(r.replayed[op], r.n[op]), ms(r.recorded[op], r.n[op])))
	}
	return fmt.Sprintf("mean answer %s; %.1f requests in flight on average (%.1f in the load), over %.1f s (%.1f s in the load)",
		strings.Join(parts, ", "), inFlight(r.replayed, r.span), inFlight(r.recorded, r.loadSpan), r.span.Seconds(), r.loadSpan.Seconds())
}

func TestTimedRunString(t *testing.T) {
	r := &timedRun{
		replayed: map[string]time.Duration{"UpdateItem": 6 * time.Millisecond, "GetItem": 2 * time.Millisecond},
		recorded: map[string]time.Duration{"UpdateItem": 60 * time.Millisecond, "GetItem": 20 * time.Millisecond},
		n:        map[string]int{"UpdateItem": 2, "GetItem": 1},
		span:     4 * time.Millisecond, loadSpan: 20 * time.Millisecond,
	}
	want := "mean answer GetItem 2.0 ms (20.0 in the load), UpdateItem 3.0 ms (30.0 in the load); " +
		"2.0 requests in flight on average (4.0 in the load), over 0.0 s (0.0 s in the load)"
	if got := r.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
}
