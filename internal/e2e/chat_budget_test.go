package e2e_test

import (
	"context"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"sinew/internal/chat"
	"sinew/internal/dispatch"
	"sinew/internal/llm"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

// chatBudget are the DynamoDB requests a chat turn may make, end to end (the integration
// executor's own included). A turn claims the session with one UpdateItem that reads it, reads the
// rest in one BatchGetItem and two Queries (the agent's tools, the history), and writes once at its
// end: 5. A step that runs a call adds its model reply saved before the call runs (so a crash never
// runs it again under a new id, the turn's count of calls with it), the result saved as it comes,
// and the executor's own three (the merge's read, its claim, its outcome): 10.
const (
	chatBudgetNoTool  = 8  // A
	chatBudgetOneCall = 10 // B
)

// TestChatRequestBudget counts the DynamoDB requests of one chat turn (internal/awscount on the
// harness's client, so the integration executor's requests count too) and holds them to the
// budget. sinewbench reads its lines.
func TestChatRequestBudget(t *testing.T) {
	weather := turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}}}
	tests := []struct {
		name  string
		turns []turn
		body  map[string]any
		hdr   []string
		max   int64
	}{
		{"no tool call", []turn{{Text: "hi"}}, map[string]any{"messages": []any{user("hi")}, "auto_run_tools": true}, nil, chatBudgetNoTool},
		{"no tool call, auto_run_tools from the flag", []turn{{Text: "hi"}}, map[string]any{"messages": []any{user("hi")}}, nil, chatBudgetNoTool},
		{"one integration call", []turn{weather, {Text: "21"}}, map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true}, nil, chatBudgetOneCall},
		{"one integration call, Idempotency-Key", []turn{weather, {Text: "21"}},
			map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true}, []string{"Idempotency-Key", "budget-1"}, chatBudgetOneCall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.turns...)
			// A session with a turn in its history already: the history's read is a real one.
			h.model.Script(append([]turn{{Text: "hello"}}, tt.turns...)...)
			if code, body := h.chat(map[string]any{"messages": []any{user("hello")}}); code != http.StatusOK {
				t.Fatalf("first turn: %d %v", code, body)
			}
			h.ddb.Reset()
			code, body := h.chat(tt.body, tt.hdr...)
			if code != http.StatusOK {
				t.Fatalf("status %d: %v", code, body)
			}
			ops := h.ddb.Ops()
			maps.DeleteFunc(ops, func(_ string, v int64) bool { return v == 0 })
			total := h.ddb.Total()
			t.Logf("chat turn, %s: DynamoDB %v (%d requests)", tt.name, ops, total)
			if total > tt.max {
				t.Errorf("%s: %d DynamoDB requests (%v), want at most %d", tt.name, total, ops, tt.max)
			}
			if n := len(h.history()); n < 3 {
				t.Errorf("history holds %d messages after two turns", n)
			}
		})
	}
}

// BenchmarkChatTurn is one chat turn (chat.Service.Chat in process, a fresh session each time)
// without a tool call and with one integration call. Besides the DynamoDB requests per turn it
// reports the turn's own time over the model's and the tools' (overhead-ns/turn: the turn's wall
// time less the time inside the model's Converse and the executor Lambdas' invocations), and how
// much of it a DynamoDB request of the chat's own was under way (ddb-ns/turn; DynamoDB Local on
// loopback). sinewbench reads them.
func BenchmarkChatTurn(b *testing.B) {
	weather := turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}}}
	cases := []struct {
		name  string
		turns []turn
	}{
		{"no_tool_call", []turn{{Text: "hi"}}},
		{"one_integration_call", []turn{weather, {Text: "21"}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { benchTurn(b, c.turns) })
	}
}

func benchTurn(b *testing.B, turns []turn) {
	h := newHarness(b)
	h.model.Loop(turns...)
	var model, tools atomic.Int64
	ddb := &inFlight{}
	d := h.deps
	d.Model = timedModel{d.Model, &model}
	d.Dispatcher = &dispatch.Dispatcher{Invoker: timedInvoker{h.iv, &tools}, Functions: d.Dispatcher.Functions, Backoff: d.Dispatcher.Backoff}
	// The chat's own store, over a client that times its requests (the executor keeps h.store).
	db := ddblocal.Client(b, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, h.ddb.Register, ddb.register) })
	d.Store = store.New(db, h.table, h.sealer)
	svc := chat.New(d)
	sessions := make([]string, b.N)
	for i := range sessions {
		s, err := h.store.CreateSession(h.ctx, h.dev, store.Session{AgentID: h.agentID})
		if err != nil {
			b.Fatal(err)
		}
		sessions[i] = s.ID
	}
	auto := true
	h.ddb.Reset()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		req := &chat.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "weather?"}}, AutoRunTools: &auto}
		if out, err := svc.Chat(h.ctx, chat.Caller{DeveloperID: h.dev}, sessions[i], req, ""); err != nil || out.Status != http.StatusOK {
			b.Fatalf("chat: %+v %v", out, err)
		}
	}
	wall := time.Since(start)
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(h.ddb.Total())/n, "ddb-requests/turn")
	b.ReportMetric(float64(wall.Nanoseconds()-model.Load()-tools.Load())/n, "overhead-ns/turn")
	b.ReportMetric(float64(model.Load())/n, "model-ns/turn")
	b.ReportMetric(float64(tools.Load())/n, "tools-ns/turn")
	b.ReportMetric(float64(ddb.ns())/n, "ddb-ns/turn")
}

// timedModel adds the time inside Converse to ns.
type timedModel struct {
	llm.Model
	ns *atomic.Int64
}

func (m timedModel) Converse(ctx context.Context, req llm.Request) (llm.Response, error) {
	t0 := time.Now()
	defer func() { m.ns.Add(int64(time.Since(t0))) }()
	return m.Model.Converse(ctx, req)
}

// timedInvoker adds the time inside each executor Lambda's invocation to ns.
type timedInvoker struct {
	dispatch.Invoker
	ns *atomic.Int64
}

func (iv timedInvoker) Invoke(ctx context.Context, fn string, payload []byte) ([]byte, *messages.InvokeResponse_Error, error) {
	t0 := time.Now()
	defer func() { iv.ns.Add(int64(time.Since(t0))) }()
	return iv.Invoker.Invoke(ctx, fn, payload)
}

// inFlight adds up the time during which at least one DynamoDB request is under way: requests
// that overlap (a turn's reads go out at once) count once, as they do in the turn's wall time.
type inFlight struct {
	mu    sync.Mutex
	n     int
	since time.Time
	total time.Duration
}

func (f *inFlight) begin() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.since = time.Now()
	}
	f.n++
}

func (f *inFlight) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 {
		f.total += time.Since(f.since)
	}
}

func (f *inFlight) ns() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total.Nanoseconds()
}

// register is a DynamoDB client option that times each request (its retries included).
func (f *inFlight) register(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("sinew.bench.inflight",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			f.begin()
			defer f.end()
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
}
