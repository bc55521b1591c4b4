package store_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/store"
)

// rawItem reads an item as DynamoDB holds it.
func (e *env) rawItem(t testing.TB, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := e.db.GetItem(ctx(), &dynamodb.GetItemInput{TableName: &e.table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

func ttlOf(t testing.TB, it map[string]types.AttributeValue) int64 {
	t.Helper()
	n, ok := it[store.AttrTTL].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("item has no %s attribute: %v", store.AttrTTL, it)
	}
	v, _ := strconv.ParseInt(n.Value, 10, 64)
	return v
}

func TestExecutionAndCallLifecycle(t *testing.T) {
	e := newEnv(t)
	x, created, err := e.s.CreateExecution(ctx(), "d", store.Execution{ExecutionID: "exec-1", Workflow: "tool_call"})
	if err != nil || !created || x.Status != store.ExecRunning {
		t.Fatalf("create: %+v %v %v", x, created, err)
	}
	// Prepare running again does not reset the record.
	if _, created, err := e.s.CreateExecution(ctx(), "d", store.Execution{ExecutionID: "exec-1", Workflow: "tool_call"}); err != nil || created {
		t.Fatalf("second create: created %v, %v", created, err)
	}
	exp := e.clock.t.Add(time.Hour)
	pc := store.PendingCall{CallID: "call_a", ExecutionID: "exec-1", Tool: "ask", TaskToken: "token-1", ExpiresAt: exp, Arguments: map[string]any{"n": int64(1)}}
	must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), "d", pc))
	got := must[*store.Execution](t)(e.s.GetExecution(ctx(), "d", "exec-1"))
	if got.Status != store.ExecAwaitingInput || len(got.PendingCalls) != 1 || got.PendingCalls[0].TaskToken != "token-1" {
		t.Fatalf("execution %+v", got)
	}

	// TTL: kept 30 days past the call's expiry.
	raw := e.rawItem(t, "DEV#d#EXEC#exec-1", "CALL#call_a")
	if got, want := ttlOf(t, raw), exp.Add(store.CallRetention).Unix(); got != want {
		t.Errorf("ttl %d, want %d", got, want)
	}

	// A retry of the function Task overwrites the pending call with a new token.
	pc.TaskToken = "token-2"
	must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), "d", pc))

	settled := must[*store.PendingCall](t)(e.s.SettleCall(ctx(), "d", "exec-1", "call_a", store.CallAnswered))
	if settled.Status != store.CallAnswered || settled.TaskToken != "token-2" {
		t.Fatalf("settled %+v", settled)
	}
	// Settling again the same way is fine; answering again is a Conflict, and so is a retry put.
	must[*store.PendingCall](t)(e.s.SettleCall(ctx(), "d", "exec-1", "call_a", store.CallAnswered))
	_, err = e.s.SettleCall(ctx(), "d", "exec-1", "call_a", store.CallFailed)
	wantKind(t, err, fault.Conflict)
	_, err = e.s.PutPendingCall(ctx(), "d", pc)
	wantKind(t, err, fault.Conflict)
	if got := must[*store.Execution](t)(e.s.GetExecution(ctx(), "d", "exec-1")); len(got.PendingCalls) != 0 {
		t.Errorf("answered call still pending: %+v", got.PendingCalls)
	}

	// A call whose wait ended is left out of the pending ones, before and after the settle step
	// marks it expired.
	must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), "d", store.PendingCall{CallID: "call_b", ExecutionID: "exec-1", Tool: "ask", TaskToken: "t", ExpiresAt: e.clock.t.Add(time.Minute)}))
	if got := must[*store.List[store.PendingCall]](t)(e.s.ListCalls(ctx(), "d", store.CallPending, store.Page{})); len(got.Items) != 1 {
		t.Fatalf("pending calls before the wait ended: %+v, want call_b", got.Items)
	}
	e.clock.advance(2 * time.Minute)
	if got := must[*store.List[store.PendingCall]](t)(e.s.ListCalls(ctx(), "d", store.CallPending, store.Page{})); len(got.Items) != 0 {
		t.Errorf("pending calls after the wait ended: %+v, want none", got.Items)
	}
	must[*store.PendingCall](t)(e.s.SettleCall(ctx(), "d", "exec-1", "call_b", store.CallExpired))
	_, err = e.s.SettleCall(ctx(), "d", "exec-1", "call_b", store.CallAnswered)
	wantKind(t, err, fault.Conflict)
	all := must[[]store.PendingCall](t)(e.s.ExecutionCalls(ctx(), "d", "exec-1"))
	if len(all) != 2 || all[0].Status != store.CallAnswered || all[1].Status != store.CallExpired {
		t.Errorf("execution calls %+v", all)
	}
	// Once TTL's time has passed the call is gone for good, even before DynamoDB removes it.
	e.clock.advance(store.CallRetention + time.Hour)
	_, err = e.s.GetCall(ctx(), "d", "exec-1", "call_b")
	wantKind(t, err, fault.NotFound)

	// The final status is kept: the first final one wins.
	x, changed, err := e.s.SetExecutionStatus(ctx(), "d", "exec-1", store.ExecFailed, nil, map[string]any{"type": "Sinew.Provider", "message": "no"})
	if err != nil || !changed || x.Status != store.ExecFailed {
		t.Fatalf("set failed: %+v %v %v", x, changed, err)
	}
	x, changed, err = e.s.SetExecutionStatus(ctx(), "d", "exec-1", store.ExecSucceeded, map[string]any{"ok": true}, nil)
	if err != nil || changed || x.Status != store.ExecFailed || x.Output != nil {
		t.Fatalf("a later final status changed the record: %+v %v %v", x, changed, err)
	}
	// No pending call can be added to an ended execution, nor to a missing one.
	_, err = e.s.PutPendingCall(ctx(), "d", store.PendingCall{CallID: "call_c", ExecutionID: "exec-1", Tool: "ask", TaskToken: "t", ExpiresAt: e.clock.t.Add(time.Hour)})
	wantKind(t, err, fault.Conflict)
	_, err = e.s.PutPendingCall(ctx(), "d", store.PendingCall{CallID: "call_c", ExecutionID: "nope", Tool: "ask", TaskToken: "t", ExpiresAt: e.clock.t.Add(time.Hour)})
	wantKind(t, err, fault.NotFound)
	// A function Task's put (with its execution's record), which writes the call first, expires
	// the call it put when the execution has ended.
	_, err = e.s.PutPendingCall(ctx(), "d", store.PendingCall{CallID: "call_d", ExecutionID: "exec-1", Tool: "ask", TaskToken: "t", ExpiresAt: e.clock.t.Add(time.Hour)},
		store.Execution{Workflow: "tool_call"})
	wantKind(t, err, fault.Conflict)
	if c, err := e.s.GetCall(ctx(), "d", "exec-1", "call_d"); err != nil || c.Status != store.CallExpired {
		t.Errorf("the call put for an ended execution: %+v, %v; want expired", c, err)
	}
}

func TestListCallsAndExecutions(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		id := fmt.Sprintf("exec-%d", i)
		if _, _, err := e.s.CreateExecution(ctx(), "d", store.Execution{ExecutionID: id, Workflow: "agent_loop"}); err != nil {
			t.Fatal(err)
		}
		must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), "d", store.PendingCall{CallID: "c", ExecutionID: id, Tool: "ask", TaskToken: "t", ExpiresAt: e.clock.t.Add(time.Duration(i+1) * time.Minute)}))
		e.clock.advance(time.Millisecond)
	}
	execs := must[*store.List[store.Execution]](t)(e.s.ListExecutions(ctx(), "d", store.Page{Limit: 3}))
	if len(execs.Items) != 3 || execs.Items[0].ExecutionID != "exec-4" || execs.NextCursor == nil {
		t.Fatalf("first page %+v", execs)
	}
	rest := must[*store.List[store.Execution]](t)(e.s.ListExecutions(ctx(), "d", store.Page{Limit: 3, Cursor: *execs.NextCursor}))
	if len(rest.Items) != 2 || rest.Items[1].ExecutionID != "exec-0" || rest.NextCursor != nil {
		t.Fatalf("second page %+v", rest)
	}
	must[*store.PendingCall](t)(e.s.SettleCall(ctx(), "d", "exec-2", "c", store.CallAnswered))
	e.clock.advance(90 * time.Second) // exec-0's call has expired, unmarked
	pending := must[*store.List[store.PendingCall]](t)(e.s.ListCalls(ctx(), "d", store.CallPending, store.Page{}))
	var ids []string
	for _, c := range pending.Items {
		ids = append(ids, c.ExecutionID)
	}
	if fmt.Sprint(ids) != "[exec-1 exec-3 exec-4]" {
		t.Errorf("pending calls of %v, want [exec-1 exec-3 exec-4] (oldest first)", ids)
	}
	answered := must[*store.List[store.PendingCall]](t)(e.s.ListCalls(ctx(), "d", store.CallAnswered, store.Page{}))
	if len(answered.Items) != 1 || answered.Items[0].ExecutionID != "exec-2" {
		t.Errorf("answered %+v", answered.Items)
	}
}

func TestIdempotency(t *testing.T) {
	e := newEnv(t)
	r, created, err := e.s.PutIdempotency(ctx(), "d", "call:abc", map[string]any{"state": "running"}, time.Hour)
	if err != nil || !created {
		t.Fatalf("first put: %v %v", created, err)
	}
	raw := e.rawItem(t, "DEV#d#IDEM#call:abc", "IDEM")
	if got, want := ttlOf(t, raw), r.ExpiresAt.Unix(); got != want {
		t.Errorf("ttl %d, want %d", got, want)
	}
	again, created, err := e.s.PutIdempotency(ctx(), "d", "call:abc", "other", time.Hour)
	if err != nil || created || again.Value.(map[string]any)["state"] != "running" {
		t.Fatalf("second put answered %+v %v %v, want the first record", again, created, err)
	}
	must[*store.IdemRecord](t)(e.s.UpdateIdempotency(ctx(), "d", "call:abc", map[string]any{"output": int64(7)}))
	got := must[*store.IdemRecord](t)(e.s.GetIdempotency(ctx(), "d", "call:abc"))
	if got.Value.(map[string]any)["output"] != int64(7) {
		t.Errorf("value %v", got.Value)
	}
	// After its time, the key is free again even if DynamoDB has not removed the item yet.
	e.clock.advance(2 * time.Hour)
	_, err = e.s.GetIdempotency(ctx(), "d", "call:abc")
	wantKind(t, err, fault.NotFound)
	_, created, err = e.s.PutIdempotency(ctx(), "d", "call:abc", "new", time.Hour)
	if err != nil || !created {
		t.Fatalf("put after expiry: %v %v", created, err)
	}
}
