package outbox

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

// The journal is JSON lines, appended. An entry's line is made durable (fdatasync) before Put
// returns; the lines that say a delivery ended or failed once are only written: a crash that loses
// one delivers that entry again, which at-least-once allows. Open reads the journal and rewrites
// it as what is still pending, and so does a write once the file has grown well past that, so it
// does not grow without end. A crash can tear only the last line, which no answer was given for:
// reading skips a line that is not whole.

// Kinds of journal records.
const (
	recEntry     = "e" // an accepted entry and the consumers it is for
	recDelivered = "d" // a consumer took the entry
	recAttempts  = "a" // a consumer's attempts so far (after one that failed)
	recDead      = "x" // a consumer's attempts ran out: the entry went to the dead-letter file
)

type record struct {
	Kind      string          `json:"k"`
	ID        string          `json:"id"`
	Consumer  string          `json:"c,omitempty"`
	Attempts  int             `json:"n,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Consumers []string        `json:"consumers,omitempty"`
	At        time.Time       `json:"at,omitzero"` // when the entry was accepted: its age counts from here
}

// item is an accepted entry some consumer has still to take, with each such consumer's attempts
// so far.
type item struct {
	id      string
	data    json.RawMessage
	at      time.Time
	pending map[string]int
}

// records are the lines that make it again.
func (it *item) records() []record {
	out := []record{{Kind: recEntry, ID: it.id, Data: it.data, At: it.at}}
	for c, n := range it.pending {
		out[0].Consumers = append(out[0].Consumers, c)
		if n > 0 {
			out = append(out, record{Kind: recAttempts, ID: it.id, Consumer: c, Attempts: n})
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

// readJournal reads the pending items of the journal at path (none when it is missing).
func readJournal(path string) (map[string]*item, error) {
	out := map[string]*item{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: open the journal: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return out, nil // a last line without its newline is a torn write: never acknowledged
		}
		if err != nil {
			return nil, fmt.Errorf("outbox: read the journal: %w", err)
		}
		var r record
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &r) != nil {
			continue
		}
		apply(out, r)
	}
}

// apply makes r part of the pending items.
func apply(items map[string]*item, r record) {
	if r.ID == "" {
		return
	}
	if r.Kind == recEntry {
		it := items[r.ID]
		if it == nil {
			it = &item{id: r.ID, data: r.Data, at: r.At, pending: map[string]int{}}
			items[r.ID] = it
		}
		for _, c := range r.Consumers {
			if _, ok := it.pending[c]; !ok {
				it.pending[c] = 0
			}
		}
		return
	}
	it := items[r.ID]
	if it == nil {
		return
	}
	if _, ok := it.pending[r.Consumer]; !ok {
		return
	}
	switch r.Kind {
	case recAttempts:
		it.pending[r.Consumer] = max(it.pending[r.Consumer], r.Attempts)
		return
	case recDelivered, recDead:
		delete(it.pending, r.Consumer)
	}
	if len(it.pending) == 0 {
		delete(items, r.ID)
	}
}

// openJournal rewrites the journal at path as items and opens it for appending.
func openJournal(path string, items map[string]*item) (*journal, error) {
	j := &journal{path: path}
	j.cond = sync.NewCond(&j.smu)
	if err := j.rewrite(items); err != nil {
		return nil, err
	}
	return j, nil
}

// rewrite replaces the file with the items' records, durably (j.mu held, or j not yet shared).
func (j *journal) rewrite(items map[string]*item) error {
	var buf bytes.Buffer
	for _, it := range items {
		for _, r := range it.records() {
			line, err := json.Marshal(r)
			if err != nil {
				return fmt.Errorf("outbox: encode the journal: %w", err)
			}
			buf.Write(line)
			buf.WriteByte('\n')
		}
	}
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("outbox: rewrite the journal: %w", err)
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
		return fmt.Errorf("outbox: rewrite the journal: %w", err)
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
			return 0, fmt.Errorf("outbox: encode the journal: %w", err)
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
		return 0, fmt.Errorf("outbox: append to the journal: %w", err)
	}
	j.size += int64(buf.Len())
	j.written++
	return j.written, nil
}

var errJournalClosed = errors.New("outbox: the journal is closed")

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
			return fmt.Errorf("outbox: sync the journal: %w", err)
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
