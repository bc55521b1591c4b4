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
			run := func(id string, i int) {
				x := h.start(id, map[string]any{"developer_id": dev, "agent_id": agent, "tool": name, "arguments": map[string]any{"i": i}})
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
			// Untimed calls first: DynamoDB Local (a JVM, its code not compiled yet) answers its first
			// requests several times slower, which made the first of -count runs an outlier.
			for i := 0; i < 50; i++ {
				run(fmt.Sprintf("warm-%s-%d", name, i), i)
			}
			h.ddb.Reset()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run(fmt.Sprintf("bench-%s-%d", name, i), i)
			}
			b.StopTimer()
			b.ReportMetric(float64(h.ddb.Total())/float64(b.N), "ddb-requests/call")
		})
	}
}
