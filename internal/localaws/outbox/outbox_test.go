package outbox

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

func fast(int) time.Duration { return time.Millisecond }

func open(t *testing.T, dir string) *Outbox {
	t.Helper()
	o, err := Open(filepath.Join(dir, "j"), Options{DeadLetterPath: filepath.Join(dir, "dead"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestReadJournal: a torn last line is skipped (its put was never answered), as is a line that is
// no record; marks of unknown entries change nothing.
func TestReadJournal(t *testing.T) {
	ent := func(id string, consumers ...string) string {
		b, _ := json.Marshal(record{Kind: recEntry, ID: id, Data: json.RawMessage(`{"x":1}`), Consumers: consumers})
		return string(b) + "\n"
	}
	mark := func(kind, id, consumer string, n int) string {
		b, _ := json.Marshal(record{Kind: kind, ID: id, Consumer: consumer, Attempts: n})
		return string(b) + "\n"
	}
	tests := []struct {
		name string
		in   string
		want map[string]map[string]int
	}{
		{"empty", "", map[string]map[string]int{}},
		{"pending", ent("a", "s", "u"), map[string]map[string]int{"a": {"s": 0, "u": 0}}},
		{"delivered to one", ent("a", "s", "u") + mark(recDelivered, "a", "s", 0), map[string]map[string]int{"a": {"u": 0}}},
		{"delivered to all", ent("a", "s") + mark(recDelivered, "a", "s", 0), map[string]map[string]int{}},
		{"dead-lettered", ent("a", "s") + mark(recDead, "a", "s", 0), map[string]map[string]int{}},
		{"attempts", ent("a", "s") + mark(recAttempts, "a", "s", 2) + mark(recAttempts, "a", "s", 1), map[string]map[string]int{"a": {"s": 2}}},
		{"torn last line", ent("a", "s") + ent("b", "s")[:30], map[string]map[string]int{"a": {"s": 0}}},
		{"garbage line", ent("a", "s") + "{oops\n" + ent("b", "s"), map[string]map[string]int{"a": {"s": 0}, "b": {"s": 0}}},
		{"unknown entry", mark(recDelivered, "z", "s", 0), map[string]map[string]int{}},
		{"twice", ent("a", "s") + ent("a", "s"), map[string]map[string]int{"a": {"s": 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j")
			if err := os.WriteFile(path, []byte(tc.in), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readJournal(path)
			if err != nil {
				t.Fatal(err)
			}
			flat := map[string]map[string]int{}
			for id, it := range got {
				flat[id] = it.pending
				if string(it.data) != `{"x":1}` {
					t.Errorf("%s: data %s", id, it.data)
				}
			}
			a, _ := json.Marshal(flat)
			b, _ := json.Marshal(tc.want)
			if string(a) != string(b) {
				t.Errorf("got %s, want %s", a, b)
			}
		})
	}
}

// TestJournalRewrite: once the journal grows well past what is pending it is rewritten as that,
// without losing an entry put meanwhile by many writers at once.
func TestJournalRewrite(t *testing.T) {
	old := compactMin
	compactMin = 4 << 10
	defer func() { compactMin = old }()
	dir := t.TempDir()
	o := open(t, dir)
	defer o.Close()
	var mu sync.Mutex
	runs := map[string]int{}
	if err := o.AddConsumer(Consumer{Name: "c", Backoff: fast, Retry: RetryPolicy{MaximumRetryAttempts: 3, MaximumEventAge: time.Hour},
		Deliver: func(_ context.Context, id string, _ json.RawMessage) error {
			mu.Lock()
			runs[id]++
			mu.Unlock()
			return nil
		}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 100 {
				id := strconv.Itoa(w) + "-" + strconv.Itoa(i)
				if err := o.Put(Entry{ID: id, Data: json.RawMessage(`{"id":"` + id + `"}`), Consumers: []string{"c"}}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for o.Pending() > 0 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != 800 || o.Pending() != 0 {
		t.Fatalf("%d entries delivered, %d pending; want 800, 0", len(runs), o.Pending())
	}
	for id, n := range runs {
		if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
	info, err := os.Stat(filepath.Join(dir, "j"))
	if err != nil || info.Size() > 4*compactMin {
		t.Errorf("journal of %v bytes after 800 delivered entries (%v): not rewritten", info.Size(), err)
	}
}

// TestPutWithoutConsumers: an entry for no consumer is not journaled, and Put after Close fails
// only for entries it would keep.
func TestPutWithoutConsumers(t *testing.T) {
	o := open(t, t.TempDir())
	if err := o.Put(Entry{ID: "a", Data: json.RawMessage(`{}`)}); err != nil || o.Pending() != 0 {
		t.Fatalf("Put for no consumer: %v, %d pending", err, o.Pending())
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if err := o.Put(Entry{ID: "b", Data: json.RawMessage(`{}`)}); err != nil {
		t.Errorf("Put for no consumer after Close: %v", err)
	}
	if err := o.Put(Entry{ID: "c", Data: json.RawMessage(`{}`), Consumers: []string{"x"}}); err == nil {
		t.Error("Put after Close succeeded")
	}
}
