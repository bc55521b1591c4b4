package workflow_test

import (
	"testing"

	"sinew/internal/asl"
	"sinew/internal/workflow"
)

// TestBareStartThroughTheMachine: a bare StartExecution (naming only the tool) reaches its
// executor through the state machine, so no function invokes another and waits for it (the harness
// counts invocations by caller); and no invocation fails for a tool's failure or for the caller's
// mistake, so a function's Lambda errors mean faults: a tool's failure ends the execution with the
// error result, an unknown tool fails the execution with Prepare's error.
func TestBareStartThroughTheMachine(t *testing.T) {
	h := newHarness(t)
	h.withSystem()
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool, askUser(3600, 0),
		`{"name":"get_item","type":"api_call","api_call":{"method":"GET","url":"`+h.api.URL+`/items/1"}}`,
		`{"name":"missing","type":"api_call","api_call":{"method":"GET","url":"`+h.api.URL+`/missing"}}`,
		`{"name":"forecast","type":"integration","integration":{"provider":"weather","method":"get"}}`,
		`{"name":"list_agents","type":"system","system":{"resource":"agent","operation":"list"}}`,
		`{"name":"get_agent","type":"system","system":{"resource":"agent","operation":"get"}}`)
	tests := []struct {
		name, tool string
		args       map[string]any
		wantStatus string // the execution's
		wantErr    string // the result's error type, or the execution's error when it failed
	}{
		{"integration", "echo", nil, asl.StatusSucceeded, ""},
		{"api_call", "get_item", nil, asl.StatusSucceeded, ""},
		{"system", "list_agents", nil, asl.StatusSucceeded, ""},
		{"function", "ask_user", nil, asl.StatusSucceeded, ""},
		{"integration refused", "forecast", map[string]any{"location": "oslo", "mode": "broken"}, asl.StatusSucceeded, "Sinew.Provider"},
		{"api_call answered 404", "missing", nil, asl.StatusSucceeded, "Sinew.Provider"},
		{"system, no such agent", "get_agent", map[string]any{"agent_id": "0190d8a0-0000-7000-8000-000000000000"}, asl.StatusSucceeded, "Sinew.NotFound"},
		{"unknown tool", "nope", nil, asl.StatusFailed, "Sinew.NotFound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fromLambda, failed := h.iv.sum(h.iv.fromLambda), h.iv.sum(h.iv.failed)
			x := h.start("bare-"+tt.tool, map[string]any{"developer_id": dev, "agent_id": agent, "tool": tt.tool, "arguments": tt.args})
			if tt.tool == "ask_user" {
				waitParked(t, x)
				c, err := h.store.GetCall(h.ctx, dev, x.Name, workflow.CallIDFor(dev, x.Name))
				if err != nil {
					t.Fatal(err)
				}
				if err := h.eng.SendTaskSuccess(c.TaskToken, `"Lisbon"`); err != nil {
					t.Fatal(err)
				}
			}
			d := h.wait(x)
			if n := h.iv.sum(h.iv.fromLambda) - fromLambda; n != 0 {
				t.Errorf("%d invocations made by a function, want none: the state machine invokes every function", n)
			}
			if n := h.iv.sum(h.iv.failed) - failed; n != 0 {
				t.Errorf("%d invocations failed, want none: history %v", n, history(x))
			}
			if d.Status != tt.wantStatus {
				t.Fatalf("status %s (%s: %s), want %s", d.Status, d.Error, d.Cause, tt.wantStatus)
			}
			if d.Status == asl.StatusFailed {
				if d.Error != tt.wantErr {
					t.Errorf("error %s (%s), want %s", d.Error, d.Cause, tt.wantErr)
				}
				return
			}
			out := output(t, d)
			e, _ := out["error"].(map[string]any)
			switch {
			case tt.wantErr == "" && (e != nil || out["output"] == nil):
				t.Errorf("output %v, want the tool's output", out)
			case tt.wantErr != "" && (e == nil || e["type"] != tt.wantErr):
				t.Errorf("output %v, want the error result %s", out, tt.wantErr)
			}
			if out["id"] != workflow.CallIDFor(dev, x.Name) {
				t.Errorf("output %v, want the result object of call %s", out, workflow.CallIDFor(dev, x.Name))
			}
		})
	}
}
