package outbox

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

// RetryPolicy bounds a consumer's attempts at an entry, as EventBridge's target RetryPolicy and
// Lambda's asynchronous invocation configuration do.
type RetryPolicy struct {
	MaximumRetryAttempts int           // retries after the first attempt: 0 to 185
	MaximumEventAge      time.Duration // how long after the entry was accepted retries go on
}

// DefaultConcurrency bounds a consumer's deliveries running at once when it gives none: enough
// that one slow delivery does not hold back the entries behind it, few enough that a burst does
// not flood what the consumer calls.
const DefaultConcurrency = 16

// Consumer takes the entries put for its name.
type Consumer struct {
	// Name identifies the consumer across restarts: the entries journaled for it are delivered to
	// the consumer of that name added after a restart.
	Name    string
	Deliver func(ctx context.Context, id string, data json.RawMessage) error // nil error: taken
	Retry   RetryPolicy
	// Backoff is the wait before retry number n (1 for the first).
	Backoff func(n int) time.Duration
	// Concurrency bounds the deliveries running at once; 0 is DefaultConcurrency.
	Concurrency int
}

// ExponentialBackoff is a Backoff that doubles from base up to limit, with jitter (half of each
// wait random) so that entries that failed together do not retry together.
func ExponentialBackoff(base, limit time.Duration) func(n int) time.Duration {
	return func(n int) time.Duration {
		d := limit
		if n < 30 && base<<(n-1) > 0 {
			d = min(limit, base<<(n-1))
		}
		return d/2 + rand.N(d/2+1)
	}
}

// AddConsumer starts delivering to c: the entries journaled for its name before (a restart) at
// once, and every entry put for it from now on.
func (o *Outbox) AddConsumer(c Consumer) error {
	if c.Name == "" || c.Deliver == nil || c.Backoff == nil {
		return errors.New("outbox: a consumer needs a name, a Deliver function and a Backoff")
	}
	if c.Retry.MaximumRetryAttempts < 0 || c.Retry.MaximumRetryAttempts > 185 || c.Retry.MaximumEventAge <= 0 {
		return fmt.Errorf("outbox: consumer %s: retry attempts must be 0 to 185 and the event age positive", c.Name)
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	ctx, cancel := withCancel()
	rc := &consumer{Consumer: c, o: o, wake: make(chan struct{}, 1), slots: make(chan struct{}, c.Concurrency), ctx: ctx, cancel: cancel}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		cancel()
		return errJournalClosed
	}
	if o.consumers[c.Name] != nil {
		cancel()
		return fmt.Errorf("outbox: consumer %s is added already", c.Name)
	}
	o.consumers[c.Name] = rc
	now := o.now()
	for id, it := range o.items {
		if n, ok := it.pending[c.Name]; ok {
			heap.Push(&rc.queue, &delivery{id: id, attempts: n, next: now})
		}
	}
	if n := rc.queue.Len(); n > 0 {
		o.log.Info("delivering the entries journaled before the restart", "consumer", c.Name, "entries", n)
	}
	rc.wg.Add(1)
	go rc.run()
	return nil
}

// consumer is an added Consumer and its deliveries.
type consumer struct {
	Consumer
	o      *Outbox
	mu     sync.Mutex
	queue  deliveries
	wake   chan struct{}
	slots  chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// delivery is one entry for a consumer: the attempts that failed so far, and when to try next.
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
func (c *consumer) push(d *delivery) {
	c.mu.Lock()
	heap.Push(&c.queue, d)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run starts each delivery when it is due, in one of the consumer's slots, until it stops.
func (c *consumer) run() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		var d *delivery
		wait := time.Hour
		if c.queue.Len() > 0 {
			if w := c.queue[0].next.Sub(c.o.now()); w <= 0 {
				d = heap.Pop(&c.queue).(*delivery)
			} else {
				wait = w
			}
		}
		c.mu.Unlock()
		if d == nil {
			timer := time.NewTimer(wait)
			select {
			case <-c.wake:
			case <-timer.C:
			case <-c.ctx.Done():
				timer.Stop()
				return
			}
			timer.Stop()
			continue
		}
		select {
		case c.slots <- struct{}{}:
		case <-c.ctx.Done():
			return
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer func() { <-c.slots }()
			c.attempt(d)
		}()
	}
}

// attempt delivers d once and records the outcome: taken, retried after a back-off, or
// dead-lettered once the policy runs out. A delivery cut short by the consumer's stop is left
// pending, for the next open.
func (c *consumer) attempt(d *delivery) {
	o := c.o
	o.mu.Lock()
	var data json.RawMessage
	var at time.Time
	live := false
	if it := o.items[d.id]; it != nil {
		if _, live = it.pending[c.Name]; live {
			data, at = it.data, it.at
		}
	}
	o.mu.Unlock()
	if !live {
		return
	}
	err := c.Deliver(c.ctx, d.id, data)
	if c.ctx.Err() != nil {
		return
	}
	if err == nil {
		o.settle(d.id, c.Name, record{Kind: recDelivered, ID: d.id, Consumer: c.Name})
		return
	}
	d.attempts++
	now := o.now()
	wait := c.Backoff(d.attempts)
	// Past its age before the next attempt could run, an entry is given up now.
	if d.attempts > c.Retry.MaximumRetryAttempts || !now.Add(wait).Before(at.Add(c.Retry.MaximumEventAge)) {
		o.deadLetter(c.Name, d.id, data, d.attempts, err)
		return
	}
	o.log.Warn("delivery failed; retrying", "consumer", c.Name, "id", d.id, "attempt", d.attempts, "retry_in", wait.String(), "error", err)
	o.mu.Lock()
	if it := o.items[d.id]; it != nil {
		if _, ok := it.pending[c.Name]; ok {
			it.pending[c.Name] = d.attempts
		}
	}
	o.mu.Unlock()
	// Only written: a crash that loses it retries the entry sooner, which the policy tolerates.
	if _, err := o.j.append(record{Kind: recAttempts, ID: d.id, Consumer: c.Name, Attempts: d.attempts}); err != nil && !errors.Is(err, errJournalClosed) {
		o.log.Error("journaling a failed delivery", "consumer", c.Name, "id", d.id, "error", err)
	}
	d.next = now.Add(wait)
	c.push(d)
}

// appendSynced appends line to the file at path and makes it durable.
func appendSynced(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(line)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// readLines calls each with every whole line of the file at path (none when it is missing).
func readLines(path string, each func([]byte)) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			each(line)
		}
	}
}
