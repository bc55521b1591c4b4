package workflow_test

import (
	"testing"

	"sinew/internal/executor"
	"sinew/internal/lambdaboundary"
	"sinew/internal/resources"
	"sinew/internal/system"
)

// TestSystemEndToEnd runs a system tool through the state machine, with the system function's
// handler (internal/handler) in process.
func TestSystemEndToEnd(t *testing.T) {
	h := newHarness(t)
	h.withSystem()
	dev := "dev-a"
	agent := h.agent(dev, nil, `{"name":"get_agent","type":"system","system":{"resource":"agent","operation":"get"}}`)
	ex := h.start("exec-system", map[string]any{"developer_id": dev, "agent_id": agent, "tool": "get_agent", "arguments": map[string]any{"agent_id": agent}})
	out := output(t, h.wait(ex))
	if out["name"] != "get_agent" || out["output"].(map[string]any)["id"] != agent {
		t.Errorf("output = %v", out)
	}
	if rec := h.record(dev, "exec-system"); rec.Status != "succeeded" {
		t.Errorf("record status = %s", rec.Status)
	}
}

// withSystem registers the system function's handler over the harness's store.
func (h *harness) withSystem() {
	x := &system.Executor{Resources: &resources.Service{Store: h.store}}
	h.iv.handlers["system"] = lambdaboundary.Handler(executor.Handler(&executor.System{System: x}, h.tokens))
}
