package guard_test

import (
	"bytes"
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/awscount"
	"sinew/internal/executor"
	"sinew/internal/executor/guard"
	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

func newStore(t *testing.T) *store.Store {
	t.Helper()
	db := ddblocal.Client(t)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return store.New(db, ddblocal.NewTable(t, db), sl)
}

func TestGuard(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.Now()
	// A fixed clock: a claim never lapses by waiting, so g does not wait for one (Wait -1).
	g := &guard.Guard{Records: s, Lease: time.Minute, Wait: -1, Now: func() time.Time { return now }}
	type step struct {
		what     string
		fnOut    any
		fnErr    error
		wantRun  bool
		wantOut  any
		wantKind fault.Kind
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a completed call answers its record", []step{
			{"integration/echo", "sent", nil, true, "sent", ""},
			{"integration/echo", "sent again", nil, false, "sent", ""},
		}},
		{"a permanent failure is answered again, not rerun", []step{
			{"integration/echo", nil, fault.New(fault.Provider, "refused"), true, nil, fault.Provider},
			{"integration/echo", "ok", nil, false, nil, fault.Provider},
		}},
		{"a transient failure runs again", []step{
			{"integration/echo", nil, fault.New(fault.Transient, "busy"), true, nil, fault.Transient},
			{"integration/echo", "ok", nil, true, "ok", ""},
			{"integration/echo", "again", nil, false, "ok", ""},
		}},
		{"another call under the same id is a conflict", []step{
			{"integration/echo", "one", nil, true, "one", ""},
			{"api_call/get", "two", nil, false, nil, fault.Conflict},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := tool.NewCallID()
			for i, st := range tt.steps {
				ran := false
				out, err := g.Run(ctx, "dev", id, st.what, func(context.Context) (any, error) { ran = true; return st.fnOut, st.fnErr })
				if ran != st.wantRun || fault.KindOf(err) != st.wantKind || (st.wantKind == "" && out != st.wantOut) {
					t.Errorf("step %d: ran %v, out %v, err %v; want ran %v, out %v, kind %q", i, ran, out, err, st.wantRun, st.wantOut, st.wantKind)
				}
			}
		})
	}

	t.Run("a run in progress elsewhere", func(t *testing.T) {
		id := tool.NewCallID()
		release := make(chan struct{})
		started := make(chan struct{})
		done := make(chan error)
		go func() {
			_, err := g.Run(ctx, "dev", id, "x/y", func(context.Context) (any, error) { close(started); <-release; return "first", nil })
			done <- err
		}()
		<-started
		var runs atomic.Int32
		_, err := g.Run(ctx, "dev", id, "x/y", func(context.Context) (any, error) { runs.Add(1); return "second", nil })
		if !fault.Is(err, fault.Transient) || runs.Load() != 0 {
			t.Errorf("concurrent run: %v (runs %d), want Transient without running", err, runs.Load())
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a long run keeps its claim past the lease", func(t *testing.T) {
		// Real time here: the claim is renewed by a ticker. Generous margins (a renewal every
		// 2/3 s, checked after 5 s) keep a loaded machine from mattering.
		live := &guard.Guard{Records: s, Lease: 2 * time.Second}
		id := tool.NewCallID()
		release, started, done := make(chan struct{}), make(chan struct{}), make(chan error)
		go func() {
			_, err := live.Run(ctx, "dev", id, "x/y", func(context.Context) (any, error) { close(started); <-release; return "first", nil })
			done <- err
		}()
		<-started
		time.Sleep(5 * time.Second)
		var runs atomic.Int32
		_, err := live.Run(ctx, "dev", id, "x/y", func(context.Context) (any, error) { runs.Add(1); return "second", nil })
		if !fault.Is(err, fault.Transient) || runs.Load() != 0 {
			t.Errorf("a run 2.5 leases long was taken over: %v (runs %d), want Transient without running", err, runs.Load())
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if out, err := live.Run(ctx, "dev", id, "x/y", func(context.Context) (any, error) { return "third", nil }); err != nil || out != "first" {
			t.Errorf("after the run: %v %v, want its recorded output", out, err)
		}
	})

	t.Run("a crashed run's claim is waited out, then taken over", func(t *testing.T) {
		// Real time: what a crashed run leaves, running with 1.5 s of its lease left. The next
		// invocation waits for the lapse (its Wait is longer) instead of answering Transient.
		id := tool.NewCallID()
		crashed := map[string]any{"state": "running", "call": "x/y", "until": time.Now().Add(1500 * time.Millisecond).UnixMilli()}
		if _, _, err := s.PutIdempotency(ctx, "dev", guard.Key(id), crashed, time.Hour); err != nil {
			t.Fatal(err)
		}
		waiting := &guard.Guard{Records: s, Wait: 5 * time.Second}
		out, err := waiting.Run(ctx, "dev", id, "x/y", func(context.Context) (any, error) { return "recovered", nil })
		if err != nil || out != "recovered" {
			t.Errorf("after waiting out the claim: %v %v, want the run's output", out, err)
		}
		// A wait shorter than what is left of the claim answers Transient and runs nothing.
		id = tool.NewCallID()
		crashed["until"] = time.Now().Add(time.Minute).UnixMilli()
		if _, _, err := s.PutIdempotency(ctx, "dev", guard.Key(id), crashed, time.Hour); err != nil {
			t.Fatal(err)
		}
		short := &guard.Guard{Records: s, Wait: 200 * time.Millisecond}
		ran := false
		if _, err := short.Run(ctx, "dev", id, "x/y", func(context.Context) (any, error) { ran = true; return nil, nil }); !fault.Is(err, fault.Transient) || ran {
			t.Errorf("a claim a minute from lapsing: %v (ran %v), want Transient without running", err, ran)
		}
	})

	t.Run("a run whose lease ran out is taken over", func(t *testing.T) {
		id := tool.NewCallID()
		// What a crashed run leaves: running, with a lease already over.
		crashed := map[string]any{"state": "running", "call": "x/y", "until": now.Add(-time.Second).UnixMilli()}
		if _, _, err := s.PutIdempotency(ctx, "dev", guard.Key(id), crashed, time.Hour); err != nil {
			t.Fatal(err)
		}
		out, err := g.Run(ctx, "dev", id, "x/y", func(context.Context) (any, error) { return "recovered", nil })
		if err != nil || out != "recovered" {
			t.Errorf("take over: %v %v", out, err)
		}
	})
}

// barrier holds each claim's answer until every invocation has its own: all of them have read the
// same record before any acts on it.
type barrier struct {
	guard.Records
	read *sync.WaitGroup
}

func (b barrier) PutIdempotency(ctx context.Context, dev, key string, value any, ttl time.Duration) (*store.IdemRecord, bool, error) {
	r, created, err := b.Records.PutIdempotency(ctx, dev, key, value, ttl)
	b.read.Done()
	b.read.Wait()
	return r, created, err
}

// TestGuardTakeOverOnce: invocations that find the same lapsed or retry claim at once take it over
// one only: the call runs once and the others answer Transient.
func TestGuardTakeOverOnce(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.Now()
	echo := &tool.Tool{Name: "echo", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "dummy"}}
	what := guard.What(tool.NewCall(echo, "", nil))
	lapsed := map[string]any{"state": "running", "call": what, "until": now.Add(-time.Second).UnixMilli()}
	retry := map[string]any{"state": "retry", "call": what}
	// idem and exec make the records of a call that hold claim.
	idem := func(t *testing.T, call tool.Call, claim any) guard.Records {
		if _, _, err := s.PutIdempotency(ctx, "dev", guard.Key(call.ID), claim, time.Hour); err != nil {
			t.Fatal(err)
		}
		return s
	}
	exec := func(t *testing.T, call tool.Call, claim any) guard.Records {
		x := store.Execution{ExecutionID: "exec-" + call.ID, Workflow: workflow.ToolCall}
		if _, err := s.RecordExecution(ctx, "dev", x, claim); err != nil {
			t.Fatal(err)
		}
		return executor.CallRecords{Store: s, Execution: x, Call: call}
	}
	tests := []struct {
		name    string
		records func(t *testing.T, call tool.Call, claim any) guard.Records
		claim   map[string]any
	}{
		{"idempotency record, lapsed claim", idem, lapsed},
		{"idempotency record, retry", idem, retry},
		{"execution's claim, lapsed claim", exec, lapsed},
		{"execution's claim, retry", exec, retry},
	}
	const invocations = 3
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := tool.NewCall(echo, tool.NewCallID(), nil)
			read := &sync.WaitGroup{}
			read.Add(invocations)
			g := &guard.Guard{Records: barrier{tt.records(t, call, tt.claim), read}, Lease: time.Minute, Wait: -1,
				Now: func() time.Time { return now }}
			var runs atomic.Int32
			errs := make(chan error, invocations)
			for range invocations {
				go func() {
					_, err := g.Run(ctx, "dev", call.ID, what, func(context.Context) (any, error) { runs.Add(1); return "sent", nil })
					errs <- err
				}()
			}
			var ok, transient int
			for range invocations {
				switch err := <-errs; {
				case err == nil:
					ok++
				case fault.Is(err, fault.Transient):
					transient++
				default:
					t.Errorf("invocation: %v", err)
				}
			}
			if runs.Load() != 1 || ok != 1 || transient != invocations-1 {
				t.Errorf("runs %d, successes %d, Transient %d; want one run, one success, %d Transient",
					runs.Load(), ok, transient, invocations-1)
			}
		})
	}
}

// stall holds a run's first renewal of its claim until gate opens, telling renewing when it
// begins and renewed when it has been written: a run that stalls mid-renewal.
type stall struct {
	guard.Records
	renewing, renewed chan struct{}
	gate              chan struct{}
	once              *sync.Once
}

func (s stall) hold() (first bool) {
	s.once.Do(func() { first = true; close(s.renewing); <-s.gate })
	return first
}

func (s stall) UpdateIdempotency(ctx context.Context, dev, key string, value any) (*store.IdemRecord, error) {
	if _, running := value.(map[string]any)["until"]; running && s.hold() {
		defer close(s.renewed)
	}
	return s.Records.UpdateIdempotency(ctx, dev, key, value)
}

func (s stall) TakeOverIdempotency(ctx context.Context, dev, key string, held *store.IdemRecord, value any) (*store.IdemRecord, bool, error) {
	if s.hold() {
		defer close(s.renewed)
	}
	return s.Records.TakeOverIdempotency(ctx, dev, key, held, value)
}

// TestGuardRenewalYields: a run that stalled past its lease, its claim taken over meanwhile, does
// not take the claim back when it renews.
func TestGuardRenewalYields(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	st := stall{Records: s, renewing: make(chan struct{}), renewed: make(chan struct{}), gate: make(chan struct{}), once: &sync.Once{}}
	// Real time: the first renewal comes a third of the lease after the claim.
	g := &guard.Guard{Records: st, Lease: 300 * time.Millisecond, Wait: -1}
	id := tool.NewCallID()
	release, done := make(chan struct{}), make(chan error)
	go func() {
		_, err := g.Run(ctx, "dev", id, "x/y", func(context.Context) (any, error) { <-release; return "first", nil })
		done <- err
	}()
	<-st.renewing
	// What another invocation's takeover leaves while the run stalls.
	theirs := map[string]any{"state": "running", "call": "x/y", "until": time.Now().Add(time.Hour).UnixMilli()}
	if _, err := s.UpdateIdempotency(ctx, "dev", guard.Key(id), theirs); err != nil {
		t.Fatal(err)
	}
	close(st.gate)
	<-st.renewed
	rec, err := s.GetIdempotency(ctx, "dev", guard.Key(id))
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Value.(map[string]any)["until"]; got != theirs["until"] {
		t.Errorf("after the stalled run's renewal, the claim holds until %v, want the takeover's %v", got, theirs["until"])
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A run's claim and outcome are one write each; a repeat reads its answer from its claim's write.
func TestGuardRequests(t *testing.T) {
	n := &awscount.Counter{}
	db := ddblocal.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, n.Register) })
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	g := &guard.Guard{Records: store.New(db, ddblocal.NewTable(t, db), sl), Lease: time.Minute, Wait: -1}
	id := tool.NewCallID()
	tests := []struct {
		name string
		want map[string]int64
	}{
		{"the first run", map[string]int64{"PutItem": 2}},
		{"a repeat", map[string]int64{"PutItem": 1}},
	}
	for _, tt := range tests {
		n.Reset()
		if _, err := g.Run(context.Background(), "dev", id, "integration/echo", func(context.Context) (any, error) { return "sent", nil }); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := n.Ops(); !maps.Equal(got, tt.want) {
			t.Errorf("%s: requests %v, want %v", tt.name, got, tt.want)
		}
	}
}
