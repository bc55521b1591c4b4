// Package dispatch holds the dispatch benchmark the executors' own packages lack: a system call
// (agent list) through system.Executor, beside the one DynamoDB Query it makes through the store.
// DynamoDB Local answers (no mock). The executor's own in-process time is its whole time less the
// time inside its DynamoDB request, both measured in the same calls (outside-ddb-ns/op).
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -run '^$' -bench SystemList ./infra/bench/dispatch/
package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/system"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/tool"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

const dev = "dev-bench"

// timedDB adds up the time spent in DynamoDB requests (the SDK's work and the network and
// DynamoDB Local's), so a call's own in-process time is its whole time less that, measured in the
// same call: the network's noise cancels instead of swamping the difference.
type timedDB struct {
	store.API
	in atomic.Int64 // ns
}

func (d *timedDB) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	start := time.Now()
	defer func() { d.in.Add(int64(time.Since(start))) }()
	return d.API.Query(ctx, in, o...)
}

func (d *timedDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	start := time.Now()
	defer func() { d.in.Add(int64(time.Since(start))) }()
	return d.API.GetItem(ctx, in, o...)
}

func newExecutor(tb testing.TB) (*system.Executor, *store.Store, *timedDB) {
	tb.Helper()
	db := &timedDB{API: ddblocal.Client(tb)}
	table := ddblocal.NewTable(tb, ddblocal.Client(tb))
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
	return x, st, db
}

var listCall = &tool.SystemCall{Resource: "agent", Operation: "list", Arguments: map[string]any{"limit": int64(10)}}

// TestSystemList checks the benchmarked call lists the two seeded agents.
func TestSystemList(t *testing.T) {
	x, _, _ := newExecutor(t)
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
	x, st, db := newExecutor(b)
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
		db.in.Store(0)
		start := time.Now()
		for b.Loop() {
			out, err := x.Run(ctx, system.Context{DeveloperID: dev}, listCall)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(out); err != nil { // what the Lambda returns
				b.Fatal(err)
			}
		}
		// Everything of the call but its DynamoDB request: the executor's own in-process time.
		b.ReportMetric(float64(time.Since(start)-time.Duration(db.in.Load()))/float64(b.N), "outside-ddb-ns/op")
	})
}
