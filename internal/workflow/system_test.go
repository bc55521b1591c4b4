package workflow_test

import (
	"context"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/lambdaboundary"
	"sinew/internal/resources"
	"sinew/internal/system"
	"sinew/internal/tool"
)

// systemEvent is the system function's event, as functions/system declares it.
type systemEvent struct {
	Call    tool.Call      `json:"call"`
	Tool    *tool.Tool     `json:"tool"`
	Context system.Context `json:"context"`
}

// TestSystemEndToEnd runs a system tool through the state machine. The system function's handler
// lives in functions/system (another item's); this is the same few lines over the same executor.
func TestSystemEndToEnd(t *testing.T) {
	h := newHarness(t)
	x := &system.Executor{Resources: &resources.Service{Store: h.store}}
	h.iv.handlers["system"] = lambdaboundary.Handler(func(ctx context.Context, ev systemEvent) (tool.Result, error) {
		if err := ev.Call.Validate(); err != nil {
			return tool.Result{}, err
		}
		if ev.Call.Type != tool.TypeSystem {
			return tool.Result{}, fault.Invalid("call.type", "not a system call")
		}
		out, err := x.Run(ctx, ev.Context, ev.Call.System)
		if err != nil {
			return tool.Result{}, err
		}
		return tool.ResultOf(&ev.Call, out), nil
	})
	dev := "dev-a"
	agent := h.agent(dev, nil, `{"name":"get_agent","type":"system","system":{"resource":"agent","operation":"get"}}`)
	ex := h.start("exec-system", map[string]any{"developer_id": dev, "agent_id": agent, "tool": "get_agent", "arguments": map[string]any{"agent_id": agent}})
	out := output(t, h.wait(ex))
	if out["name"] != "agent.get" || out["output"].(map[string]any)["id"] != agent {
		t.Errorf("output = %v", out)
	}
	if rec := h.record(dev, "exec-system"); rec.Status != "succeeded" {
		t.Errorf("record status = %s", rec.Status)
	}
}
