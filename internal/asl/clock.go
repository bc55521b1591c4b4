package asl

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Clock is the engine's only source of time, so waits, back-offs and timeouts can run instantly in
// tests and be replayed after a restart.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx ends.
	Sleep(ctx context.Context, d time.Duration) error
	// AfterFunc calls f once d has passed; stop cancels it (reporting whether it did).
	AfterFunc(d time.Duration, f func()) (stop func() bool)
	// WaitFunc is AfterFunc for a Wait state: a parked execution's wake-up. It differs only on a
	// VirtualClock, where waits pass at once (as Sleep does) while timeouts wait for Advance.
	WaitFunc(d time.Duration, f func()) (stop func() bool)
}

// TimerKind says what a timer of an execution is for.
type TimerKind string

const (
	TimerWait      TimerKind = "Wait"             // a Wait state (Seconds, SecondsPath)
	TimerRetry     TimerKind = "Retry"            // a retry's back-off
	TimerTimeout   TimerKind = "TimeoutSeconds"   // a task's TimeoutSeconds
	TimerHeartbeat TimerKind = "HeartbeatSeconds" // a task's HeartbeatSeconds
)

// TimerClock is a Clock that journals an execution's timers and history times (local mode's
// durable recorder), so that an execution replayed after a restart keeps them: a Wait, a back-off, a
// task timeout or a heartbeat ends when it was first due, and every event keeps its first time. The
// engine uses it when its Clock implements it. ctx is the execution's (it carries what the
// execution was started with).
type TimerClock interface {
	Clock
	// Deadline gives the deadline of a timer armed now for d: now+d, or, when the execution is
	// replayed, the deadline the same timer got the first time (possibly past). state names the
	// timer's state; timers of one kind and state are told apart by their order. renew re-arms
	// the same timer for d from now (a heartbeat) and gives its new deadline.
	Deadline(ctx context.Context, kind TimerKind, state string, d time.Duration) (deadline time.Time, renew func(time.Duration) time.Time)
	// EventTime gives the time of the execution's history event id of type typ, emitted at now:
	// now, or the time the same event had the first time.
	EventTime(ctx context.Context, id int64, typ string, now time.Time) time.Time
}

// deadline places a timer armed now for d: with a TimerClock its journaled deadline, otherwise
// now+d. left is the time to wait from now (never negative).
func deadline(ctx context.Context, c Clock, kind TimerKind, state string, d time.Duration) (at time.Time, left time.Duration, renew func(time.Duration) time.Time) {
	tc, ok := c.(TimerClock)
	if !ok {
		return c.Now().Add(d), d, func(d time.Duration) time.Time { return c.Now().Add(d) }
	}
	at, renew = tc.Deadline(ctx, kind, state, d)
	return at, max(at.Sub(c.Now()), 0), renew
}

// mapIndex tells a Map iteration's timers apart from its siblings' in their names.
func mapIndex(f *frame) string {
	if !f.inMap {
		return ""
	}
	return "[" + strconv.Itoa(f.mapIndex) + "]"
}

// RealClock is wall-clock time.
type RealClock struct{}

// Now reads the monotonic clock only (time.Since: one clock read, where time.Now makes two, and a
// clock read costs some 100 ns on a virtual machine) and adds it to a wall-clock base taken at
// most a minute before, so a step of the system clock shows within a minute.
func (RealClock) Now() time.Time {
	b := wallBase.Load()
	d := time.Since(*b)
	if d > time.Minute || d < 0 {
		now := time.Now() // with its monotonic reading, which time.Since needs
		wallBase.Store(&now)
		return now.UTC()
	}
	return b.Add(d).UTC()
}

var wallBase = func() *atomic.Pointer[time.Time] {
	var p atomic.Pointer[time.Time]
	now := time.Now()
	p.Store(&now)
	return &p
}()

func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (RealClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

func (RealClock) WaitFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// VirtualClock is a clock for tests and simulations. Sleep returns at once and moves the clock
// forward by d (firing timers that fall due on the way), so a Wait of a day or a back-off of an hour
// costs nothing. Timers set by AfterFunc (task timeouts, heartbeats) fire only when time is moved past
// them, by a Sleep or by Advance, so a test decides whether a callback or a timeout comes first.
type VirtualClock struct {
	// ManualWaits makes parked Wait states wait for Advance like timeouts do (to test parking);
	// by default they pass at once.
	ManualWaits bool

	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*vtimer
}

type vtimer struct {
	at   time.Time
	seq  int
	f    func()
	done bool
}

// NewVirtualClock starts a virtual clock at start.
func NewVirtualClock(start time.Time) *VirtualClock { return &VirtualClock{now: start.UTC()} }

func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *VirtualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		c.Advance(d)
	}
	return ctx.Err()
}

func (c *VirtualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	c.seq++
	t := &vtimer{at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.done {
			return false
		}
		t.done = true
		return true
	}
}

// WaitFunc moves the clock forward by d at once (firing timers that fall due) and then calls f on
// its own goroutine: a Wait state passes instantly, as Sleep does.
func (c *VirtualClock) WaitFunc(d time.Duration, f func()) func() bool {
	if c.ManualWaits {
		return c.AfterFunc(d, f)
	}
	if d > 0 {
		c.Advance(d)
	}
	go f()
	return func() bool { return false }
}

// Advance moves the clock forward by d and runs, in time order, the timers that fall due.
func (c *VirtualClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	var due []*vtimer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case !t.at.After(target):
			t.done = true
			due = append(due, t)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	if target.After(c.now) {
		c.now = target
	}
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool {
		if due[i].at.Equal(due[j].at) {
			return due[i].seq < due[j].seq
		}
		return due[i].at.Before(due[j].at)
	})
	for _, t := range due {
		t.f()
	}
}

// Pending reports how many timers are armed.
func (c *VirtualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.done {
			n++
		}
	}
	return n
}
