package workflow_test

import (
	"maps"
	"strings"
	"testing"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
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

	code, first := h.do(dev, "POST", "/tool-calls", body, "Idempotency-Key", "order-1")
	if code != 202 || first["status"] != "running" || !strings.HasPrefix(first["execution_id"].(string), "idem-") {
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

// TestRequestBudget measures, per call of each type, the state transitions and the DynamoDB
// requests (the merge is one BatchGetItem), and holds them to a budget.
func TestRequestBudget(t *testing.T) {
	h := newHarness(t)
	h.withSystem()
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool,
		`{"name":"get_item","type":"api_call","api_call":{"method":"GET","url":"`+h.api.URL+`/items/1"}}`, askUser(3600, 0),
		`{"name":"list_agents","type":"system","system":{"resource":"agent","operation":"list"}}`)
	tests := []struct {
		tool        string
		transitions int
		maxRequests int64
		batchGets   int64
	}{
		// Prepare, RouteByType, the Task, Settle.
		{"echo", 4, 7, 2},
		{"get_item", 4, 7, 2},
		// Prepare, RouteByType, FunctionWaitMode, Function, Settle.
		{"ask_user", 5, 5, 1},
		// Prepare, RouteByType, System, Settle; the call's own Query and its idempotency record.
		{"list_agents", 4, 7, 1},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			h.ddb.Reset()
			x := h.start("budget-"+tt.tool, map[string]any{"developer_id": dev, "agent_id": agent, "tool": tt.tool, "arguments": map[string]any{}})
			if tt.tool == "ask_user" {
				waitParked(t, x)
				ops := h.ddb.Ops()
				if err := h.eng.SendTaskSuccess(waitingToken(t, h, dev, x.Name, ops), `"ok"`); err != nil {
					t.Fatal(err)
				}
			}
			d := h.wait(x)
			output(t, d)
			n := countPrefix(history(x), "TaskStateEntered") + countPrefix(history(x), "ChoiceStateEntered")
			ops := h.ddb.Ops()
			if tt.tool == "ask_user" {
				ops["GetItem"]-- // the test's own read of the token
			}
			var total int64
			for _, v := range ops {
				total += v
			}
			t.Logf("%s: %d state transitions, DynamoDB %v (%d requests)", tt.tool, n, ops, total)
			if n != tt.transitions || total > tt.maxRequests || ops["BatchGetItem"] != tt.batchGets {
				t.Errorf("%s: %d transitions, %d requests (%v); want %d, at most %d, %d BatchGetItem", tt.tool, n, total, ops, tt.transitions, tt.maxRequests, tt.batchGets)
			}
		})
	}
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

func waitingToken(t *testing.T, h *harness, dev, execID string, _ map[string]int64) string {
	t.Helper()
	c, err := h.store.GetCall(h.ctx, dev, execID, workflow.CallIDFor(dev, execID))
	if err != nil {
		t.Fatal(err)
	}
	return c.TaskToken
}
