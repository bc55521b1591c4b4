package store_test

import (
	"context"
	"testing"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

// openRef finds an execution in the open index (nil when it is not there).
func openRef(t *testing.T, e *env, dev, id string) *store.OpenRef {
	t.Helper()
	for shard := range store.OpenShards {
		refs := must[[]store.OpenRef](t)(e.s.OpenExecutions(ctx(), shard, e.clock.t.Add(time.Hour), 1000))
		for _, r := range refs {
			if r.Dev == dev && r.ExecutionID == id {
				return &r
			}
		}
	}
	return nil
}

// TestOpenIndex: a record is in the open index from the write that makes it, whichever makes it,
// until the one that makes it final, whichever that is; a write that lands on a final record puts
// it back, and CloseOpen takes it out again (never out of a record still open).
func TestOpenIndex(t *testing.T) {
	e := newEnv(t)
	const dev = "dev/with#odd%chars"
	pending := func(id string) store.PendingCall {
		return store.PendingCall{ExecutionID: id, CallID: "c1", Tool: "ask", TaskToken: "tok", ExpiresAt: e.clock.t.Add(time.Hour)}
	}
	x := func(id string) store.Execution { return store.Execution{ExecutionID: id, Workflow: "tool_call"} }
	tests := []struct {
		name  string
		steps func(id string)
		open  bool
	}{
		{"made by the route", func(id string) { must[*store.Execution](t)(createOpen(e, dev, id)) }, true},
		{"made final", func(id string) {
			_, _, err := e.s.CreateExecution(ctx(), dev, store.Execution{ExecutionID: id, Workflow: "tool_call", Status: store.ExecFailed})
			must[any](t)(nil, err)
		}, false},
		{"made by the first state", func(id string) { must[*store.Execution](t)(e.s.EnsureExecution(ctx(), dev, x(id))) }, true},
		{"made by a claim", func(id string) {
			_, _, _, err := e.s.ClaimExecution(ctx(), dev, x(id), map[string]any{"n": 1})
			must[any](t)(nil, err)
		}, true},
		{"made by its pending call", func(id string) { must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), dev, pending(id), x(id))) }, true},
		{"ended by settle", func(id string) {
			must[*store.Execution](t)(createOpen(e, dev, id))
			_, _, err := e.s.SetExecutionStatus(ctx(), dev, id, store.ExecTimedOut, nil, map[string]any{"type": "Sinew.Timeout"})
			must[any](t)(nil, err)
		}, false},
		{"awaiting input stays open", func(id string) {
			must[*store.Execution](t)(createOpen(e, dev, id))
			_, _, err := e.s.SetExecutionStatus(ctx(), dev, id, store.ExecAwaitingInput, nil, nil)
			must[any](t)(nil, err)
		}, true},
		{"ended by its answered call", func(id string) {
			must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), dev, pending(id), x(id)))
			must[bool](t)(e.s.SucceedWithCall(ctx(), dev, id, "c1", map[string]any{"ok": true}))
		}, false},
		{"ended by its executor", func(id string) {
			must[any](t)(nil, e.s.SetExecutionClaim(ctx(), dev, x(id), map[string]any{"n": 1}, nil, map[string]any{"ok": true}))
		}, false},
		{"made again after its end, then closed", func(id string) {
			must[*store.Execution](t)(createOpen(e, dev, id))
			_, _, err := e.s.SetExecutionStatus(ctx(), dev, id, store.ExecSucceeded, map[string]any{}, nil)
			must[any](t)(nil, err)
			must[*store.Execution](t)(e.s.RecordExecution(ctx(), dev, x(id), nil))
			if openRef(t, e, dev, id) == nil {
				t.Fatal("a write after the end did not put the record back (the test of CloseOpen needs it)")
			}
			must[any](t)(nil, e.s.CloseOpen(ctx(), dev, id))
		}, false},
		{"not closed while open", func(id string) {
			must[*store.Execution](t)(createOpen(e, dev, id))
			must[any](t)(nil, e.s.CloseOpen(ctx(), dev, id))
		}, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "exec-open-" + string(rune('a'+i))
			tt.steps(id)
			if got := openRef(t, e, dev, id) != nil; got != tt.open {
				t.Errorf("in the open index: %v, want %v", got, tt.open)
			}
		})
	}
}

func createOpen(e *env, dev, id string) (*store.Execution, error) {
	x, _, err := e.s.CreateExecution(ctx(), dev, store.Execution{ExecutionID: id, Workflow: "tool_call"})
	return x, err
}

// TestOpenExecutionsDue: the open index gives the records whose grace runs from before a time,
// oldest first, up to the limit; DeferOpen moves a record on, unless it moved meanwhile.
func TestOpenExecutionsDue(t *testing.T) {
	e := newEnv(t)
	t0 := e.clock.t
	var ids []string
	for i := range 40 {
		id := "exec-due-" + string(rune('A'+i))
		ids = append(ids, id)
		must[*store.Execution](t)(createOpen(e, "d", id))
		e.clock.advance(time.Second)
	}
	due := func(before time.Time, limit int) []store.OpenRef {
		var out []store.OpenRef
		for shard := range store.OpenShards {
			refs := must[[]store.OpenRef](t)(e.s.OpenExecutions(ctx(), shard, before, limit))
			for i := 1; i < len(refs); i++ {
				if refs[i].Since.Before(refs[i-1].Since) {
					t.Errorf("shard %d: not oldest first: %v", shard, refs)
				}
			}
			out = append(out, refs...)
		}
		return out
	}
	if n := len(due(t0.Add(9500*time.Millisecond), 100)); n != 10 {
		t.Errorf("%d records due 9.5 s after the first, want 10", n)
	}
	if n := len(due(t0.Add(time.Hour), 1)); n > store.OpenShards {
		t.Errorf("%d records with a limit of 1 per shard", n)
	}
	refs := due(t0, 100)
	if len(refs) != 1 || refs[0].ExecutionID != ids[0] || refs[0].Dev != "d" {
		t.Fatalf("due at the first's making: %+v", refs)
	}
	if !must[bool](t)(e.s.DeferOpen(ctx(), refs[0], t0.Add(time.Hour))) {
		t.Fatal("DeferOpen of a record as read failed")
	}
	if must[bool](t)(e.s.DeferOpen(ctx(), refs[0], t0.Add(2*time.Hour))) {
		t.Error("DeferOpen of a record moved meanwhile succeeded")
	}
	if n := len(due(t0.Add(9500*time.Millisecond), 100)); n != 9 {
		t.Errorf("%d records due after one was deferred, want 9", n)
	}
}

// TestEnsureTableAddsGSI2: a table made before GSI2 (local mode's DynamoDB Local data) gets it.
func TestEnsureTableAddsGSI2(t *testing.T) {
	db := ddblocal.Client(t)
	name := "sinew-gsi2-" + t.Name()
	spec := store.TableSpec(name)
	spec.GlobalSecondaryIndexes = spec.GlobalSecondaryIndexes[:1]
	spec.AttributeDefinitions = spec.AttributeDefinitions[:4]
	if _, err := db.CreateTable(ctx(), spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name}) })
	if err := store.EnsureTable(ctx(), db, name); err != nil {
		t.Fatal(err)
	}
	d, err := db.DescribeTable(ctx(), &dynamodb.DescribeTableInput{TableName: awsv2.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range d.Table.GlobalSecondaryIndexes {
		names = append(names, awsv2.ToString(g.IndexName))
		if awsv2.ToString(g.IndexName) == store.GSI2 && (g.IndexStatus != types.IndexStatusActive || g.Projection.ProjectionType != types.ProjectionTypeKeysOnly) {
			t.Errorf("gsi2 %s, projection %s", g.IndexStatus, g.Projection.ProjectionType)
		}
	}
	if len(names) != 2 {
		t.Errorf("indexes %v, want gsi1 and gsi2", names)
	}
}
