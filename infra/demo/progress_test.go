package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A wait's progress is one line rewritten in place on a terminal, and a line per progressEvery
// elsewhere; what the demo printed keeps one line per wait on a terminal.
func TestProgress(t *testing.T) {
	tests := []struct {
		name         string
		tty          bool
		wantOutLines int // newline-ended lines written to out
		wantRewrites bool
		wantMinLines int // progress lines in the printed copy
		wantMaxLines int
	}{
		{name: "terminal: one line, rewritten", tty: true, wantOutLines: 2, wantRewrites: true, wantMinLines: 1, wantMaxLines: 1},
		{name: "not a terminal: a line per interval", tty: false, wantOutLines: -1, wantMinLines: 1, wantMaxLines: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			d := &demo{options: options{out: &out}, tty: tc.tty, progressEvery: 40 * time.Millisecond, liveEvery: 10 * time.Millisecond}
			d.clock.start()
			stop := d.progress("waiting", func() string { return "still" })
			time.Sleep(130 * time.Millisecond)
			stop()
			d.printf("done\n")
			d.clock.stop()

			lines := strings.Count(d.printed.String(), "… waiting")
			if lines < tc.wantMinLines || lines > tc.wantMaxLines {
				t.Errorf("%d progress lines printed, want %d to %d:\n%q", lines, tc.wantMinLines, tc.wantMaxLines, d.printed.String())
			}
			if got := strings.Contains(out.String(), "\r\x1b[K"); got != tc.wantRewrites {
				t.Errorf("rewrites in place: %v, want %v: %q", got, tc.wantRewrites, out.String())
			}
			if tc.wantOutLines >= 0 && strings.Count(out.String(), "\n") != tc.wantOutLines {
				t.Errorf("%d lines on the terminal, want %d: %q", strings.Count(out.String(), "\n"), tc.wantOutLines, out.String())
			}
			if !strings.HasSuffix(d.printed.String(), "still\ndone\n") {
				t.Errorf("the wait's last line is not kept before what follows: %q", d.printed.String())
			}
		})
	}
}

// The stamps, each step's TIME and the total are one clock: the sum of the steps' rounded times.
func TestStepClock(t *testing.T) {
	var c stepClock
	var sum time.Duration
	for _, d := range []time.Duration{3 * time.Millisecond, 5 * time.Millisecond} {
		c.start()
		time.Sleep(d)
		sum += c.stop()
	}
	if got := c.elapsed(); got != sum || got%time.Millisecond != 0 {
		t.Errorf("clock %v after steps summing to %v", got, sum)
	}
}
