package eventbridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// JournalFileName is the delivery journal's file under the local directory: every accepted event
// that a durable target (AddTarget) has still to receive, and what became of each delivery.
const JournalFileName = "events.journal"

// The journal is JSON lines, appended. An event's line is made durable (fdatasync) before
// PutEvents or Put answers; the lines that say a delivery ended or failed once are only written:
// a crash that loses one delivers that event again, which at-least-once allows. Open reads the
// journal and rewrites it as what is still pending, and so does a write once the file has grown
// well past that, so it does not grow without end. A crash can tear only the last line, which no
// answer was given for: reading skips a line that is not whole.

// Kinds of journal records.
const (
	recEvent     = "e" // an accepted event and the targets it is for
	recDelivered = "d" // a target received the event
	recAttempts  = "a" // a target's attempts so far (after one that failed)
	recDead      = "x" // a target's attempts ran out: the event went to the dead-letter file
)

type record struct {
	Kind     string     `json:"k"`
	ID       string     `json:"id,omitempty"`
	Target   string     `json:"t,omitempty"`
	Attempts int        `json:"n,omitempty"`
	Event    *FeedEntry `json:"e,omitempty"`
	Targets  []string   `json:"targets,omitempty"`
	At       time.Time  `json:"at,omitzero"` // when the event was accepted: its age counts from here
}

// pendingEvent is an accepted event some durable target has still to receive, with each such
// target's attempts so far.
type pendingEvent struct {
	entry   FeedEntry
	at      time.Time
	targets map[string]int
}

// records are the lines that make p again.
func (p *pendingEvent) records() []record {
	e := p.entry
	out := []record{{Kind: recEvent, Event: &e, At: p.at}}
	for t, n := range p.targets {
		out[0].Targets = append(out[0].Targets, t)
		if n > 0 {
			out = append(out, record{Kind: recAttempts, ID: e.ID, Target: t, Attempts: n})
		}
	}
	return out
}

// journal is the open journal file. Appends and the group fdatasync are safe for concurrent use.
type journal struct {
	path string

	mu      sync.Mutex // the file, its size and the write count
	f       *os.File
	size    int64
	base    int64  // the size after the last rewrite
	written uint64 // appends so far

	smu     sync.Mutex // the group commit
	cond    *sync.Cond
	synced  uint64
	syncing bool
}

// compactMin is the size under which the journal is never rewritten while it runs (a variable for
// the tests).
var compactMin int64 = 1 << 20

// readJournal reads the pending events of the journal at path (none when it is missing).
func readJournal(path string) (map[string]*pendingEvent, error) {
	out := map[string]*pendingEvent{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("eventbridge: open the journal: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return out, nil // a last line without its newline is a torn write: never acknowledged
		}
		if err != nil {
			return nil, fmt.Errorf("eventbridge: read the journal: %w", err)
		}
		var r record
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &r) != nil {
			continue
		}
		apply(out, r)
	}
}

// apply makes r part of the pending events.
func apply(pending map[string]*pendingEvent, r record) {
	if r.Kind == recEvent {
		if r.Event == nil || r.Event.ID == "" {
			return
		}
		p := pending[r.Event.ID]
		if p == nil {
			p = &pendingEvent{entry: *r.Event, at: r.At, targets: map[string]int{}}
			pending[r.Event.ID] = p
		}
		for _, t := range r.Targets {
			if _, ok := p.targets[t]; !ok {
				p.targets[t] = 0
			}
		}
		return
	}
	p := pending[r.ID]
	if p == nil {
		return
	}
	if _, ok := p.targets[r.Target]; !ok {
		return
	}
	switch r.Kind {
	case recAttempts:
		p.targets[r.Target] = max(p.targets[r.Target], r.Attempts)
		return
	case recDelivered, recDead:
		delete(p.targets, r.Target)
	}
	if len(p.targets) == 0 {
		delete(pending, r.ID)
	}
}

// openJournal rewrites the journal at path as pending and opens it for appending.
func openJournal(path string, pending map[string]*pendingEvent) (*journal, error) {
	j := &journal{path: path}
	j.cond = sync.NewCond(&j.smu)
	if err := j.rewrite(pending); err != nil {
		return nil, err
	}
	return j, nil
}

// rewrite replaces the file with pending's records, durably (j.mu held, or j not yet shared).
func (j *journal) rewrite(pending map[string]*pendingEvent) error {
	var buf bytes.Buffer
	for _, p := range pending {
		for _, r := range p.records() {
			line, err := json.Marshal(r)
			if err != nil {
				return fmt.Errorf("eventbridge: encode the journal: %w", err)
			}
			buf.Write(line)
			buf.WriteByte('\n')
		}
	}
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("eventbridge: rewrite the journal: %w", err)
	}
	if _, err = f.Write(buf.Bytes()); err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, j.path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(j.path))
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("eventbridge: rewrite the journal: %w", err)
	}
	if j.f != nil {
		j.f.Close()
	}
	j.f, j.size, j.base = f, int64(buf.Len()), int64(buf.Len())
	// Everything appended so far is in the new file, which is durable.
	j.smu.Lock()
	j.synced = j.written
	j.smu.Unlock()
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// append writes records (not yet durable) and gives the write's number for sync.
func (j *journal) append(recs ...record) (uint64, error) {
	var buf bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return 0, fmt.Errorf("eventbridge: encode the journal: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return 0, errJournalClosed
	}
	if _, err := j.f.Write(buf.Bytes()); err != nil {
		return 0, fmt.Errorf("eventbridge: append to the journal: %w", err)
	}
	j.size += int64(buf.Len())
	j.written++
	return j.written, nil
}

var errJournalClosed = errors.New("eventbridge: the journal is closed")

// sync makes write n, and every write before it, durable. Writers that wait together share one
// fdatasync: the first to find none under way runs it for all that are written by then.
func (j *journal) sync(n uint64) error {
	j.smu.Lock()
	defer j.smu.Unlock()
	for j.synced < n {
		if j.syncing {
			j.cond.Wait()
			continue
		}
		j.syncing = true
		j.smu.Unlock()
		j.mu.Lock()
		f, upTo := j.f, j.written
		j.mu.Unlock()
		err := errJournalClosed
		if f != nil {
			err = datasync(f)
		}
		j.smu.Lock()
		j.syncing = false
		j.cond.Broadcast()
		if err != nil {
			if j.synced >= n {
				return nil // a rewrite made it durable (and closed the file synced here)
			}
			return fmt.Errorf("eventbridge: sync the journal: %w", err)
		}
		j.synced = max(j.synced, upTo)
	}
	return nil
}

// due reports whether the journal has grown enough to be rewritten.
func (j *journal) due() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f != nil && j.size > compactMin && j.size > 4*j.base
}

// close closes the file; later appends fail.
func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Sync()
	err = errors.Join(err, j.f.Close())
	j.f = nil
	return err
}
