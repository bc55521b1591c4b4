package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"sinew/internal/merge"
	"sinew/internal/secrets/secretstest"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/tool"
)

// BenchmarkMergeSources is the executors' read of setup with the KMS envelope against local mode's
// KMS over loopback: one BatchGetItem, then one Decrypt per setting value (opened in parallel),
// for agent and task metadata setup and a stored tool's setup of n settings each.
//
//	go test -run '^$' -bench BenchmarkMergeSources -benchtime 200x ./internal/store
func BenchmarkMergeSources(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("settings=%d", n), func(b *testing.B) {
			k := secretstest.StartKMS(b)
			db := ddblocal.Client(b)
			cs := &countingSealer{Sealer: k.Envelope(b)}
			s := store.New(db, ddblocal.NewTable(b, db), cs)
			setup := map[string]any{}
			for i := range n {
				setup[fmt.Sprintf("k%d", i)] = fmt.Sprintf("value-%d", i)
			}
			meta := map[string]any{merge.KeyIntegrationSetup: map[string]any{"send": setup}}
			a := must[*store.Agent](b)(s.CreateAgent(ctx(), "d", store.Agent{Name: "a", Metadata: meta}))
			task, tools, err := s.CreateTask(ctx(), "d", a.ID, store.Task{Name: "t", Metadata: meta}, []tool.Tool{intTool("send", setup)})
			if err != nil {
				b.Fatal(err)
			}
			ref := store.MergeRef{AgentID: a.ID, TaskID: task.ID, Tool: "send", ToolID: tools[0].ID}
			cs.opens.Store(0)
			for b.Loop() {
				src, err := s.MergeSources(ctx(), "d", ref)
				if err != nil || len(src.ToolSetup) != n {
					b.Fatalf("%v, %v", src, err)
				}
			}
			b.ReportMetric(float64(cs.opens.Load())/float64(b.N), "opens/op")
		})
	}
}

// countingSealer counts the values opened.
type countingSealer struct {
	store.Sealer
	opens atomic.Int64
}

func (c *countingSealer) Open(ctx context.Context, encCtx map[string]string, sealed []byte) ([]byte, error) {
	c.opens.Add(1)
	return c.Sealer.Open(ctx, encCtx, sealed)
}
