// Package dispatch holds the dispatch benchmark the executors' own packages lack: a system call
// (agent list) through system.Executor, beside the one DynamoDB Query it makes through the store, so
// the executor's own overhead is the difference. DynamoDB Local answers (no mock); the network
// time is in both sub-benchmarks.
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -run '^$' -bench SystemList ./bench/dispatch/
package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/system"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/tool"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

const dev = "dev-bench"

func newExecutor(tb testing.TB) (*system.Executor, *store.Store) {
	tb.Helper()
	db := ddblocal.Client(tb)
	table := ddblocal.NewTable(tb, db)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		tb.Fatal(err)
	}
	st := store.New(db, table, sl)
	x := &system.Executor{Resources: &resources.Service{Store: st}}
	ctx := context.Background()
	for _, name := range []string{"alpha", "beta"} {
		if _, err := x.Run(ctx, system.Context{DeveloperID: dev}, &tool.SystemCall{Resource: "agent", Operation: "create",
			Arguments: map[string]any{"name": name, "about": "benchmark agent"}}); err != nil {
			tb.Fatal(err)
		}
	}
	return x, st
}

var listCall = &tool.SystemCall{Resource: "agent", Operation: "list", Arguments: map[string]any{"limit": int64(10)}}

// TestSystemList checks the benchmarked call lists the two seeded agents.
func TestSystemList(t *testing.T) {
	x, _ := newExecutor(t)
	out, err := x.Run(context.Background(), system.Context{DeveloperID: dev}, listCall)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(raw, &l); err != nil || len(l.Items) != 2 {
		t.Fatalf("list = %s (%v), want two agents", raw, err)
	}
}

func BenchmarkSystemList(b *testing.B) {
	x, st := newExecutor(b)
	ctx := context.Background()
	// Warm DynamoDB Local's JVM and the connection pool first, or whichever sub-benchmark runs
	// first pays for it.
	for range 200 {
		if _, err := x.Run(ctx, system.Context{DeveloperID: dev}, listCall); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("store_query", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := st.ListAgents(ctx, dev, store.Page{Limit: 10}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("executor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := x.Run(ctx, system.Context{DeveloperID: dev}, listCall)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(out); err != nil { // what the Lambda returns
				b.Fatal(err)
			}
		}
	})
}
