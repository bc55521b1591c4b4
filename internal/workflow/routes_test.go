package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/executor"
	"sinew/internal/merge"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// TestPostToolCalls: POST /tool-calls starts tool_call for the caller (202); with an
// Idempotency-Key, repeats while it runs and after it ended answer the same execution.
func TestPostToolCalls(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool)
	body := map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{"greeting": "hi", "extra": 1}}

	// The record answers: running, or succeeded when the executor recorded its outcome before the
	// route recorded the start (the echo is instant, and the route records after starting).
	code, first := h.do(dev, "POST", "/tool-calls", body, "Idempotency-Key", "order-1")
	if st := first["status"]; code != 202 || st != "running" && st != "succeeded" || !strings.HasPrefix(first["execution_id"].(string), "idem-") {
		t.Fatalf("POST = %d %v", code, first)
	}
	id := first["execution_id"].(string)
	if code, again := h.do(dev, "POST", "/tool-calls", body, "Idempotency-Key", "order-1"); code != 202 || again["execution_id"] != id {
		t.Errorf("repeat = %d %v, want the same execution", code, again)
	}
	x, ok := h.eng.Execution(execARN(id))
	if !ok {
		t.Fatalf("no execution %s in the engine", id)
	}
	out := output(t, h.wait(x))
	// The definition's arguments win over the call's; the rest pass through.
	if o := out["output"].(map[string]any); o["greeting"] != "overridden" || o["extra"] != int64(1) {
		t.Errorf("output = %v", out)
	}
	if code, after := h.do(dev, "POST", "/tool-calls", body, "Idempotency-Key", "order-1"); code != 202 || after["execution_id"] != id || after["status"] != "succeeded" {
		t.Errorf("repeat after the end = %d %v, want the same execution, succeeded", code, after)
	}
	// Another developer naming this agent finds nothing, and starts nothing.
	if code, other := h.do("dev-b", "POST", "/tool-calls", body, "Idempotency-Key", "order-1"); code != 404 {
		t.Errorf("another developer's call of this agent = %d %v, want 404", code, other)
	}
	// Another developer's same key, on its own agent, is another execution.
	bodyB := maps.Clone(body)
	bodyB["agent_id"] = h.agent("dev-b", nil, echoTool)
	if code, other := h.do("dev-b", "POST", "/tool-calls", bodyB, "Idempotency-Key", "order-1"); code != 202 || other["execution_id"] == id {
		t.Errorf("another developer's key = %d %v", code, other)
	}
	// Without a key, each POST is its own execution.
	_, a := h.do(dev, "POST", "/tool-calls", body)
	_, b := h.do(dev, "POST", "/tool-calls", body)
	if a["execution_id"] == b["execution_id"] || a["execution_id"] == nil {
		t.Errorf("two POSTs without a key: %v and %v", a, b)
	}
	// GET /executions lists them, newest first.
	if code, l := h.do(dev, "GET", "/executions?limit=100", nil); code != 200 || len(l["items"].([]any)) < 1 {
		t.Errorf("GET /executions = %d %v", code, l)
	}

	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"agent_id": agent, "task_id": agent, "session_id": agent, "tool": "echo"}, "session_id"},
		{map[string]any{"agent_id": agent, "tool": "bad name"}, "tool"},
		{map[string]any{"tool": "echo"}, "agent_id"},
		{map[string]any{"agent_id": "not-a-uuid", "tool": "echo"}, "agent_id"},
		{map[string]any{"agent_id": agent, "tool": "echo", "arguments": "x"}, "arguments"},
		{map[string]any{"agent_id": agent, "tool": "echo", "developer_id": "dev-b"}, "developer_id"},
	} {
		code, e := h.do(dev, "POST", "/tool-calls", bad.body)
		if code != 400 || e["error"].(map[string]any)["field"] != bad.field {
			t.Errorf("POST %v = %d %v, want 400 naming %s", bad.body, code, e, bad.field)
		}
	}
}

// TestComputeArgsWorkflow runs events/workflows/compute_args.asl.json, a user's workflow that
// computes the arguments with JSONata and JSONPath and calls tool_call with
// states:startExecution.sync:2.
func TestComputeArgsWorkflow(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil, `{"name":"echo","type":"integration","integration":{"provider":"dummy"}}`)
	def := strings.ReplaceAll(string(readFile(t, "events/workflows/compute_args.asl.json")), "${ToolCallStateMachineArn}", toolCallARN)
	m, err := asl.Parse([]byte(def), asl.Options{JSONata: jsonata.New()})
	if err != nil {
		t.Fatal(err)
	}
	x, err := h.eng.Start(h.ctx, asl.StartInput{Machine: m, StateMachineArn: "arn:aws:states:us-east-1:000000000000:stateMachine:user-flow",
		Input: `{"developer_id":"` + dev + `","agent_id":"` + agent + `","city":"lisbon","days":3}`})
	if err != nil {
		t.Fatal(err)
	}
	out := output(t, h.wait(x))
	jsonEqual(t, "tool output", out["output"], map[string]any{"greeting": "Hello, LISBON", "count": 6, "note": "weather for lisbon"})
	// The child execution is recorded like any other.
	l, err := h.store.ListExecutions(h.ctx, dev, store.Page{})
	if err != nil || len(l.Items) != 1 || l.Items[0].Status != store.ExecSucceeded {
		t.Errorf("executions = %+v (%v)", l, err)
	}
}

// TestRequestBudget measures what one call of each type costs end to end, and holds it to a
// budget: the state transitions (Task and Choice states entered, each retry counted), the Lambda
// invocations inside the state machine and outside it (the api function per HTTP request, settle
// per status-change event), the HTTP requests, and the DynamoDB requests from the start to the
// recorded outcome, the status-change event included (a system tool's own operation is not
// counted). Through POST /tool-calls (a function call answered through the HTTP result route) and
// through a bare StartExecution that names only the tool. sinewbench reads its lines, and with
// SINEW_COST_INPUTS set what costRecorder measures of each call.
func TestRequestBudget(t *testing.T) {
	rec := newCostRecorder(t) // before the harness, whose loggers it must hear
	h := newHarness(t)
	h.withSystem()
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool,
		`{"name":"get_item","type":"api_call","api_call":{"method":"GET","url":"`+h.api.URL+`/items/1"}}`, askUser(3600, 0),
		`{"name":"list_agents","type":"system","system":{"resource":"agent","operation":"list"}}`)
	if rec != nil {
		rec.attach(t, h)
		// Unrecorded: a process's first call dials its connections, which a warm Lambda has done.
		h.budgetCall(t, dev, agent, "echo", "post")
	}
	tests := []struct {
		tool, entry string
		transitions int   // at most
		inside      int   // Lambda invocations inside the state machine, exactly
		maxRequests int64 // DynamoDB, at most
		maxWrites   int64 // DynamoDB write request units, at most (0: not held); what on-demand bills
	}{
		// Dispatch alone, invoking the executor, which merges from what the route's find read.
		{"echo", "post", 1, 1, 3, 0},
		{"get_item", "post", 1, 1, 3, 0},
		{"list_agents", "post", 1, 1, 3, 0},
		// Dispatch alone, invoking the function Lambda (the execution's status, then the call: two
		// plain writes, which DynamoDB bills half what one transaction of both costs); the answer's
		// read of the call and the event's record of the outcome (the call's, then the execution's).
		{"ask_user", "post", 1, 1, 7, 13},
		// Dispatch (prepare answers its token with Sinew.Prepare, reading nothing), Prepare (the
		// find and the record), Prepared, Dispatch again, invoking the executor (its claim, the
		// outcome; the merge from what the find read). No function invokes another.
		{"echo", "start", 4, 3, 4, 0},
		{"get_item", "start", 4, 3, 4, 0},
		{"list_agents", "start", 4, 3, 4, 0},
		// Dispatch, Prepare, Prepared, then Function with the tool's timeout.
		{"ask_user", "start", 4, 3, 6, 13},
		// tool_call_express, answered in the request: Prepared, Dispatch invoking the executor
		// (transitions are not billed on Express); the route's find, whose read the executor's
		// merge takes, its outcome, the one write that makes the record, and the route's read of
		// the ended record.
		{"echo", "express", 2, 1, 3, 0},
		{"get_item", "express", 2, 1, 3, 0},
		{"list_agents", "express", 2, 1, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.entry, func(t *testing.T) {
			h.ddb.Reset()
			rec.reset()
			before := h.iv.total()
			x, httpReqs, ownReads := h.budgetCall(t, dev, agent, tt.tool, tt.entry)
			n := countPrefix(history(x), "TaskStateEntered") + countPrefix(history(x), "ChoiceStateEntered")
			ops, units := h.ddb.Ops(), h.ddb.Units()
			ops["GetItem"] -= ownReads
			units["GetItem"] -= ownReads
			if tt.tool == "list_agents" {
				ops["Query"]-- // the system call's own operation
				units["Query"]--
			}
			total := requestsIn(ops, units)
			inside := h.iv.total() - before
			name, settles := tt.tool, 1 // the status change's invocation of settle
			switch tt.entry {
			case "start", "express":
				name += "/" + tt.entry
			}
			if tt.entry == "express" {
				settles = 0 // Express executions send no status change events
			}
			t.Logf("%s: %d state transitions, %d Lambda invocations inside the state machine, %d outside it, %d HTTP requests, DynamoDB %v (%d requests, request units %v)",
				name, n, inside, httpReqs+settles, httpReqs, ops, total, units)
			rec.write(t, name, x)
			var writes int64
			for _, op := range []string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"} {
				writes += units[op]
			}
			if tt.maxWrites > 0 && writes > tt.maxWrites {
				t.Errorf("%s: %d write units (%v), want at most %d", name, writes, units, tt.maxWrites)
			}
			if n > tt.transitions || inside != tt.inside || total > tt.maxRequests {
				t.Errorf("%s: %d transitions, %d Lambda invocations, %d requests (%v); want at most %d, %d, at most %d",
					name, n, inside, total, ops, tt.transitions, tt.inside, tt.maxRequests)
			}
		})
	}
}

// requestsIn drops from DynamoDB's counts by operation, and their units, the operations that made no
// request (a test may have taken its own out), and answers the requests in all.
func requestsIn(ops, units map[string]int64) int64 {
	maps.DeleteFunc(ops, func(_ string, v int64) bool { return v == 0 })
	maps.DeleteFunc(units, func(_ string, v int64) bool { return v == 0 })
	var total int64
	for _, v := range ops {
		total += v
	}
	return total
}

// budgetCall makes one call of tool through entry ("post": POST /tool-calls, a function call
// answered through the HTTP result route; "express": POST /tool-calls on tool_call_express, the
// result in the request; "start": StartExecution naming the tool, a function call answered with
// SendTaskSuccess) and waits for it to end; it answers the execution and the HTTP
// requests made and the test's own reads of the table (the task token of a bare start's call).
func (h *harness) budgetCall(t *testing.T, dev, agent, toolName, entry string) (*asl.Execution, int, int64) {
	t.Helper()
	var x *asl.Execution
	reqs, own := 0, int64(0)
	if entry == "express" {
		h.svc.ToolCallExpressARN = toolCallExpressARN
		defer func() { h.svc.ToolCallExpressARN = "" }()
		code, st := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": toolName, "arguments": map[string]any{}})
		if code != 200 || st["status"] != "succeeded" {
			t.Fatalf("POST = %d %v, want the result in the request", code, st)
		}
		x = h.svc.SFN.(*engineSFN).lastSync.Load()
		h.wait(x)
		return x, 1, 0
	}
	if entry == "post" {
		code, st := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": toolName, "arguments": map[string]any{}})
		if code != 202 {
			t.Fatalf("POST = %d %v", code, st)
		}
		reqs++
		var ok bool
		if x, ok = h.eng.Execution(execARN(st["execution_id"].(string))); !ok {
			t.Fatal("no execution in the engine")
		}
	} else {
		x = h.start("budget-"+toolName, map[string]any{"developer_id": dev, "agent_id": agent, "tool": toolName, "arguments": map[string]any{}})
	}
	if toolName == "ask_user" {
		waitParked(t, x)
		// The client learns the call's id from ToolCallPending (no request of the table).
		callID := workflow.CallIDFor(dev, x.Name)
		if entry == "post" {
			if code, body := h.do(dev, "POST", callPath(x.Name, callID, "result"), map[string]any{"output": "ok"}); code != 200 {
				t.Fatalf("answer = %d %v", code, body)
			}
			reqs++
		} else {
			reads := h.ddb.Ops()["GetItem"]
			c, err := h.store.GetCall(h.ctx, dev, x.Name, callID)
			if err != nil {
				t.Fatal(err)
			}
			own = h.ddb.Ops()["GetItem"] - reads
			if err := h.eng.SendTaskSuccess(c.TaskToken, `"ok"`); err != nil {
				t.Fatal(err)
			}
		}
	}
	if d := h.wait(x); entry == "post" && toolName == "ask_user" {
		// Dispatch ends with the client's answer as it came; the status-change event records the
		// result object (TestToolCallFunctionAnswered).
		if d.Status != asl.StatusSucceeded || d.Output != `"ok"` {
			t.Fatalf("execution %s: %s, output %s", x.Name, d.Status, d.Output)
		}
	} else {
		output(t, d)
	}
	return x, reqs, own
}

func waitParked(t testing.TB, x *asl.Execution) {
	t.Helper()
	for i := 0; i < 4000 && !x.Parked(); i++ {
		sleepMs(5)
	}
	if !x.Parked() {
		t.Fatal("the execution never waited")
	}
}

// BenchmarkBareStart is one tool_call execution started bare (StartExecution naming the tool) and
// waited for, one at a time, through the in-process engine and DynamoDB Local: a call's latency
// end to end, which its DynamoDB round trips in sequence make up most of.
func BenchmarkBareStart(b *testing.B) {
	h := newHarness(b)
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool, `{"name":"get_item","type":"api_call","api_call":{"method":"GET","url":"`+h.api.URL+`/items/1"}}`)
	for _, name := range []string{"echo", "get_item"} {
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				x := h.start("bench-"+name+"-"+strconv.Itoa(i), map[string]any{"developer_id": dev, "agent_id": agent, "tool": name, "arguments": map[string]any{}})
				if d := h.wait(x); d.Status != "SUCCEEDED" {
					b.Fatalf("%s: %s", x.Name, d.Status)
				}
			}
		})
	}
}

// TestMergeReadBesideClaim: an executor started bare whose merge needs a sealed value (the agent's
// setup for the tool: Prepare's find hands on no sources) sends the merge's read while its claim's
// write is still in flight, so the call waits for one DynamoDB round trip before it runs, not two.
// The claim's write (the second UpdateItem: Prepare's record of the execution is the first) is held
// until a second BatchGetItem (Prepare's find being the first) is sent; an executor that read only
// after its claim came back would leave it waiting.
func TestMergeReadBesideClaim(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, map[string]any{merge.KeyIntegrationSetup: map[string]any{"echo": map[string]any{"region": "eu"}}}, echoTool)
	var reads, writes atomic.Int32
	merged := make(chan struct{})
	var claimed atomic.Bool
	var overlapped atomic.Bool
	before := func(op string) {
		switch op {
		case "BatchGetItem":
			if reads.Add(1) == 2 {
				close(merged)
			}
		case "UpdateItem":
			if writes.Add(1) == 2 && claimed.CompareAndSwap(false, true) {
				select {
				case <-merged:
					overlapped.Store(true)
				case <-time.After(5 * time.Second):
				}
			}
		}
	}
	h.beforeDDB.Store(&before)
	x := h.start("beside", map[string]any{"developer_id": dev, "agent_id": agent, "tool": "echo", "arguments": map[string]any{}})
	if d := h.wait(x); d.Status != "SUCCEEDED" {
		t.Fatalf("status %s", d.Status)
	}
	if !claimed.Load() {
		t.Fatal("no UpdateItem: the bare start's executor made no claim")
	}
	if !overlapped.Load() {
		t.Errorf("the claim's write waited 5 s and the merge's read was not sent (BatchGetItems by the end: %d): the executor reads only after its claim", reads.Load())
	}
}

// costRecorder writes, when SINEW_COST_INPUTS names a directory, what sinewbench's cost model needs
// beside TestRequestBudget's counts, one JSON file per call: each function's time per invocation
// (the api function's as its HTTP round trip), the bytes the functions log, the custom events put
// and the execution's history, from which the model renders Step Functions' execution log.
type costRecorder struct {
	dir, api string
	mu       sync.Mutex
	runs     []costRun
	logBytes int
	events   atomic.Int64
}

type costRun struct {
	Function string  `json:"function"`
	Ms       float64 `json:"ms"`
}

func newCostRecorder(t *testing.T) *costRecorder {
	dir := os.Getenv("SINEW_COST_INPUTS")
	if dir == "" {
		return nil
	}
	c := &costRecorder{dir: dir}
	oldLog, oldOut, oldFlags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(slog.New(appLogs{slog.NewJSONHandler(c, nil)})) // the functions' own handler
	t.Cleanup(func() { slog.SetDefault(oldLog); log.SetOutput(oldOut); log.SetFlags(oldFlags) })
	return c
}

// attach times every function the harness invokes and counts the events the function executor puts.
func (c *costRecorder) attach(t *testing.T, h *harness) {
	for name, fn := range h.iv.handlers {
		h.iv.handlers[name] = timedHandler{c, name, fn}
	}
	h.handler["settle"] = timedHandler{c, "settle", h.handler["settle"]}
	h.function.Events = countedEvents{h.function.Events, &c.events}
	c.api = strings.TrimPrefix(h.http.URL, "http://")
	old := http.DefaultClient.Transport
	http.DefaultClient.Transport = timedTransport{c, http.DefaultTransport}
	t.Cleanup(func() { http.DefaultClient.Transport = old })
}

func (c *costRecorder) add(fn string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs = append(c.runs, costRun{fn, float64(d.Microseconds()) / 1000})
}

// Write counts the functions' log lines as their JSON handler renders them.
func (c *costRecorder) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logBytes += len(p)
	return len(p), nil
}

func (c *costRecorder) reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs, c.logBytes = nil, 0
	c.events.Store(0)
}

func (c *costRecorder) write(t *testing.T, name string, x *asl.Execution) {
	c.writeHistory(t, name, x.ARN, x.History())
}

// writeHistory is write with the history given: a task's, with its children's events.
func (c *costRecorder) writeHistory(t *testing.T, name, arn string, history []asl.Event) {
	if c == nil {
		return
	}
	c.mu.Lock()
	b, err := json.Marshal(map[string]any{"call": name, "invocations": c.runs, "app_log_bytes": c.logBytes,
		"custom_events": c.events.Load(), "execution_arn": arn, "history": history})
	c.mu.Unlock()
	if err == nil {
		var f *os.File
		if f, err = os.CreateTemp(c.dir, strings.ReplaceAll(name, "/", "_")+"-*.json"); err == nil {
			_, err = f.Write(b)
			err = errors.Join(err, f.Close())
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

type timedHandler struct {
	c    *costRecorder
	name string
	next lambda.Handler
}

func (h timedHandler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	start := time.Now()
	defer func() { h.c.add(h.name, time.Since(start)) }()
	return h.next.Invoke(ctx, payload)
}

// timedTransport times the requests to the harness's HTTP API: the api function's invocations.
type timedTransport struct {
	c    *costRecorder
	next http.RoundTripper
}

func (tr timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := tr.next.RoundTrip(r)
	if r.URL.Host == tr.c.api {
		tr.c.add("api", time.Since(start))
	}
	return resp, err
}

type countedEvents struct {
	executor.Events
	n *atomic.Int64
}

func (e countedEvents) Publish(ctx context.Context, ev executor.Event) error {
	e.n.Add(1)
	return e.Events.Publish(ctx, ev)
}

// appLogs keeps the functions' log lines and drops the local stand-ins' (the engine, the local
// AWS services, the harness), which AWS does not write into the functions' logs.
type appLogs struct{ next slog.Handler }

var standIns = []string{"sinew/internal/asl.", "sinew/internal/asl/", "sinew/internal/localaws/", "sinew/internal/workflow_test."}

func (a appLogs) Enabled(ctx context.Context, l slog.Level) bool { return a.next.Enabled(ctx, l) }

func (a appLogs) Handle(ctx context.Context, r slog.Record) error {
	f, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
	for _, p := range standIns {
		if strings.HasPrefix(f.Function, p) {
			return nil
		}
	}
	return a.next.Handle(ctx, r)
}

func (a appLogs) WithAttrs(as []slog.Attr) slog.Handler { return appLogs{a.next.WithAttrs(as)} }
func (a appLogs) WithGroup(name string) slog.Handler    { return appLogs{a.next.WithGroup(name)} }
