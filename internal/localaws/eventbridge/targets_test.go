package eventbridge

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseb "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

var statusRule = Rule{Pattern: MustParsePattern(`{"source": ["aws.states"], "detail": {"status": ["SUCCEEDED"]}}`)}

// recorder is a target's Deliver: it counts deliveries by event name and fails the first failN of
// each (all of them when failN < 0).
type recorder struct {
	mu    sync.Mutex
	runs  map[string]int
	failN int
}

func newRecorder(failN int) *recorder { return &recorder{runs: map[string]int{}, failN: failN} }

func (r *recorder) deliver(_ context.Context, e Event) error {
	var d struct{ Name string }
	_ = json.Unmarshal(e.Detail, &d)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs[d.Name]++
	if r.failN < 0 || r.runs[d.Name] <= r.failN {
		return errors.New("the target is down")
	}
	return nil
}

func (r *recorder) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[name]
}

func putStatus(t *testing.T, svc *Service, name, status string) {
	t.Helper()
	detail, _ := json.Marshal(map[string]any{"name": name, "status": status})
	if _, err := svc.Put(t.Context(), "", "aws.states", "Step Functions Execution Status Change", detail, nil); err != nil {
		t.Fatal(err)
	}
}

func openAt(t *testing.T, dir string) *Service {
	t.Helper()
	svc, err := Open(Options{Dir: dir, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func fast(int) time.Duration { return time.Millisecond }

// TestTargetRetryPolicy: a failing delivery is retried until it succeeds, or until the policy's
// attempts or age run out, when it goes to the dead-letter file with its attempts.
func TestTargetRetryPolicy(t *testing.T) {
	tests := []struct {
		name     string
		policy   RetryPolicy
		failN    int // -1: every attempt fails
		backoff  func(int) time.Duration
		runs     int  // attempts made (at least, for the age case)
		dead     bool // in the dead-letter file
		atLeast  bool // runs is a lower bound
		maxRuns  int  // with atLeast, an upper bound
		deadRuns int  // the attempts the dead letter records (0: runs)
	}{
		{name: "first attempt", policy: RetryPolicy{5, time.Hour}, failN: 0, backoff: fast, runs: 1},
		{name: "after three failures", policy: RetryPolicy{5, time.Hour}, failN: 3, backoff: fast, runs: 4},
		{name: "attempts run out", policy: RetryPolicy{2, time.Hour}, failN: -1, backoff: fast, runs: 3, dead: true},
		{name: "no retries", policy: RetryPolicy{0, time.Hour}, failN: -1, backoff: fast, runs: 1, dead: true},
		{name: "age runs out", policy: RetryPolicy{185, 300 * time.Millisecond}, failN: -1,
			backoff: func(int) time.Duration { return 50 * time.Millisecond }, runs: 2, dead: true, atLeast: true, maxRuns: 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			svc := openAt(t, dir)
			defer svc.Close()
			rec := newRecorder(tc.failN)
			if err := svc.AddTarget(Target{Name: "settle", Rule: statusRule, Deliver: rec.deliver, Retry: &tc.policy, Backoff: tc.backoff}); err != nil {
				t.Fatal(err)
			}
			putStatus(t, svc, "x", "SUCCEEDED")
			waitFor(t, "the delivery to end", func() bool {
				svc.dmu.Lock()
				defer svc.dmu.Unlock()
				return len(svc.pending) == 0
			})
			got := rec.count("x")
			if (!tc.atLeast && got != tc.runs) || (tc.atLeast && (got < tc.runs || got > tc.maxRuns)) {
				t.Errorf("%d attempts, want %d", got, tc.runs)
			}
			dl, err := ReadDeadLetterFile(filepath.Join(dir, DeadLetterFileName))
			if err != nil {
				t.Fatal(err)
			}
			if tc.dead != (len(dl) == 1) {
				t.Fatalf("dead letters %+v, want dead=%v", dl, tc.dead)
			}
			if tc.dead && (dl[0].Target != "settle" || dl[0].Attempts != got || dl[0].Event.DetailType != "Step Functions Execution Status Change") {
				t.Errorf("dead letter %+v, want settle's after %d attempts", dl[0], got)
			}
		})
	}
}

// TestTargetAcrossCrash: events a target had not received when local mode stopped without a word
// (its journal left as the crash left it) are delivered after the restart, once the target is
// added again, with the attempts they had used; delivered ones are not delivered again, and the
// journal is rewritten to what is pending.
func TestTargetAcrossCrash(t *testing.T) {
	dir := t.TempDir()
	first := openAt(t, dir)
	down := newRecorder(-1)
	slow := func(int) time.Duration { return 10 * time.Minute }
	if err := first.AddTarget(Target{Name: "settle", Rule: statusRule, Deliver: down.deliver, Backoff: slow,
		Retry: &RetryPolicy{MaximumRetryAttempts: 3, MaximumEventAge: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		putStatus(t, first, "e"+strconv.Itoa(i), "SUCCEEDED")
	}
	putStatus(t, first, "running", "RUNNING") // matches no target: not journaled
	waitFor(t, "every first attempt", func() bool {
		for i := range 20 {
			if down.count("e"+strconv.Itoa(i)) != 1 {
				return false
			}
		}
		return true
	})
	// The crash: nothing of first is closed or flushed; a second process opens the directory.
	second := openAt(t, dir)
	defer second.Close()
	if got := len(second.pending); got != 20 {
		t.Fatalf("%d events pending after the restart, want 20", got)
	}
	up := newRecorder(2) // two more failures each: with the one before the crash, 3 of the 4 attempts
	if err := second.AddTarget(Target{Name: "settle", Rule: statusRule, Deliver: up.deliver, Backoff: fast,
		Retry: &RetryPolicy{MaximumRetryAttempts: 3, MaximumEventAge: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every event to be delivered", func() bool {
		second.dmu.Lock()
		defer second.dmu.Unlock()
		return len(second.pending) == 0
	})
	for i := range 20 {
		if n := up.count("e" + strconv.Itoa(i)); n != 3 {
			t.Errorf("e%d: %d attempts after the restart, want 3", i, n)
		}
	}
	if up.count("running") != 0 {
		t.Error("an event no target matched was delivered")
	}
	first.Close()
	third := openAt(t, dir)
	defer third.Close()
	if len(third.pending) != 0 {
		t.Errorf("%d events pending after every one was delivered", len(third.pending))
	}
	if info, err := os.Stat(filepath.Join(dir, JournalFileName)); err != nil || info.Size() != 0 {
		t.Errorf("the journal after a restart with nothing pending: %v %v, want empty", info, err)
	}
}

// TestPutEventsJournaledBeforeAnswer: an event PutEvents answered success for is in the journal
// (durable) for its targets when the answer arrives, and one the rule does not match is not.
func TestPutEventsJournaledBeforeAnswer(t *testing.T) {
	svc, client, _ := start(t, nil)
	block := make(chan struct{})
	defer close(block)
	rule := Rule{Bus: "sinew", Pattern: MustParsePattern(`{"detail-type": ["ToolCallPending"]}`)}
	if err := svc.AddTarget(Target{Name: "pending", Rule: rule, Deliver: func(ctx context.Context, e Event) error {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	out, err := client.PutEvents(t.Context(), &awseb.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("sinew"), DetailType: aws.String("ToolCallPending"), Detail: aws.String(`{"call_id":"c1"}`), EventBusName: aws.String("sinew")},
		{Source: aws.String("sinew"), DetailType: aws.String("Other"), Detail: aws.String(`{}`), EventBusName: aws.String("sinew")},
	}})
	if err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("PutEvents: %v %v", out, err)
	}
	pending, err := readJournal(svc.journal.path)
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.Entries[0].EventId)
	if len(pending) != 1 || pending[id] == nil || pending[id].targets["pending"] != 0 {
		t.Errorf("journal after the answer: %v, want event %s for target pending", pending, id)
	}
}

// TestReadJournal: a torn last line is skipped (its put was never answered), as is a line that is
// no record; marks of unknown events change nothing.
func TestReadJournal(t *testing.T) {
	ev := func(id string, targets ...string) string {
		b, _ := json.Marshal(record{Kind: recEvent, Event: &FeedEntry{EventBusName: "default", Event: Event{ID: id}}, Targets: targets})
		return string(b) + "\n"
	}
	mark := func(kind, id, target string, n int) string {
		b, _ := json.Marshal(record{Kind: kind, ID: id, Target: target, Attempts: n})
		return string(b) + "\n"
	}
	tests := []struct {
		name string
		in   string
		want map[string]map[string]int
	}{
		{"empty", "", map[string]map[string]int{}},
		{"pending", ev("a", "s", "u"), map[string]map[string]int{"a": {"s": 0, "u": 0}}},
		{"delivered to one", ev("a", "s", "u") + mark(recDelivered, "a", "s", 0), map[string]map[string]int{"a": {"u": 0}}},
		{"delivered to all", ev("a", "s") + mark(recDelivered, "a", "s", 0), map[string]map[string]int{}},
		{"dead-lettered", ev("a", "s") + mark(recDead, "a", "s", 0), map[string]map[string]int{}},
		{"attempts", ev("a", "s") + mark(recAttempts, "a", "s", 2) + mark(recAttempts, "a", "s", 1), map[string]map[string]int{"a": {"s": 2}}},
		{"torn last line", ev("a", "s") + ev("b", "s")[:30], map[string]map[string]int{"a": {"s": 0}}},
		{"garbage line", ev("a", "s") + "{oops\n" + ev("b", "s"), map[string]map[string]int{"a": {"s": 0}, "b": {"s": 0}}},
		{"unknown event", mark(recDelivered, "z", "s", 0), map[string]map[string]int{}},
		{"twice", ev("a", "s") + ev("a", "s"), map[string]map[string]int{"a": {"s": 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), JournalFileName)
			if err := os.WriteFile(path, []byte(tc.in), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readJournal(path)
			if err != nil {
				t.Fatal(err)
			}
			flat := map[string]map[string]int{}
			for id, p := range got {
				flat[id] = p.targets
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
// without losing an event put meanwhile.
func TestJournalRewrite(t *testing.T) {
	old := compactMin
	compactMin = 4 << 10
	defer func() { compactMin = old }()
	dir := t.TempDir()
	svc := openAt(t, dir)
	defer svc.Close()
	rec := newRecorder(0)
	if err := svc.AddTarget(Target{Name: "settle", Rule: statusRule, Deliver: rec.deliver, Backoff: fast}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 100 {
				putStatus(t, svc, "w"+strconv.Itoa(w)+"-"+strconv.Itoa(i), "SUCCEEDED")
			}
		})
	}
	wg.Wait()
	waitFor(t, "every event to be delivered", func() bool {
		svc.dmu.Lock()
		defer svc.dmu.Unlock()
		return len(svc.pending) == 0
	})
	for w := range 8 {
		for i := range 100 {
			if n := rec.count("w" + strconv.Itoa(w) + "-" + strconv.Itoa(i)); n != 1 {
				t.Fatalf("w%d-%d delivered %d times", w, i, n)
			}
		}
	}
	info, err := os.Stat(filepath.Join(dir, JournalFileName))
	if err != nil || info.Size() > 4*compactMin {
		t.Errorf("journal of %v bytes after 800 delivered events (%v): not rewritten", info.Size(), err)
	}
}
