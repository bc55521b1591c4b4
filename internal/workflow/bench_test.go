package workflow_test

import (
	"fmt"
	"testing"

	"sinew/internal/asl"
	"sinew/internal/workflow"
)

// BenchmarkToolCall runs whole tool_call executions in the embedded engine against DynamoDB Local,
// one type per sub-benchmark (ask_user answered over HTTP), and reports the DynamoDB requests per
// call.
//
//	go test -run '^$' -bench BenchmarkToolCall -benchtime 200x ./internal/workflow
func BenchmarkToolCall(b *testing.B) {
	for _, name := range []string{"echo", "ask_user"} {
		b.Run(name, func(b *testing.B) {
			h := newHarness(b)
			dev := "dev-bench"
			agent := h.agent(dev, nil, echoTool, askUser(3600, 0))
			h.ddb.Reset()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				x := h.start(fmt.Sprintf("bench-%s-%d", name, i), map[string]any{"developer_id": dev, "agent_id": agent, "tool": name, "arguments": map[string]any{"i": i}})
				if name == "ask_user" {
					// Waits on the engine, not the table, so only the call's own requests count.
					waitParked(b, x)
					if code, body := h.do(dev, "POST", callPath(x.Name, workflow.CallIDFor(dev, x.Name), "result"), map[string]any{"output": i}); code != 200 {
						b.Fatalf("answer = %d %v", code, body)
					}
				}
				if d := h.wait(x); d.Status != asl.StatusSucceeded {
					b.Fatalf("status %s", d.Status)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(h.ddb.Total())/float64(b.N), "ddb-requests/call")
		})
	}
}
