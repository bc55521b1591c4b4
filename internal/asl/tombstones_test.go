package asl

import (
	"fmt"
	"testing"
	"time"
)

func TestTombstonesAreKeptOneSpanAtLeastAndTwoAtMost(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	tests := []struct {
		name  string
		after time.Duration // from the token's close to the look-up
		want  bool
	}{
		{"at once", 0, true},
		{"within the span", tombstoneSpan - time.Second, true},
		{"in the next span", tombstoneSpan + time.Hour, true},
		{"two spans later", 2*tombstoneSpan + time.Second, false},
	}
	for _, tt := range tests {
		var ts tombstones
		ts.add("tok", t0)
		if got := ts.has("tok", t0.Add(tt.after)); got != tt.want {
			t.Errorf("%s: has = %v, want %v", tt.name, got, tt.want)
		}
		if ts.has("other", t0.Add(tt.after)) {
			t.Errorf("%s: a token never closed is remembered", tt.name)
		}
	}
}

func TestTombstonesMemoryIsBoundedByTwoSpans(t *testing.T) {
	var ts tombstones
	now := time.Unix(1_000_000, 0)
	for day := range 10 {
		for i := range 1000 {
			ts.add(fmt.Sprintf("tok-%d-%d", day, i), now)
		}
		now = now.Add(tombstoneSpan)
	}
	ts.add("last", now)
	// The last two spans' tokens: the ninth's thousand and the tenth's one.
	if got := len(ts.cur) + len(ts.prev); got != 1001 {
		t.Errorf("remembered %d tokens after ten spans of 1,000, want 1,001", got)
	}
}
