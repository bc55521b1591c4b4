package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// stepClock is the time the demo's lines are stamped with: the sum of the finished steps' times,
// each rounded to the millisecond, plus the running step's, so the last step's stamp, the TIME
// column and the report's total agree.
type stepClock struct {
	mu      sync.Mutex
	done    time.Duration
	started time.Time // the running step's start; zero between steps
}

func (c *stepClock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started = time.Now()
}

// stop ends the running step and gives its time.
func (c *stepClock) stop() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	took := time.Since(c.started).Round(time.Millisecond)
	c.done += took
	c.started = time.Time{}
	return took
}

func (c *stepClock) elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started.IsZero() {
		return c.done
	}
	return c.done + time.Since(c.started)
}

// isTerminal reports whether w is a terminal that can rewrite a line in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress shows how long a wait has lasted; what returns extra detail (or ""). On a terminal it
// is one line rewritten every liveEvery, left as it last read when the wait ends; elsewhere (a log,
// a test) a line is printed every progressEvery, so a long build does not fill the log. The
// returned func stops it.
func (d *demo) progress(label string, what func() string) func() {
	every := d.progressEvery
	if d.tty {
		every = d.liveEvery
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t0 := time.Now()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				extra := ""
				if what != nil {
					if s := what(); s != "" {
						extra = ": " + s
					}
				}
				line := fmt.Sprintf("[%5.1fs]   … %s (%.0fs so far)%s", d.elapsed(), label, time.Since(t0).Seconds(), extra)
				if d.tty {
					d.showLive(line)
				} else {
					d.printf("%s\n", line)
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			d.mu.Lock()
			d.endLive()
			d.mu.Unlock()
		})
	}
}

// showLive rewrites the terminal's current line.
func (d *demo) showLive(line string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.live = line
	_, _ = io.WriteString(d.out, "\r\x1b[K"+line)
}

// endLive ends the line shown in place, which the output then keeps; d.mu is held.
func (d *demo) endLive() {
	if d.live == "" {
		return
	}
	d.printed.WriteString(d.live + "\n")
	_, _ = io.WriteString(d.out, "\n")
	d.live = ""
}
