package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// timelineStep is the width of a timeline's buckets.
const timelineStep = 500 * time.Millisecond

// timeline is how a load's work spread over its run, by half second from began: the executions
// that ended and the DynamoDB requests local mode sent in each. A cold JVM's first seconds (the
// ramp) and executions waiting out a Retry's interval while DynamoDB Local idles (the tail) show
// in it; the mean rate over the whole run includes both.
func timeline(began time.Time, ends []time.Time, recs []recordedReq) string {
	var execs, reqs []int
	add := func(b *[]int, at time.Time) {
		if at.Before(began) {
			return
		}
		i := int(at.Sub(began) / timelineStep)
		for len(*b) <= i {
			*b = append(*b, 0)
		}
		(*b)[i]++
	}
	for _, e := range ends {
		add(&execs, e)
	}
	for _, r := range recs {
		add(&reqs, time.Unix(0, r.Time))
	}
	n := max(len(execs), len(reqs))
	parts := make([]string, 0, n)
	for i := range n {
		parts = append(parts, fmt.Sprintf("%.1f %d/%d", (time.Duration(i)*timelineStep).Seconds(), countAt(execs, i), countAt(reqs, i)))
	}
	return strings.Join(parts, ", ")
}

// countAt is b[i], or 0 past its end.
func countAt(b []int, i int) int {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// middleRate is the rate of the middle 80% of a load's ends (from the 10th percentile's end to
// the 90th's): its throughput without the ramp and the tail. It answers executions/s and the span.
func middleRate(ends []time.Time) (float64, time.Duration) {
	from, to, n := middleEnds(ends)
	if n == 0 {
		return 0, 0
	}
	return float64(n) / to.Sub(from).Seconds(), to.Sub(from)
}

// middleEnds is the 10th and the 90th percentile of ends and the ends between them (0 when there
// are too few to say, or no time between them).
func middleEnds(ends []time.Time) (from, to time.Time, n int) {
	if len(ends) < 10 {
		return time.Time{}, time.Time{}, 0
	}
	s := slices.Clone(ends)
	slices.SortFunc(s, time.Time.Compare)
	lo, hi := len(s)/10, len(s)*9/10
	if !s[hi].After(s[lo]) {
		return time.Time{}, time.Time{}, 0
	}
	return s[lo], s[hi], hi - lo
}

func TestTimeline(t *testing.T) {
	began := time.Unix(100, 0)
	ms := func(d int) time.Time { return began.Add(time.Duration(d) * time.Millisecond) }
	rec := func(d int) recordedReq { return recordedReq{Time: ms(d).UnixNano()} }
	tests := []struct {
		name string
		ends []time.Time
		recs []recordedReq
		want string
	}{
		{"empty", nil, nil, ""},
		{"one bucket", []time.Time{ms(10), ms(499)}, []recordedReq{rec(0)}, "0.0 2/1"},
		{"a gap and requests past the last end", []time.Time{ms(100), ms(1200)}, []recordedReq{rec(0), rec(1600)}, "0.0 1/1, 0.5 0/0, 1.0 1/0, 1.5 0/1"},
		{"before the start is left out", []time.Time{ms(-5)}, []recordedReq{rec(-1), rec(2)}, "0.0 0/1"},
	}
	for _, tt := range tests {
		if got := timeline(began, tt.ends, tt.recs); got != tt.want {
			t.Errorf("%s: timeline = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestMiddleRate(t *testing.T) {
	began := time.Unix(100, 0)
	var ends []time.Time
	for i := range 100 { // one end every 10 ms, then a tail of ten ends two seconds later
		ends = append(ends, began.Add(time.Duration(i)*10*time.Millisecond))
	}
	for range 10 {
		ends = append(ends, began.Add(3*time.Second))
	}
	r, span := middleRate(ends)
	// 110 ends, sorted: from index 11 (110 ms) to index 99 (990 ms), 88 ends in 880 ms; the tail is out.
	if span != 880*time.Millisecond || r < 99.99 || r > 100.01 {
		t.Errorf("middleRate = %.1f/s over %v, want 88 ends over 880ms (100/s)", r, span)
	}
	if r, _ := middleRate(ends[:5]); r != 0 {
		t.Errorf("middleRate of 5 ends = %v, want 0 (too few to say)", r)
	}
}
