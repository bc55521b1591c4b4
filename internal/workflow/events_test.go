package workflow_test

import (
	"strings"
	"testing"
	"time"

	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// sampleContext points an event's context at dev, agent and execution.
func sampleContext(ev map[string]any, dev, agent, execID string) {
	c := ev["context"].(map[string]any)
	c["developer_id"], c["agent_id"], c["execution_id"] = dev, agent, execID
}

// TestSampleEvents runs each function's sample event in events/ through its handler, as Lambda
// would deliver it.
func TestSampleEvents(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, map[string]any{"x-integration-args": map[string]any{"echo": map[string]any{"count": 4}}},
		`{"name":"echo","type":"integration","integration":{"provider":"dummy","arguments":{"source":"definition"}}}`)
	newExec := func(id string) {
		if _, _, err := h.store.CreateExecution(h.ctx, dev, store.Execution{ExecutionID: id, Workflow: "tool_call", AgentID: agent}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("function", func(t *testing.T) {
		ev := loadEvent(t, "events/function/input.json")
		sampleContext(ev, dev, agent, "sample-fn")
		newExec("sample-fn")
		before := time.Now()
		out, typ, msg := invoke(t, h.handler["function"], ev)
		if typ != "" || len(out) != 0 {
			t.Fatalf("function = %v, %s %s; want {}", out, typ, msg)
		}
		c, err := h.store.GetCall(h.ctx, dev, "sample-fn", "call_c2FtcGxlLWNhbGwtaWQtMDAx")
		if err != nil {
			t.Fatal(err)
		}
		if c.Status != store.CallPending || c.TaskToken != "AQsample-task-token" || c.Tool != "ask_user" ||
			c.ExpiresAt.Before(before.Add(3599*time.Second)) || c.ExpiresAt.After(time.Now().Add(3601*time.Second)) {
			t.Errorf("call = %+v, want pending with the token, expiring in an hour", c)
		}
		if rec := h.record(dev, "sample-fn"); rec.Status != store.ExecAwaitingInput {
			t.Errorf("record status = %s", rec.Status)
		}
		feed, _ := h.events.Feed()
		if len(feed) != 1 || !strings.Contains(string(feed[0].Detail), `"call_id":"call_c2FtcGxlLWNhbGwtaWQtMDAx"`) {
			t.Errorf("feed = %+v", feed)
		}
		// The event names the call but never carries its task token: a rule on the bus must not
		// collect tokens; the owner reads it from GET /calls.
		for _, e := range feed {
			if strings.Contains(string(e.Detail), "task_token") || strings.Contains(string(e.Detail), "AQsample-task-token") {
				t.Errorf("ToolCallPending carries the task token: %s", e.Detail)
			}
		}
		// Not a function call: typed refusal.
		ev["call"].(map[string]any)["type"] = "integration"
		if _, typ, _ := invoke(t, h.handler["function"], ev); typ != "Sinew.InvalidInput" {
			t.Errorf("mistyped envelope: %s", typ)
		}
	})

	t.Run("settle outcome", func(t *testing.T) {
		ev := loadEvent(t, "events/settle/outcome.json")
		sampleContext(ev, dev, agent, "sample-fn")
		out, typ, msg := invoke(t, h.handler["settle"], ev)
		if typ != "" {
			t.Fatalf("settle: %s %s", typ, msg)
		}
		jsonEqual(t, "result", out, map[string]any{"id": "call_c2FtcGxlLWNhbGwtaWQtMDAx", "type": "function", "name": "ask_user", "output": map[string]any{"city": "Lisbon"}})
		if st := h.callStatus(dev, "sample-fn", "call_c2FtcGxlLWNhbGwtaWQtMDAx"); st != store.CallAnswered {
			t.Errorf("call status = %s", st)
		}
		if rec := h.record(dev, "sample-fn"); rec.Status != store.ExecSucceeded {
			t.Errorf("record status = %s", rec.Status)
		}
		// Settling again answers the same and changes nothing.
		again, typ, _ := invoke(t, h.handler["settle"], ev)
		jsonEqual(t, "second settle", again, out)
		if typ != "" {
			t.Errorf("second settle: %s", typ)
		}
	})

	t.Run("settle status change", func(t *testing.T) {
		ev := loadEvent(t, "events/settle/execution_status_change.json")
		d := ev["detail"].(map[string]any)
		d["input"] = strings.Replace(d["input"].(string), "dev-sample", dev, 1)
		d["name"] = "sample-stopped"
		newExec("sample-stopped")
		fn := loadEvent(t, "events/function/input.json")
		sampleContext(fn, dev, agent, "sample-stopped")
		if _, typ, msg := invoke(t, h.handler["function"], fn); typ != "" {
			t.Fatalf("function: %s %s", typ, msg)
		}
		out, typ, msg := invoke(t, h.handler["settle"], ev)
		if typ != "" {
			t.Fatalf("settle: %s %s", typ, msg)
		}
		if out["status"] != "cancelled" {
			t.Errorf("answer = %v", out)
		}
		rec := h.record(dev, "sample-stopped")
		jsonEqual(t, "error", rec.Error, map[string]any{"type": "Sinew.Cancelled", "message": "the user closed the form"})
		if st := h.callStatus(dev, "sample-stopped", "call_c2FtcGxlLWNhbGwtaWQtMDAx"); st != store.CallExpired {
			t.Errorf("call status = %s, want expired", st)
		}
		// A RUNNING event, and one about an execution sinew never recorded, change nothing.
		d["status"] = "RUNNING"
		if out, typ, _ := invoke(t, h.handler["settle"], ev); typ != "" || out != nil {
			t.Errorf("RUNNING: %v %s", out, typ)
		}
		// A SUCCEEDED execution whose last state never settled it: its output decides.
		newExec("sample-unsettled")
		d["status"], d["name"] = "SUCCEEDED", "sample-unsettled"
		d["output"] = `{"id":"call_c2FtcGxlLWNhbGwtaWQtMDAx","type":"function","name":"ask_user","error":{"type":"Sinew.Timeout","message":"late"}}`
		if _, typ, msg := invoke(t, h.handler["settle"], ev); typ != "" {
			t.Fatalf("SUCCEEDED: %s %s", typ, msg)
		}
		if rec := h.record(dev, "sample-unsettled"); rec.Status != store.ExecTimedOut {
			t.Errorf("SUCCEEDED with an expired call's result: %s, want timed_out", rec.Status)
		}
		d["status"], d["name"] = "FAILED", "never-recorded"
		if out, typ, _ := invoke(t, h.handler["settle"], ev); typ != "" || out != nil {
			t.Errorf("unknown execution: %v %s", out, typ)
		}
	})

	t.Run("integration", func(t *testing.T) {
		ev := loadEvent(t, "events/integration/dummy.json")
		sampleContext(ev, dev, agent, "sample-int")
		out, typ, msg := invoke(t, h.handler["integration"], ev)
		if typ != "" {
			t.Fatalf("integration: %s %s", typ, msg)
		}
		jsonEqual(t, "result", out, map[string]any{"id": "call_c2FtcGxlLWNhbGwtaWQtMDAx", "type": "integration", "name": "echo",
			"output": map[string]any{"greeting": "hello", "count": 4, "source": "definition"}})
		// An envelope whose tool carries setup is refused: setup never travels in state.
		ev["tool"].(map[string]any)["integration"].(map[string]any)["setup"] = map[string]any{"k": "v"}
		ev["call"].(map[string]any)["id"] = tool.NewCallID()
		if _, typ, _ := invoke(t, h.handler["integration"], ev); typ != "Sinew.InvalidInput" {
			t.Errorf("setup in the envelope: %s, want Sinew.InvalidInput", typ)
		}
	})

	t.Run("apicall", func(t *testing.T) {
		ev := loadEvent(t, "events/apicall/get.json")
		sampleContext(ev, dev, agent, "sample-api")
		// The samples share a call id: a different call under an id already used is refused.
		if _, typ, _ := invoke(t, h.handler["apicall"], ev); typ != "Sinew.Conflict" {
			t.Errorf("a reused call id: %s, want Sinew.Conflict", typ)
		}
		ev["call"].(map[string]any)["id"] = tool.NewCallID()
		ac := ev["tool"].(map[string]any)["api_call"].(map[string]any)
		ac["url"] = strings.Replace(ac["url"].(string), "http://127.0.0.1:8080", h.api.URL, 1)
		out, typ, msg := invoke(t, h.handler["apicall"], ev)
		if typ != "" {
			t.Fatalf("apicall: %s %s", typ, msg)
		}
		res := out["output"].(map[string]any)
		jsonEqual(t, "json", res["json"], map[string]any{"path": "/items/42", "query": "verbose=1", "authorized": false})
		// A refused target is Sinew.Forbidden, before any packet is sent.
		ac["url"] = "http://169.254.169.254/latest/{id}"
		ev["call"].(map[string]any)["id"] = tool.NewCallID()
		if _, typ, _ := invoke(t, h.handler["apicall"], ev); typ != "Sinew.Forbidden" {
			t.Errorf("metadata address: %s, want Sinew.Forbidden", typ)
		}
	})

	t.Run("tool_call input through the state machine", func(t *testing.T) {
		// Also covered by TestIntegrationEndToEnd; here the sample reaches Settle's record.
		x := h.start("sample-tool-call", sampleInput(t, dev, agent))
		out := output(t, h.wait(x))
		if out["id"] != workflow.CallIDFor(dev, "sample-tool-call") {
			t.Errorf("output = %v", out)
		}
	})
}

// TestSettleEventStatuses: whatever way an execution ends mid-wait, its "Execution Status Change"
// event brings the record to the matching final status and expires its pending call.
func TestSettleEventStatuses(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil)
	tests := []struct {
		status     string
		errName    any
		cause      any
		want       store.ExecStatus
		wantErrTyp string
	}{
		{"ABORTED", nil, nil, store.ExecCancelled, "Sinew.Cancelled"},
		{"TIMED_OUT", nil, nil, store.ExecTimedOut, "States.Timeout"},
		{"FAILED", "States.Runtime", "An error occurred while executing the state 'Settle'", store.ExecFailed, "States.Runtime"},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			id := "ended-" + strings.ToLower(tt.status)
			if _, _, err := h.store.CreateExecution(h.ctx, dev, store.Execution{ExecutionID: id, Workflow: "tool_call", AgentID: agent}); err != nil {
				t.Fatal(err)
			}
			fn := loadEvent(t, "events/function/input.json")
			sampleContext(fn, dev, agent, id)
			if _, typ, msg := invoke(t, h.handler["function"], fn); typ != "" {
				t.Fatalf("function: %s %s", typ, msg)
			}
			ev := loadEvent(t, "events/settle/execution_status_change.json")
			d := ev["detail"].(map[string]any)
			d["input"] = strings.Replace(d["input"].(string), "dev-sample", dev, 1)
			d["name"], d["status"], d["error"], d["cause"] = id, tt.status, tt.errName, tt.cause
			if _, typ, msg := invoke(t, h.handler["settle"], ev); typ != "" {
				t.Fatalf("settle: %s %s", typ, msg)
			}
			rec := h.record(dev, id)
			e, _ := rec.Error.(map[string]any)
			if rec.Status != tt.want || e["type"] != tt.wantErrTyp || len(rec.PendingCalls) != 0 {
				t.Errorf("record = %s %v with %d pending, want %s %s with none", rec.Status, rec.Error, len(rec.PendingCalls), tt.want, tt.wantErrTyp)
			}
			if st := h.callStatus(dev, id, "call_c2FtcGxlLWNhbGwtaWQtMDAx"); st != store.CallExpired {
				t.Errorf("call = %s, want expired", st)
			}
		})
	}
}
