package store_test

import (
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/store"
)

// TestEnsureExecution: the first state's write records an execution nobody recorded, leaves a
// route's record as it was (one request either way), and never reopens an ended one.
func TestEnsureExecution(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name       string
		before     func(id string)
		wantStatus store.ExecStatus
		wantAgent  string // the agent of the record that holds
		keepsTime  bool   // created_at is the earlier writer's
	}{
		{"absent: recorded", func(string) {}, store.ExecRunning, "agent-first-state", false},
		{"recorded by the route: kept", func(id string) {
			must[*store.Execution](t)(createExec(e, id, "agent-route"))
		}, store.ExecRunning, "agent-route", true},
		{"ended: not reopened", func(id string) {
			must[*store.Execution](t)(createExec(e, id, "agent-route"))
			if _, ok, err := e.s.SetExecutionStatus(ctx(), "d", id, store.ExecSucceeded, map[string]any{"ok": true}, nil); err != nil || !ok {
				t.Fatal(ok, err)
			}
		}, store.ExecSucceeded, "agent-route", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "exec-ensure-" + string(rune('a'+i))
			tt.before(id)
			before := e.clock.t
			e.clock.advance(time.Second)
			e.n.Reset()
			x, err := e.s.EnsureExecution(ctx(), "d", store.Execution{ExecutionID: id, Workflow: "tool_call", AgentID: "agent-first-state"})
			if err != nil {
				t.Fatal(err)
			}
			if e.n.Total() != 1 {
				t.Errorf("%d requests (%v), want 1", e.n.Total(), e.n.Ops())
			}
			if x.Status != tt.wantStatus || x.AgentID != tt.wantAgent || x.ExecutionID != id || x.Workflow != "tool_call" {
				t.Errorf("record = %+v", x)
			}
			if tt.keepsTime != x.CreatedAt.Equal(before) {
				t.Errorf("created_at = %v (earlier writer's %v), keeps time want %v", x.CreatedAt, before, tt.keepsTime)
			}
			// A second run changes nothing.
			again := must[*store.Execution](t)(e.s.EnsureExecution(ctx(), "d", store.Execution{ExecutionID: id, Workflow: "tool_call", AgentID: "other"}))
			if again.AgentID != x.AgentID || !again.CreatedAt.Equal(x.CreatedAt) || again.Status != x.Status {
				t.Errorf("second run = %+v, want %+v", again, x)
			}
			got := must[*store.Execution](t)(e.s.GetExecution(ctx(), "d", id))
			if got.Status != tt.wantStatus {
				t.Errorf("GetExecution status = %s", got.Status)
			}
		})
	}
	// Every one is listed, as the executions index needs.
	l := must[*store.List[store.Execution]](t)(e.s.ListExecutions(ctx(), "d", store.Page{Limit: 10}))
	if len(l.Items) != len(tests) {
		t.Errorf("listed %d executions, want %d", len(l.Items), len(tests))
	}
	if _, err := e.s.EnsureExecution(ctx(), "d", store.Execution{ExecutionID: "x", Workflow: "other"}); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("bad workflow: %v", err)
	}
}

// TestDiscardUnstarted: a route's record of an execution that never started goes; one whose first
// state ran, or that has moved on, stays.
func TestDiscardUnstarted(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name    string
		setup   func(id string)
		deleted bool
	}{
		{"recorded, never started", func(id string) { must[*store.Execution](t)(createExec(e, id, "a")) }, true},
		{"first state ran", func(id string) {
			must[*store.Execution](t)(createExec(e, id, "a"))
			must[*store.Execution](t)(e.s.EnsureExecution(ctx(), "d", store.Execution{ExecutionID: id, Workflow: "tool_call"}))
		}, false},
		{"ended", func(id string) {
			must[*store.Execution](t)(createExec(e, id, "a"))
			if _, _, err := e.s.SetExecutionStatus(ctx(), "d", id, store.ExecCancelled, nil, nil); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"absent", func(string) {}, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "exec-discard-" + string(rune('a'+i))
			tt.setup(id)
			deleted, err := e.s.DiscardUnstarted(ctx(), "d", id)
			if err != nil || deleted != tt.deleted {
				t.Fatalf("DiscardUnstarted = %v %v, want %v", deleted, err, tt.deleted)
			}
			_, gerr := e.s.GetExecution(ctx(), "d", id)
			if gone := fault.Is(gerr, fault.NotFound); gone != (tt.deleted || tt.name == "absent") {
				t.Errorf("after: GetExecution error %v", gerr)
			}
		})
	}
}

func createExec(e *env, id, agent string) (*store.Execution, error) {
	x, _, err := e.s.CreateExecution(ctx(), "d", store.Execution{ExecutionID: id, Workflow: "tool_call", AgentID: agent})
	return x, err
}
