package peerbench_test

import (
	"context"
	"testing"

	"sinew/infra/bench/peerbench"
)

// The definitions live in ../peer/defs, beside the peer engine's runner.
const defsDir, inputs = "../peer/defs", "../peer/inputs.json"

func load(tb testing.TB) []peerbench.Case {
	tb.Helper()
	cases, err := peerbench.Load(defsDir, inputs)
	if err != nil {
		tb.Fatal(err)
	}
	return cases
}

// TestDefinitions runs each definition once on sinew's engine and checks its output, so the
// benchmark measures executions that do what the peer's do.
func TestDefinitions(t *testing.T) {
	eng := peerbench.NewEngine()
	for _, c := range load(t) {
		t.Run(c.Name, func(t *testing.T) {
			if err := peerbench.Check(context.Background(), eng, c); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct{ name, dir, inputs string }{
		{"no definitions", t.TempDir(), inputs},
		{"no inputs", defsDir, "missing.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := peerbench.Load(tt.dir, tt.inputs); err == nil {
				t.Fatal("Load succeeded")
			}
		})
	}
}

// BenchmarkPeerDefinitions: one execution at a time, as bench/peer/run.cjs runs the peer.
//
//	go test -run '^$' -bench PeerDefinitions ./bench/peerbench/
func BenchmarkPeerDefinitions(b *testing.B) {
	eng := peerbench.NewEngine()
	ctx := context.Background()
	for _, c := range load(b) {
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := peerbench.Once(ctx, eng, c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "executions/s")
		})
	}
}
