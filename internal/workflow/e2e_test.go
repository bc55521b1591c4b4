package workflow_test

import (
	"encoding/json"
	"strings"
	"testing"

	"sinew/internal/asl"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

const echoTool = `{"name":"echo","type":"integration","description":"echo","integration":{"provider":"dummy","arguments":{"source":"definition","greeting":"overridden"}}}`

// sampleInput is events/tool_call/input.json for dev and agent.
func sampleInput(t *testing.T, dev, agent string) map[string]any {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal(readFile(t, "events/tool_call/input.json"), &in); err != nil {
		t.Fatal(err)
	}
	in["developer_id"], in["agent_id"] = dev, agent
	return in
}

// TestIntegrationEndToEnd runs the sample tool_call input through the state machine: Prepare finds
// the agent's dummy tool, the integration Lambda merges call < definition < metadata arguments and
// echoes them, Settle records the result. The metadata holds no sealed value, so the executor
// merges from what Prepare's find read and reads nothing itself.
func TestIntegrationEndToEnd(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, map[string]any{"x-integration-args": map[string]any{"echo": map[string]any{"meta": "agent"}}}, echoTool)
	h.ddb.Reset()
	x := h.start("exec-integration", sampleInput(t, dev, agent))
	out := output(t, h.wait(x))
	jsonEqual(t, "output", out, map[string]any{"id": workflow.CallIDFor(dev, "exec-integration"), "type": "integration", "name": "echo",
		"output": map[string]any{"greeting": "overridden", "count": 3, "source": "definition", "meta": "agent"}})
	t.Logf("integration: DynamoDB requests per call %v; history %d events", h.ddb.Ops(), len(x.History()))
	if n := h.ddb.Ops()["BatchGetItem"]; n != 1 {
		t.Errorf("%d BatchGetItems, want Prepare's find alone", n)
	}

	rec, err := h.store.GetExecution(h.ctx, dev, "exec-integration")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != store.ExecSucceeded || rec.Workflow != "tool_call" {
		t.Errorf("record = %+v, want succeeded tool_call", rec)
	}
	jsonEqual(t, "recorded output", rec.Output, out)
	// Step Functions' SUCCEEDED event comes after: it changes nothing.
	h.statusChange(x)
	if again := h.record(dev, "exec-integration"); again.Status != store.ExecSucceeded || !again.UpdatedAt.Equal(rec.UpdatedAt) {
		t.Errorf("after the SUCCEEDED event: %s at %v, want unchanged", again.Status, again.UpdatedAt)
	}
	// The routes see it.
	code, body := h.do(dev, "GET", "/executions/exec-integration", nil)
	if code != 200 || body["status"] != "succeeded" {
		t.Errorf("GET /executions/exec-integration = %d %v", code, body)
	}
	if code, _ := h.do("dev-other", "GET", "/executions/exec-integration", nil); code != 404 {
		t.Errorf("another developer's GET = %d, want 404", code)
	}
}

// TestAPICallEndToEnd: the api_call Task sends the merged request (metadata setup adds the
// Authorization header, made from a developer secret) to a loopback server through the guarded
// dialer; the secret never reaches the execution's history.
func TestAPICallEndToEnd(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	tl := `{"name":"get_item","type":"api_call","api_call":{"method":"GET","url":"` + h.api.URL + `/items/{id}"}}`
	if _, err := h.store.PutSecret(h.ctx, dev, "ITEMS_TOKEN", []byte("s3cret")); err != nil {
		t.Fatal(err)
	}
	agent := h.agent(dev, map[string]any{"x-api_call-setup": map[string]any{"get_item": map[string]any{"headers": map[string]any{"Authorization": "$ f'Bearer {secrets.ITEMS_TOKEN}'"}}}}, tl)
	h.ddb.Reset()
	x := h.start("exec-apicall", map[string]any{"developer_id": dev, "agent_id": agent, "tool": "get_item",
		"arguments": map[string]any{"path": map[string]any{"id": "42"}, "params": map[string]any{"v": "1"}}})
	out := output(t, h.wait(x))
	t.Logf("api_call: DynamoDB requests per call %v; history %d events", h.ddb.Ops(), len(x.History()))
	res, _ := out["output"].(map[string]any)
	if res["status_code"] != int64(200) {
		t.Fatalf("output = %v", out)
	}
	jsonEqual(t, "response json", res["json"], map[string]any{"path": "/items/42", "query": "v=1", "authorized": true})
	if strings.Contains(jsonString(x.History()), "s3cret") {
		t.Errorf("the setup secret appears in the execution's history")
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTransientRetriedPermanentNot: Sinew.Transient is retried by the Task's Retry (two failed
// attempts in the history, then the result); a provider's permanent refusal is not retried and
// ends the execution SUCCEEDED with the error result, the record failed.
func TestTransientRetriedPermanentNot(t *testing.T) {
	tests := []struct {
		name       string
		tool       func(h *harness) string
		args       map[string]any
		runs       func(h *harness) int
		wantRuns   int
		wantFailed int
		wantErr    string
	}{
		{"transient integration", forecastTool, map[string]any{"location": "lisbon", "mode": "flaky"},
			func(h *harness) int { return h.weather.count("lisbon") }, 3, 2, ""},
		{"permanent integration", forecastTool, map[string]any{"location": "oslo", "mode": "broken"},
			func(h *harness) int { return h.weather.count("oslo") }, 1, 1, "Sinew.Provider"},
		{"transient api_call (503)", apiTool("/flaky"), map[string]any{}, apiHits, 3, 2, ""},
		{"permanent api_call (404)", apiTool("/missing"), map[string]any{}, apiHits, 1, 1, "Sinew.Provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			dev := "dev-a"
			agent := h.agent(dev, nil, tt.tool(h))
			x := h.start("exec-retry", map[string]any{"developer_id": dev, "agent_id": agent, "tool": "target", "arguments": tt.args})
			out := output(t, h.wait(x))
			hist := history(x)
			// Dispatch's routing answer (a bare start goes to Prepare) is no failed attempt.
			if got := countPrefix(hist, "TaskFailed Sinew.") - countPrefix(hist, "TaskFailed "+workflow.ErrPrepare); got != tt.wantFailed {
				t.Errorf("failed attempts in history = %d, want %d: %v", got, tt.wantFailed, hist)
			}
			if got := tt.runs(h); got != tt.wantRuns {
				t.Errorf("runs = %d, want %d", got, tt.wantRuns)
			}
			rec := h.record(dev, x.Name)
			if tt.wantErr == "" {
				if out["error"] != nil || out["output"] == nil || rec.Status != store.ExecSucceeded {
					t.Errorf("output %v, record %s; want the last attempt's result, succeeded", out, rec.Status)
				}
				return
			}
			e, _ := out["error"].(map[string]any)
			if e["type"] != tt.wantErr || rec.Status != store.ExecFailed {
				t.Errorf("output %v, record %s; want error %s, failed", out, rec.Status, tt.wantErr)
			}
		})
	}
}

func forecastTool(*harness) string {
	return `{"name":"target","type":"integration","integration":{"provider":"weather","method":"get"}}`
}

func apiTool(path string) func(h *harness) string {
	return func(h *harness) string {
		return `{"name":"target","type":"api_call","api_call":{"method":"GET","url":"` + h.api.URL + path + `"}}`
	}
}

func apiHits(h *harness) int {
	h.apiMu.Lock()
	defer h.apiMu.Unlock()
	return h.apiHits
}

// TestSideEffectOnce: the same call invoked twice (a retry after a lost reply, a crash) runs the
// provider once; the second invocation answers the recorded result.
func TestSideEffectOnce(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil, `{"name":"forecast","type":"integration","integration":{"provider":"weather"}}`)
	// The Lambda's reply is lost once: Step Functions retries the Task with the same envelope.
	h.iv.lostReply["integration"] = 1
	x := h.start("exec-once", map[string]any{"developer_id": dev, "agent_id": agent, "tool": "forecast", "arguments": map[string]any{"location": "rome"}})
	out := output(t, h.wait(x))
	if got := h.iv.count("integration"); got != 2 {
		t.Errorf("integration invocations = %d, want 2 (one lost reply, one retry)", got)
	}
	if got := h.weather.count("rome"); got != 1 {
		t.Errorf("provider runs = %d, want 1", got)
	}
	if o, _ := out["output"].(map[string]any); o["run"] != int64(1) {
		t.Errorf("output = %v, want the first run's result", out)
	}
	// Dispatch invokes the executor, Lambda's service error names the lost reply, and Dispatch's
	// Retry invokes it again.
	if n := countPrefix(history(x), "TaskFailed Lambda.ServiceException"); n != 1 {
		t.Errorf("history: %d lost replies, want 1: %v", n, history(x))
	}
}

var _ = asl.StatusSucceeded

// TestStartExecutorUnreachable: a bare start whose function is never reached (it is missing, which
// Dispatch does not retry) leaves a record of its execution all the same, failed with the cause:
// Prepare records the execution before Dispatch invokes the executor; when Dispatch cannot reach
// prepare, Settle builds the call again and makes the record.
func TestStartExecutorUnreachable(t *testing.T) {
	for _, missing := range []string{"integration", "prepare"} {
		t.Run(missing, func(t *testing.T) {
			h := newHarness(t)
			dev := "dev-a"
			agent := h.agent(dev, nil, echoTool)
			h.iv.mu.Lock()
			delete(h.iv.handlers, missing)
			h.iv.mu.Unlock()
			x := h.start("exec-unreached", map[string]any{"developer_id": dev, "agent_id": agent, "tool": "echo", "arguments": map[string]any{}})
			if d := h.wait(x); d.Status != asl.StatusSucceeded {
				t.Fatalf("execution %s: %s (Settle answers the error result as the output)", x.Name, d.Status)
			}
			if n := countPrefix(history(x), "TaskFailed Lambda.ResourceNotFoundException"); n != 1 {
				t.Errorf("history: %d failed attempts of Dispatch, want 1: %v", n, history(x))
			}
			rec, err := h.store.GetExecution(h.ctx, dev, x.Name)
			if err != nil {
				t.Fatalf("the execution's record: %v", err)
			}
			e, _ := rec.Error.(map[string]any)
			if rec.Status != store.ExecFailed || e["type"] != "Lambda.ResourceNotFoundException" {
				t.Errorf("record = %s %v, want failed with Lambda.ResourceNotFoundException", rec.Status, rec.Error)
			}
		})
	}
}
