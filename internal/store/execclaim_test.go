package store_test

import (
	"fmt"
	"testing"
	"time"

	"sinew/internal/store"
)

// TestExecutionClaim: a tool_call's claim and outcome on its execution's record, written in any
// order by the route and the executor, each one request.
func TestExecutionClaim(t *testing.T) {
	x := store.Execution{ExecutionID: "exec-1", Workflow: "tool_call", AgentID: "a1"}
	running := map[string]any{"state": "running", "call": "integration/echo", "until": int64(1)}
	done := map[string]any{"state": "done", "call": "integration/echo", "output": "hi"}
	tests := []struct {
		name       string
		write      func(e *env)
		wantStatus store.ExecStatus
		wantOutput any
		wantAgent  string
	}{
		{"the route first, then the executor", func(e *env) {
			must[*store.Execution](t)(e.s.RecordExecution(ctx(), "d", x, running))
			if _, _, created, err := e.s.ClaimExecution(ctx(), "d", x, running); err != nil || created {
				t.Fatalf("claim over the route's = %v, %v; want the route's claim answered", created, err)
			}
			if err := e.s.SetExecutionClaim(ctx(), "d", x, done, nil, map[string]any{"output": "hi"}); err != nil {
				t.Fatal(err)
			}
		}, store.ExecSucceeded, map[string]any{"output": "hi"}, "a1"},
		{"the executor first, then the route", func(e *env) {
			if err := e.s.SetExecutionClaim(ctx(), "d", store.Execution{ExecutionID: "exec-1", Workflow: "tool_call"}, done, nil, map[string]any{"output": "hi"}); err != nil {
				t.Fatal(err)
			}
			rec := must[*store.Execution](t)(e.s.RecordExecution(ctx(), "d", x, running))
			if rec.Status != store.ExecSucceeded {
				t.Fatalf("the route's record = %+v, want the executor's outcome kept", rec)
			}
			if held, _, created, err := e.s.ClaimExecution(ctx(), "d", x, running); err != nil || created || held.(map[string]any)["state"] != "done" {
				t.Fatalf("claim after the outcome = %v, %v, %v; want the done claim", held, created, err)
			}
		}, store.ExecSucceeded, map[string]any{"output": "hi"}, ""},
		{"an ended execution keeps its status", func(e *env) {
			must[*store.Execution](t)(e.s.RecordExecution(ctx(), "d", x, running))
			if _, _, err := e.s.SetExecutionStatus(ctx(), "d", "exec-1", store.ExecCancelled, nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := e.s.SetExecutionClaim(ctx(), "d", x, done, nil, map[string]any{"output": "late"}); err != nil {
				t.Fatal(err)
			}
		}, store.ExecCancelled, nil, "a1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.write(e)
			rec := must[*store.Execution](t)(e.s.GetExecution(ctx(), "d", "exec-1"))
			if rec.Status != tt.wantStatus || rec.AgentID != tt.wantAgent || (tt.wantOutput == nil) != (rec.Output == nil) {
				t.Errorf("record = %+v, want %s with output %v, agent %q", rec, tt.wantStatus, tt.wantOutput, tt.wantAgent)
			}
		})
	}
}

// TestSucceedWithCall: the status-change event's record of an answered function call: its call
// and the execution in two plain updates; nothing changes once the execution has ended, and a run
// that stopped after the call's update is finished by the next (the event's retry, the sweep).
func TestSucceedWithCall(t *testing.T) {
	e := newEnv(t)
	x := store.Execution{ExecutionID: "exec-f", Workflow: "tool_call"}
	must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), "d", store.PendingCall{CallID: "call_1", ExecutionID: "exec-f", Tool: "ask",
		TaskToken: "tok", ExpiresAt: e.clock.t.Add(time.Hour)}, x))
	e.n.Reset()
	if changed, err := e.s.SucceedWithCall(ctx(), "d", "exec-f", "call_1", map[string]any{"output": 1}); err != nil || !changed {
		t.Fatalf("SucceedWithCall = %v, %v", changed, err)
	}
	if ops := e.n.Ops(); e.n.Total() != 2 || ops["UpdateItem"] != 2 {
		t.Errorf("requests %v, want two updates", ops)
	}
	if c := must[*store.PendingCall](t)(e.s.GetCall(ctx(), "d", "exec-f", "call_1")); c.Status != store.CallAnswered {
		t.Errorf("call = %s, want answered", c.Status)
	}
	if changed, err := e.s.SucceedWithCall(ctx(), "d", "exec-f", "call_1", map[string]any{"output": 2}); err != nil || changed {
		t.Errorf("again = %v, %v; want no change", changed, err)
	}
	if rec := must[*store.Execution](t)(e.s.GetExecution(ctx(), "d", "exec-f")); rec.Status != store.ExecSucceeded {
		t.Errorf("record = %+v", rec)
	}

	// A crash after the call's update: the call is answered, the execution still open. The
	// retry records the execution.
	must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), "d", store.PendingCall{CallID: "call_2", ExecutionID: "exec-g", Tool: "ask",
		TaskToken: "tok", ExpiresAt: e.clock.t.Add(time.Hour)}, store.Execution{ExecutionID: "exec-g", Workflow: "tool_call"}))
	must[*store.PendingCall](t)(e.s.SettleCall(ctx(), "d", "exec-g", "call_2", store.CallAnswered))
	if changed, err := e.s.SucceedWithCall(ctx(), "d", "exec-g", "call_2", map[string]any{"output": 3}); err != nil || !changed {
		t.Fatalf("retry = %v, %v; want the execution recorded", changed, err)
	}
	if rec := must[*store.Execution](t)(e.s.GetExecution(ctx(), "d", "exec-g")); rec.Status != store.ExecSucceeded || len(rec.PendingCalls) != 0 {
		t.Errorf("record after the retry = %+v", rec)
	}
}

// TestLeanClaimBesideOutput: an outcome's claim is kept lean beside the output it would repeat,
// and whole where the output is not written (the execution had ended already).
func TestLeanClaimBesideOutput(t *testing.T) {
	x := store.Execution{ExecutionID: "exec-1", Workflow: "tool_call"}
	done := map[string]any{"state": "done", "call": "integration/echo", "output": "hi"}
	lean := map[string]any{"state": "done", "call": "integration/echo"}
	for _, tc := range []struct {
		name  string
		ended bool
		want  map[string]any
	}{{"running", false, lean}, {"ended already", true, done}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			must[*store.Execution](t)(e.s.RecordExecution(ctx(), "d", x, nil))
			if tc.ended {
				if _, _, err := e.s.SetExecutionStatus(ctx(), "d", x.ExecutionID, store.ExecCancelled, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.s.SetExecutionClaim(ctx(), "d", x, done, lean, map[string]any{"output": "hi"}); err != nil {
				t.Fatal(err)
			}
			held, _, created, err := e.s.ClaimExecution(ctx(), "d", x, map[string]any{"state": "running"})
			if err != nil || created {
				t.Fatalf("claim = %v, %v", created, err)
			}
			if fmt.Sprint(held) != fmt.Sprint(tc.want) {
				t.Errorf("stored claim %v, want %v", held, tc.want)
			}
		})
	}
}
