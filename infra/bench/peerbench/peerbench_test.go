package peerbench_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"sinew/infra/bench/peerbench"
	"sinew/internal/asl"
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

// bytesOnly hides InvokeValue, so the engine calls the stand-ins over JSON bytes.
type bytesOnly struct{ f *peerbench.Functions }

func (b bytesOnly) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	return b.f.Invoke(ctx, req)
}

// TestValueInvokerHistory: the stand-ins called with values give the history they give called
// with bytes, event for event (the random request ids aside).
func TestValueInvokerHistory(t *testing.T) {
	c := load(t)[0]
	reqID := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	var got [2]string
	for i, eng := range []*asl.Engine{peerbench.NewEngine(), asl.New(asl.Config{Lambda: bytesOnly{&peerbench.Functions{}}})} {
		x, err := eng.Start(context.Background(), asl.StartInput{Machine: c.Machine, Input: c.Input, Name: "same"})
		if err != nil {
			t.Fatal(err)
		}
		if d, err := x.Wait(context.Background()); err != nil || d.Status != asl.StatusSucceeded {
			t.Fatalf("%+v %v", d, err)
		}
		h := x.History()
		for j := range h {
			h[j].Timestamp = time.Time{}
		}
		raw, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = reqID.ReplaceAllString(string(raw), "<request id>")
	}
	if got[0] != got[1] {
		t.Errorf("histories differ:\nvalues: %s\nbytes:  %s", got[0], got[1])
	}
	if !strings.Contains(got[0], `Content-Length`) || !strings.Contains(got[0], "call_1") {
		t.Errorf("history lacks the invoke metadata or the call id: %s", got[0])
	}
}

// TestRealDefinition runs statemachines/tool_call.asl.json once on the integration branch.
func TestRealDefinition(t *testing.T) {
	c, err := peerbench.LoadReal("../../../statemachines/tool_call.asl.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := peerbench.Check(context.Background(), peerbench.NewRealEngine(), c); err != nil {
		t.Fatal(err)
	}
}
