package eventbridge

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"sync"
	"time"
)

// DeadLetterFileName is the file under the local directory that receives, as JSON lines, the
// events whose delivery to a target ran out of attempts or age: a rule target's dead-letter queue.
const DeadLetterFileName = "events-dead-letter.jsonl"

// RetryPolicy is a target's retry policy, as EventBridge's RetryPolicy
// (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_RetryPolicy.html).
type RetryPolicy struct {
	MaximumRetryAttempts int           // retries after the first attempt: 0 to 185
	MaximumEventAge      time.Duration // how long after the event was accepted retries go on (AWS: 60 s to 24 h)
}

// DefaultRetryPolicy is EventBridge's default: "EventBridge retries sending the event for 24 hours
// and up to 185 times with an exponential back off and jitter"
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html).
var DefaultRetryPolicy = RetryPolicy{MaximumRetryAttempts: 185, MaximumEventAge: 24 * time.Hour}

// DefaultTargetConcurrency bounds a target's deliveries running at once when it gives none: enough
// that one slow delivery does not hold back the events behind it, few enough that a burst of
// events does not flood what the target calls.
const DefaultTargetConcurrency = 16

// Backoff bounds: the waits double from backoffBase up to backoffCap, which 185 retries spread
// over about the 24 hours of the default policy. AWS does not publish its schedule.
const (
	backoffBase = time.Second
	backoffCap  = 8 * time.Minute
)

// DefaultBackoff is the wait before retry number n (1 for the first): exponential, with jitter
// (half of it random) so that events that failed together do not retry together.
func DefaultBackoff(n int) time.Duration {
	d := backoffCap
	if n < 20 {
		d = min(backoffCap, backoffBase<<(n-1))
	}
	return d/2 + rand.N(d/2+1)
}

// Target is a durable rule target: every event put after AddTarget that matches Rule is journaled
// before PutEvents (or Put) answers, and delivered until Deliver succeeds, across restarts of
// local mode (at least once), or until the retry policy runs out and it goes to the dead-letter
// file.
type Target struct {
	// Name identifies the target across restarts: the events journaled for it are delivered to
	// the target of that name added after a restart.
	Name    string
	Rule    Rule
	Deliver func(ctx context.Context, e Event) error // nil error: delivered
	Retry   *RetryPolicy                             // nil: DefaultRetryPolicy
	// Concurrency bounds the deliveries running at once; 0 is DefaultTargetConcurrency.
	Concurrency int
	// Backoff is the wait before retry number n; nil is DefaultBackoff.
	Backoff func(n int) time.Duration
}

// DeadLetter is one line of the dead-letter file.
type DeadLetter struct {
	Target   string    `json:"target"`
	Event    FeedEntry `json:"event"`
	Attempts int       `json:"attempts"`
	Error    string    `json:"error"`
	At       time.Time `json:"at"`
}

// ReadDeadLetterFile reads the dead-letter file at path; a missing file holds none.
func ReadDeadLetterFile(path string) ([]DeadLetter, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []DeadLetter
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		var d DeadLetter
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &d) != nil {
			continue
		}
		out = append(out, d)
	}
}

// AddTarget starts delivering to t: the events journaled for its name before (a restart) at
// once, and every matching event put from now on.
func (s *Service) AddTarget(t Target) error {
	if t.Name == "" || t.Deliver == nil {
		return errors.New("eventbridge: a target needs a name and a Deliver function")
	}
	if t.Retry == nil {
		t.Retry = &DefaultRetryPolicy
	}
	if t.Retry.MaximumRetryAttempts < 0 || t.Retry.MaximumRetryAttempts > 185 || t.Retry.MaximumEventAge <= 0 {
		return fmt.Errorf("eventbridge: target %s: retry attempts must be 0 to 185 and the event age positive", t.Name)
	}
	if t.Concurrency <= 0 {
		t.Concurrency = DefaultTargetConcurrency
	}
	if t.Backoff == nil {
		t.Backoff = DefaultBackoff
	}
	ctx, cancel := context.WithCancel(context.Background())
	rt := &target{Target: t, s: s, wake: make(chan struct{}, 1), slots: make(chan struct{}, t.Concurrency), ctx: ctx, cancel: cancel}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if s.closed {
		cancel()
		return errors.New("eventbridge: the service is closed")
	}
	if s.targets[t.Name] != nil {
		cancel()
		return fmt.Errorf("eventbridge: target %s is added already", t.Name)
	}
	s.targets[t.Name] = rt
	now := s.now()
	for id, p := range s.pending {
		if n, ok := p.targets[t.Name]; ok {
			heap.Push(&rt.queue, &delivery{id: id, attempts: n, next: now})
		}
	}
	if n := rt.queue.Len(); n > 0 {
		s.log.Info("delivering the events journaled for a target before the restart", "target", t.Name, "events", n)
	}
	rt.wg.Add(1)
	go rt.run()
	return nil
}

// target is an added Target and its deliveries.
type target struct {
	Target
	s      *Service
	mu     sync.Mutex
	queue  deliveries
	wake   chan struct{}
	slots  chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// delivery is one event for a target: the attempts that failed so far, and when to try next.
type delivery struct {
	id       string
	attempts int
	next     time.Time
}

// deliveries is a min-heap by next attempt.
type deliveries []*delivery

func (q deliveries) Len() int           { return len(q) }
func (q deliveries) Less(i, j int) bool { return q[i].next.Before(q[j].next) }
func (q deliveries) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *deliveries) Push(x any)        { *q = append(*q, x.(*delivery)) }
func (q *deliveries) Pop() any {
	old := *q
	d := old[len(old)-1]
	*q = old[:len(old)-1]
	return d
}

// push queues d and wakes the scheduler.
func (t *target) push(d *delivery) {
	t.mu.Lock()
	heap.Push(&t.queue, d)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// run starts each delivery when it is due, in one of the target's slots, until the target stops.
func (t *target) run() {
	defer t.wg.Done()
	for {
		t.mu.Lock()
		var d *delivery
		wait := time.Hour
		if t.queue.Len() > 0 {
			if w := t.queue[0].next.Sub(t.s.now()); w <= 0 {
				d = heap.Pop(&t.queue).(*delivery)
			} else {
				wait = w
			}
		}
		t.mu.Unlock()
		if d == nil {
			timer := time.NewTimer(wait)
			select {
			case <-t.wake:
			case <-timer.C:
			case <-t.ctx.Done():
				timer.Stop()
				return
			}
			timer.Stop()
			continue
		}
		select {
		case t.slots <- struct{}{}:
		case <-t.ctx.Done():
			return
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer func() { <-t.slots }()
			t.attempt(d)
		}()
	}
}

// attempt delivers d once and records the outcome: delivered, retried after a back-off, or
// dead-lettered once the policy runs out. A delivery cut short by the target's stop is left
// pending, for the next start.
func (t *target) attempt(d *delivery) {
	s := t.s
	s.dmu.Lock()
	var e FeedEntry
	var at time.Time
	live := false
	if p := s.pending[d.id]; p != nil {
		if _, live = p.targets[t.Name]; live {
			e, at = p.entry, p.at
		}
	}
	s.dmu.Unlock()
	if !live {
		return
	}
	err := t.Deliver(t.ctx, e.Event)
	if t.ctx.Err() != nil {
		return
	}
	if err == nil {
		s.settleDelivery(d.id, t.Name, record{Kind: recDelivered, ID: d.id, Target: t.Name})
		return
	}
	d.attempts++
	now := s.now()
	wait := t.Backoff(d.attempts)
	if d.attempts > t.Retry.MaximumRetryAttempts || !now.Add(wait).Before(at.Add(t.Retry.MaximumEventAge)) {
		s.deadLetter(t.Name, e, d.attempts, err)
		return
	}
	s.log.Warn("event delivery failed; retrying", "target", t.Name, "event_id", d.id, "attempt", d.attempts,
		"retry_in", wait.String(), "error", err)
	s.dmu.Lock()
	if p := s.pending[d.id]; p != nil {
		if _, ok := p.targets[t.Name]; ok {
			p.targets[t.Name] = d.attempts
		}
	}
	s.dmu.Unlock()
	// Only written: a crash that loses it retries the event sooner, which the policy tolerates.
	if _, err := s.journal.append(record{Kind: recAttempts, ID: d.id, Target: t.Name, Attempts: d.attempts}); err != nil && !errors.Is(err, errJournalClosed) {
		s.log.Error("journaling a failed delivery", "target", t.Name, "event_id", d.id, "error", err)
	}
	d.next = now.Add(wait)
	t.push(d)
}

// settleDelivery ends target's delivery of event id with r (delivered or dead-lettered).
func (s *Service) settleDelivery(id, target string, r record) {
	s.dmu.Lock()
	if p := s.pending[id]; p != nil {
		delete(p.targets, target)
		if len(p.targets) == 0 {
			delete(s.pending, id)
		}
	}
	s.dmu.Unlock()
	// Only written: a crash that loses the line delivers the event again (at least once).
	if _, err := s.journal.append(r); err != nil && !errors.Is(err, errJournalClosed) {
		s.log.Error("journaling a delivery", "target", target, "event_id", id, "error", err)
	}
	s.maybeCompact()
}

// deadLetter writes e to the dead-letter file (durably: it is the event's only copy from now on)
// and ends its delivery to target. The event's detail stays out of the log: it may carry a token.
func (s *Service) deadLetter(target string, e FeedEntry, attempts int, cause error) {
	line, err := json.Marshal(DeadLetter{Target: target, Event: e, Attempts: attempts, Error: cause.Error(), At: s.now().UTC()})
	if err == nil {
		err = s.appendDeadLetter(append(line, '\n'))
	}
	if err != nil {
		s.log.Error("writing a dead letter; the event stays journaled", "target", target, "event_id", e.ID, "error", err)
		return
	}
	s.log.Error("event delivery ran out of attempts; the event is in the dead-letter file", "target", target,
		"event_id", e.ID, "attempts", attempts, "file", s.deadPath, "error", cause)
	s.settleDelivery(e.ID, target, record{Kind: recDead, ID: e.ID, Target: target})
}

func (s *Service) appendDeadLetter(line []byte) error {
	s.deadMu.Lock()
	defer s.deadMu.Unlock()
	f, err := os.OpenFile(s.deadPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(line)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// maybeCompact rewrites the journal as what is pending once it has grown well past that.
func (s *Service) maybeCompact() {
	if !s.journal.due() {
		return
	}
	s.dmu.Lock()
	defer s.dmu.Unlock()
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	if s.journal.f == nil {
		return
	}
	if err := s.journal.rewrite(s.pending); err != nil {
		s.log.Error("rewriting the event journal; it keeps growing until the next try", "error", err)
	}
}

// stopTargets stops every target's deliveries (those under way stay pending) and forgets the
// targets: events put from now on are journaled for none.
func (s *Service) stopTargets() {
	s.mu.Lock()
	s.dmu.Lock()
	ts := s.targets
	s.targets = map[string]*target{}
	s.dmu.Unlock()
	s.mu.Unlock()
	for _, t := range ts {
		t.cancel()
	}
	for _, t := range ts {
		t.wg.Wait()
	}
}
