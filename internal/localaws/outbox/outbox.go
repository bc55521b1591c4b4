// Package outbox keeps what a local-mode service accepted for later delivery, across crashes.
//
// An entry put is journaled (fdatasync) before Put returns, and delivered to each of its consumers
// until the consumer takes it, at least once, after any restart, with a retry policy; an entry
// whose attempts or age run out goes to a dead-letter file. The local EventBridge's rule targets
// and the local Lambda's asynchronous invocations are its consumers.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Options configure an Outbox.
type Options struct {
	DeadLetterPath string // where entries that run out of attempts go (JSON lines); required
	Logger         *slog.Logger
	Now            func() time.Time
}

// Outbox is the journal and its consumers' deliveries. It is safe for concurrent use.
type Outbox struct {
	log      *slog.Logger
	now      func() time.Time
	deadPath string
	deadMu   sync.Mutex

	// mu guards the items and the consumers. Lock order: mu, then the journal's.
	mu        sync.Mutex
	items     map[string]*item
	consumers map[string]*consumer
	closed    bool
	j         *journal
}

// Open reads the journal at path (made if missing) and rewrites it as what is pending: each entry
// is delivered once its consumer is added.
func Open(path string, o Options) (*Outbox, error) {
	if o.DeadLetterPath == "" {
		return nil, errors.New("outbox: Options.DeadLetterPath is required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	items, err := readJournal(path)
	if err != nil {
		return nil, err
	}
	j, err := openJournal(path, items)
	if err != nil {
		return nil, err
	}
	return &Outbox{log: o.Logger, now: o.Now, deadPath: o.DeadLetterPath, items: items, consumers: map[string]*consumer{}, j: j}, nil
}

// Entry is what Put journals: an id unique in the outbox, the data its consumers are given, and the
// consumers it is for.
type Entry struct {
	ID        string
	Data      json.RawMessage
	Consumers []string
}

// Put journals entries, durably, then starts their deliveries to the consumers added. An entry
// for no consumer is left out. When it returns an error none is to be taken as accepted (some may
// be delivered all the same: at least once).
func (o *Outbox) Put(entries ...Entry) error {
	entries = slices.DeleteFunc(entries, func(e Entry) bool { return len(e.Consumers) == 0 || e.ID == "" })
	if len(entries) == 0 {
		return nil
	}
	now := o.now().UTC()
	var recs []record
	var its []*item
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return errJournalClosed
	}
	for _, e := range entries {
		it := &item{id: e.ID, data: e.Data, at: now, pending: map[string]int{}}
		for _, c := range e.Consumers {
			it.pending[c] = 0
		}
		// Pending before its line is written: a rewrite of the journal in between keeps it.
		o.items[e.ID] = it
		its = append(its, it)
		recs = append(recs, record{Kind: recEntry, ID: e.ID, Data: e.Data, Consumers: e.Consumers, At: now})
	}
	o.mu.Unlock()
	n, err := o.j.append(recs...)
	if err == nil {
		err = o.j.sync(n)
	}
	if err != nil {
		o.forget(its)
		return err
	}
	o.mu.Lock()
	for _, it := range its {
		for name := range it.pending {
			if c := o.consumers[name]; c != nil {
				c.push(&delivery{id: it.id, next: now})
			}
		}
	}
	o.mu.Unlock()
	o.maybeCompact()
	return nil
}

// forget drops items whose put failed.
func (o *Outbox) forget(its []*item) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, it := range its {
		delete(o.items, it.id)
	}
}

// Pending is how many entries some consumer has still to take.
func (o *Outbox) Pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.items)
}

// Close stops the consumers' deliveries (those under way stay pending, for the next open) and
// closes the journal; Put then fails.
func (o *Outbox) Close() error {
	o.mu.Lock()
	cs := o.consumers
	o.consumers, o.closed = map[string]*consumer{}, true
	o.mu.Unlock()
	for _, c := range cs {
		c.cancel()
	}
	for _, c := range cs {
		c.wg.Wait()
	}
	return o.j.close()
}

// settle ends consumer's delivery of entry id with r (delivered or dead-lettered).
func (o *Outbox) settle(id, consumer string, r record) {
	o.mu.Lock()
	if it := o.items[id]; it != nil {
		delete(it.pending, consumer)
		if len(it.pending) == 0 {
			delete(o.items, id)
		}
	}
	o.mu.Unlock()
	// Only written: a crash that loses the line delivers the entry again (at least once).
	if _, err := o.j.append(r); err != nil && !errors.Is(err, errJournalClosed) {
		o.log.Error("journaling a delivery", "consumer", consumer, "id", id, "error", err)
	}
	o.maybeCompact()
}

// maybeCompact rewrites the journal as what is pending once it has grown well past that.
func (o *Outbox) maybeCompact() {
	if !o.j.due() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.j.mu.Lock()
	defer o.j.mu.Unlock()
	if o.j.f == nil {
		return
	}
	if err := o.j.rewrite(o.items); err != nil {
		o.log.Error("rewriting an outbox journal; it keeps growing until the next try", "file", o.j.path, "error", err)
	}
}

// PendingIn reads the journal at path without opening it: each pending entry's consumers. For
// tests and tools.
func PendingIn(path string) (map[string][]string, error) {
	items, err := readJournal(path)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(items))
	for id, it := range items {
		for c := range it.pending {
			out[id] = append(out[id], c)
		}
	}
	return out, nil
}

// DeadLetter is one line of the dead-letter file.
type DeadLetter struct {
	Consumer string          `json:"consumer"`
	ID       string          `json:"id"`
	Data     json.RawMessage `json:"data"`
	Attempts int             `json:"attempts"`
	Error    string          `json:"error"`
	At       time.Time       `json:"at"`
}

// deadLetter writes the entry to the dead-letter file (durably: it is its only copy from now on)
// and ends its delivery to consumer. The data stays out of the log: it may carry a token.
func (o *Outbox) deadLetter(consumer, id string, data json.RawMessage, attempts int, cause error) {
	line, err := json.Marshal(DeadLetter{Consumer: consumer, ID: id, Data: data, Attempts: attempts, Error: cause.Error(), At: o.now().UTC()})
	if err == nil {
		err = o.appendDeadLetter(append(line, '\n'))
	}
	if err != nil {
		o.log.Error("writing a dead letter; the entry stays journaled", "consumer", consumer, "id", id, "error", err)
		return
	}
	o.log.Error("delivery ran out of attempts; the entry is in the dead-letter file", "consumer", consumer,
		"id", id, "attempts", attempts, "file", o.deadPath, "error", cause)
	o.settle(id, consumer, record{Kind: recDead, ID: id, Consumer: consumer})
}

func (o *Outbox) appendDeadLetter(line []byte) error {
	o.deadMu.Lock()
	defer o.deadMu.Unlock()
	return appendSynced(o.deadPath, line)
}

// ReadDeadLetters reads the dead-letter file at path; a missing file holds none.
func ReadDeadLetters(path string) ([]DeadLetter, error) {
	var out []DeadLetter
	err := readLines(path, func(line []byte) {
		var d DeadLetter
		if json.Unmarshal(line, &d) == nil {
			out = append(out, d)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("outbox: read %s: %w", path, err)
	}
	return out, nil
}

// withCancel is a context for a consumer's deliveries, ended by its stop.
func withCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}
