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

	"sinew/internal/localaws/outbox"
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
		{name: "first attempt", policy: RetryPolicy{MaximumRetryAttempts: 5, MaximumEventAge: time.Hour}, failN: 0, backoff: fast, runs: 1},
		{name: "after three failures", policy: RetryPolicy{MaximumRetryAttempts: 5, MaximumEventAge: time.Hour}, failN: 3, backoff: fast, runs: 4},
		{name: "attempts run out", policy: RetryPolicy{MaximumRetryAttempts: 2, MaximumEventAge: time.Hour}, failN: -1, backoff: fast, runs: 3, dead: true},
		{name: "no retries", policy: RetryPolicy{MaximumRetryAttempts: 0, MaximumEventAge: time.Hour}, failN: -1, backoff: fast, runs: 1, dead: true},
		{name: "age runs out", policy: RetryPolicy{MaximumRetryAttempts: 185, MaximumEventAge: 300 * time.Millisecond}, failN: -1,
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
			waitFor(t, "the delivery to end", func() bool { return svc.outbox.Pending() == 0 })
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
	if got := second.outbox.Pending(); got != 20 {
		t.Fatalf("%d events pending after the restart, want 20", got)
	}
	up := newRecorder(2) // two more failures each: with the one before the crash, 3 of the 4 attempts
	if err := second.AddTarget(Target{Name: "settle", Rule: statusRule, Deliver: up.deliver, Backoff: fast,
		Retry: &RetryPolicy{MaximumRetryAttempts: 3, MaximumEventAge: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every event to be delivered", func() bool { return second.outbox.Pending() == 0 })
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
	if n := third.outbox.Pending(); n != 0 {
		t.Errorf("%d events pending after every one was delivered", n)
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
	pending, err := outbox.PendingIn(filepath.Join(filepath.Dir(svc.FeedPath()), JournalFileName))
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.Entries[0].EventId)
	if len(pending) != 1 || len(pending[id]) != 1 || pending[id][0] != "pending" {
		t.Errorf("journal after the answer: %v, want event %s for target pending", pending, id)
	}
}
