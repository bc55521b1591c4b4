package workflow_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/executor"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

func askUser(timeout, heartbeat int) string {
	hb := ""
	if heartbeat > 0 {
		hb = fmt.Sprintf(`,"heartbeat_seconds":%d`, heartbeat)
	}
	return fmt.Sprintf(`{"name":"ask_user","type":"function","function":{"parameters":{"type":"object"},"timeout_seconds":%d%s}}`, timeout, hb)
}

func execARN(name string) string {
	return strings.Replace(toolCallARN, ":stateMachine:", ":execution:", 1) + ":" + name
}

// startFunction starts a function-tool call and waits until it is pending.
func startFunction(t *testing.T, h *harness, dev, name string, timeout, heartbeat int) (*asl.Execution, store.PendingCall) {
	t.Helper()
	agent := h.agent(dev, nil, askUser(timeout, heartbeat))
	x := h.start(name, map[string]any{"developer_id": dev, "agent_id": agent, "tool": "ask_user", "arguments": map[string]any{"question": "Which city?"}})
	return x, h.pending(dev, name)
}

func callPath(execID, callID, what string) string {
	return "/executions/" + execID + "/calls/" + callID + "/" + what
}

func (h *harness) record(dev, id string) *store.Execution {
	h.t.Helper()
	x, err := h.store.GetExecution(h.ctx, dev, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return x
}

func (h *harness) callStatus(dev, execID, callID string) store.CallStatus {
	h.t.Helper()
	c, err := h.store.GetCall(h.ctx, dev, execID, callID)
	if err != nil {
		h.t.Fatal(err)
	}
	return c.Status
}

// TestFunctionToolResumed: start → awaiting_input → answered, each way a client can (the engine's
// SendTaskSuccess as the SDK or CLI would reach it, the HTTP result route, Julep's PUT) → succeeded
// with the client's output as the result; the call answered.
func TestFunctionToolResumed(t *testing.T) {
	// 2^53+1 checks that numbers stay exact on the way through.
	answer := []any{"Lisbon", int64(9007199254740993), map[string]any{"nested": true}}
	tests := []struct {
		name   string
		resume func(h *harness, dev string, pc store.PendingCall) error
	}{
		{"SendTaskSuccess", func(h *harness, _ string, pc store.PendingCall) error {
			return h.eng.SendTaskSuccess(pc.TaskToken, `["Lisbon",9007199254740993,{"nested":true}]`)
		}},
		{"HTTP result route", func(h *harness, dev string, pc store.PendingCall) error {
			if code, body := h.do(dev, "POST", callPath(pc.ExecutionID, pc.CallID, "result"), map[string]any{"output": answer}); code != 200 || body["status"] != "answered" {
				return fmt.Errorf("POST result = %d %v", code, body)
			}
			return nil
		}},
		{"PUT /executions/{id}", func(h *harness, dev string, pc store.PendingCall) error {
			if code, body := h.do(dev, "PUT", "/executions/"+pc.ExecutionID, map[string]any{"status": "running", "input": answer}); code != 200 {
				return fmt.Errorf("PUT = %d %v", code, body)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			dev := "dev-a"
			h.ddb.Reset()
			x, pc := startFunction(t, h, dev, "exec-fn", 3600, 0)
			if rec := h.record(dev, "exec-fn"); rec.Status != store.ExecAwaitingInput {
				t.Fatalf("status while waiting = %s", rec.Status)
			}
			if code, body := h.do(dev, "GET", "/calls?status=pending", nil); code != 200 || len(body["items"].([]any)) != 1 {
				t.Errorf("GET /calls = %d %v", code, body)
			}
			if err := tt.resume(h, dev, pc); err != nil {
				t.Fatal(err)
			}
			d := h.wait(x)
			out := output(t, d)
			jsonEqual(t, "output", out, map[string]any{"id": pc.CallID, "type": "function", "name": "ask_user", "output": answer})
			if !strings.Contains(d.Output, "9007199254740993") {
				t.Errorf("output %s lost the exact integer", d.Output)
			}
			if rec := h.record(dev, "exec-fn"); !strings.Contains(jsonString(rec.Output), "9007199254740993") {
				t.Errorf("recorded output %s lost the exact integer", jsonString(rec.Output))
			}
			if rec := h.record(dev, "exec-fn"); rec.Status != store.ExecSucceeded {
				t.Errorf("record status = %s", rec.Status)
			}
			if st := h.callStatus(dev, "exec-fn", pc.CallID); st != store.CallAnswered {
				t.Errorf("call status = %s", st)
			}
			t.Logf("function (%s): DynamoDB requests per call %v; history %d events", tt.name, h.ddb.Ops(), len(x.History()))
		})
	}
}

// TestFunctionToolAnswerRules: another developer's answer is 404, a second answer 409, an answer
// after the wait ended 410 — and ToolCallPending was published with the pending call.
func TestFunctionToolAnswerRules(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	x, pc := startFunction(t, h, dev, "exec-rules", 3600, 0)
	path := callPath(pc.ExecutionID, pc.CallID, "result")
	if code, body := h.do("dev-b", "POST", path, map[string]any{"output": 1}); code != 404 {
		t.Errorf("another developer's answer = %d %v, want 404", code, body)
	}
	if code, body := h.do("dev-b", "POST", callPath(pc.ExecutionID, pc.CallID, "heartbeat"), nil); code != 404 {
		t.Errorf("another developer's heartbeat = %d %v, want 404", code, body)
	}
	if code, body := h.do(dev, "POST", path, map[string]any{"output": 1, "error": map[string]any{"type": "x"}}); code != 400 {
		t.Errorf("both output and error = %d %v, want 400", code, body)
	}
	if code, _ := h.do(dev, "POST", callPath(pc.ExecutionID, pc.CallID, "heartbeat"), nil); code != 204 {
		t.Errorf("heartbeat = %d, want 204", code)
	}
	if code, body := h.do(dev, "POST", path, map[string]any{"output": "first"}); code != 200 {
		t.Fatalf("first answer = %d %v", code, body)
	}
	if code, body := h.do(dev, "POST", path, map[string]any{"output": "second"}); code != 409 {
		t.Errorf("second answer = %d %v, want 409", code, body)
	}
	out := output(t, h.wait(x))
	if out["output"] != "first" {
		t.Errorf("output = %v, want the first answer", out)
	}
	if code, _ := h.do(dev, "POST", path, map[string]any{"output": "late"}); code != 409 {
		t.Errorf("answer after the end = %d, want 409 (answered)", code)
	}

	// ToolCallPending went to the feed, with the pending call as its detail, but not its task
	// token: whoever may add a rule to the bus must not collect tokens.
	feed, err := h.events.Feed()
	if err != nil {
		t.Fatal(err)
	}
	if len(feed) != 1 || feed[0].Source != executor.EventSource || feed[0].DetailType != executor.DetailTypePending {
		t.Fatalf("feed = %+v", feed)
	}
	var detail store.PendingCall
	if err := json.Unmarshal(feed[0].Detail, &detail); err != nil || detail.CallID != pc.CallID || detail.TaskToken != "" || detail.Tool != "ask_user" {
		t.Errorf("detail = %+v (%v)", detail, err)
	}
}

// TestFunctionToolFailed: SendTaskFailure, from the engine or the HTTP route, is a failed call
// with the error result Client.<type>.
func TestFunctionToolFailed(t *testing.T) {
	tests := []struct {
		name    string
		fail    func(h *harness, dev string, pc store.PendingCall) error
		wantTyp string
		wantMsg string
	}{
		{"SendTaskFailure", func(h *harness, _ string, pc store.PendingCall) error {
			return h.eng.SendTaskFailure(pc.TaskToken, "UserDeclined", "no thanks")
		}, "Client.UserDeclined", "no thanks"},
		{"SendTaskFailure without a name", func(h *harness, _ string, pc store.PendingCall) error {
			return h.eng.SendTaskFailure(pc.TaskToken, "", "")
		}, workflow.ClientFailure, ""},
		{"HTTP error answer", func(h *harness, dev string, pc store.PendingCall) error {
			code, body := h.do(dev, "POST", callPath(pc.ExecutionID, pc.CallID, "result"), map[string]any{"error": map[string]any{"type": "Declined", "message": "not today"}})
			if code != 200 || body["status"] != "failed" {
				return fmt.Errorf("POST error = %d %v", code, body)
			}
			return nil
		}, "Client.Declined", "not today"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			dev := "dev-a"
			x, pc := startFunction(t, h, dev, "exec-fail", 3600, 0)
			if err := tt.fail(h, dev, pc); err != nil {
				t.Fatal(err)
			}
			out := output(t, h.wait(x))
			jsonEqual(t, "error result", out, map[string]any{"id": pc.CallID, "type": "function", "name": "ask_user",
				"error": map[string]any{"type": tt.wantTyp, "message": tt.wantMsg}})
			if rec := h.record(dev, x.Name); rec.Status != store.ExecFailed {
				t.Errorf("record status = %s, want failed", rec.Status)
			}
			if st := h.callStatus(dev, x.Name, pc.CallID); st != store.CallFailed {
				t.Errorf("call status = %s, want failed", st)
			}
		})
	}
}

// TestFunctionToolTimeout: a short timeout_seconds passes on the engine's virtual clock: the
// execution ends SUCCEEDED with the Sinew.Timeout error result, the record is timed_out, the call
// expired, and answering it is 410. A missed heartbeat does the same.
func TestFunctionToolTimeout(t *testing.T) {
	tests := []struct {
		name               string
		timeout, heartbeat int
		advance            time.Duration
		msg                string
	}{
		{"timeout_seconds", 60, 0, 61 * time.Second, "the client did not answer in time: the call expired"},
		{"heartbeat_seconds", 600, 30, 31 * time.Second, "the client did not answer in time: the call expired"},
	}
	// Step Functions reports a heartbeat's end as States.Timeout too.
	for _, tt := range tests {
		for _, entry := range []string{"start", "post"} {
			t.Run(tt.name+"/"+entry, func(t *testing.T) {
				h := newHarness(t)
				dev := "dev-a"
				var x *asl.Execution
				var pc store.PendingCall
				if entry == "start" {
					x, pc = startFunction(t, h, dev, "exec-timeout", tt.timeout, tt.heartbeat)
				} else {
					// Dispatch's own wait, from the call POST /tool-calls prepared.
					agent := h.agent(dev, nil, askUser(tt.timeout, tt.heartbeat))
					code, st := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "ask_user", "arguments": map[string]any{}})
					if code != 202 {
						t.Fatalf("POST = %d %v", code, st)
					}
					var ok bool
					if x, ok = h.eng.Execution(execARN(st["execution_id"].(string))); !ok {
						t.Fatal("no execution in the engine")
					}
					pc = h.pending(dev, x.Name)
				}
				// Still waiting two seconds before the end.
				h.clock.Advance(tt.advance - 2*time.Second)
				sleepMs(20)
				if !x.Parked() {
					t.Fatalf("the wait ended before %v: %v", tt.advance-time.Second, history(x))
				}
				h.clock.Advance(2 * time.Second)
				out := output(t, h.wait(x))
				e, _ := out["error"].(map[string]any)
				if e["type"] != "Sinew.Timeout" || e["message"] != tt.msg {
					t.Errorf("output = %v, want the Sinew.Timeout error result: %s", out, tt.msg)
				}
				if rec := h.record(dev, x.Name); rec.Status != store.ExecTimedOut {
					t.Errorf("record status = %s, want timed_out", rec.Status)
				}
				if st := h.callStatus(dev, x.Name, pc.CallID); st != store.CallExpired {
					t.Errorf("call status = %s, want expired", st)
				}
				if code, body := h.do(dev, "POST", callPath(x.Name, pc.CallID, "result"), map[string]any{"output": 1}); code != 410 {
					t.Errorf("answer after expiry = %d %v, want 410", code, body)
				}
				if code, _ := h.do(dev, "POST", callPath(x.Name, pc.CallID, "heartbeat"), nil); code != 410 {
					t.Errorf("heartbeat after expiry = %d, want 410", code)
				}
				if err := h.eng.SendTaskSuccess(pc.TaskToken, `1`); err == nil {
					t.Errorf("SendTaskSuccess after expiry succeeded")
				}
			})
		}
	}
}

// TestFunctionToolHeartbeatKeepsItAlive: heartbeats over HTTP reset the heartbeat clock.
func TestFunctionToolHeartbeatKeepsItAlive(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	x, pc := startFunction(t, h, dev, "exec-hb", 600, 30)
	for i := 0; i < 3; i++ {
		h.clock.Advance(20 * time.Second)
		if code, body := h.do(dev, "POST", callPath(x.Name, pc.CallID, "heartbeat"), nil); code != 204 {
			t.Fatalf("heartbeat %d = %d %v", i, code, body)
		}
	}
	if code, _ := h.do(dev, "POST", callPath(x.Name, pc.CallID, "result"), map[string]any{"output": "alive"}); code != 200 {
		t.Fatalf("answer = %d", code)
	}
	if out := output(t, h.wait(x)); out["output"] != "alive" {
		t.Errorf("output = %v", out)
	}
}

// TestFunctionToolStopped: an execution cancelled with PUT, or stopped by anyone mid-wait and
// settled by its "Execution Status Change" event, leaves no call shown as pending.
func TestFunctionToolStopped(t *testing.T) {
	tests := []struct {
		name string
		stop func(h *harness, dev string, x *asl.Execution) error
	}{
		{"PUT cancelled", func(h *harness, dev string, x *asl.Execution) error {
			code, body := h.do(dev, "PUT", "/executions/"+x.Name, map[string]any{"status": "cancelled", "reason": "changed my mind"})
			if code != 200 || body["status"] != "cancelled" {
				return fmt.Errorf("PUT cancelled = %d %v", code, body)
			}
			return nil
		}},
		{"StopExecution and the status-change event", func(h *harness, _ string, x *asl.Execution) error {
			if err := h.eng.Stop(x.ARN, "Operator", "stopped from the console"); err != nil {
				return err
			}
			h.statusChange(x)
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			dev := "dev-a"
			x, pc := startFunction(t, h, dev, "exec-stop", 3600, 0)
			if err := tt.stop(h, dev, x); err != nil {
				t.Fatal(err)
			}
			if d := h.wait(x); d.Status != asl.StatusAborted {
				t.Errorf("engine status = %s, want ABORTED", d.Status)
			}
			if rec := h.record(dev, x.Name); rec.Status != store.ExecCancelled || len(rec.PendingCalls) != 0 {
				t.Errorf("record = %s with %d pending calls, want cancelled with none", rec.Status, len(rec.PendingCalls))
			}
			if st := h.callStatus(dev, x.Name, pc.CallID); st != store.CallExpired {
				t.Errorf("call status = %s, want expired", st)
			}
			if code, body := h.do(dev, "GET", "/calls", nil); code != 200 || len(body["items"].([]any)) != 0 {
				t.Errorf("GET /calls = %d %v, want no pending call", code, body)
			}
			if code, _ := h.do(dev, "PUT", "/executions/"+x.Name, map[string]any{"status": "running", "input": 1}); code != 422 {
				t.Errorf("resume after the end = %d, want 422", code)
			}
		})
	}
}

// TestFunctionRetryNewToken: the function Lambda's reply is lost, the Task's Retry runs it again
// with a new token, which overwrites the record; the first token is dead, the new one answers.
func TestFunctionRetryNewToken(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	h.iv.lostReply["function"] = 1
	x, pc := startFunction(t, h, dev, "exec-retry", 3600, 0)
	feed, err := h.events.Feed()
	if err != nil || len(feed) != 2 {
		t.Fatalf("feed = %d events (%v), want 2 (one per attempt)", len(feed), err)
	}
	var first store.PendingCall
	if err := json.Unmarshal(feed[0].Detail, &first); err != nil {
		t.Fatal(err)
	}
	if first.TaskToken == pc.TaskToken {
		t.Fatalf("the retry kept the first token")
	}
	if err := h.eng.SendTaskSuccess(first.TaskToken, `"stale"`); err == nil {
		t.Errorf("the first attempt's token still answers")
	}
	if code, body := h.do(dev, "POST", callPath(x.Name, pc.CallID, "result"), map[string]any{"output": "fresh"}); code != 200 {
		t.Fatalf("answer = %d %v", code, body)
	}
	if out := output(t, h.wait(x)); out["output"] != "fresh" {
		t.Errorf("output = %v", out)
	}
}

// TestLargeOutputTravelsByReference: a client's output over 32 KiB is stored by Settle and
// travels as {"sinew:ref", "bytes"}; GET /payloads/{ref} gives it back to its owner only.
func TestLargeOutputTravelsByReference(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	x, pc := startFunction(t, h, dev, "exec-large", 3600, 0)
	big := strings.Repeat("a", 40<<10)
	if code, body := h.do(dev, "POST", callPath(x.Name, pc.CallID, "result"), map[string]any{"output": map[string]any{"text": big}}); code != 200 {
		t.Fatalf("answer = %d %v", code, body)
	}
	out := output(t, h.wait(x))
	ref, _ := out["output"].(map[string]any)[store.RefKey].(string)
	if ref == "" {
		t.Fatalf("output = %.200v, want a reference", out)
	}
	code, body := h.do(dev, "GET", "/payloads/"+ref, nil)
	if code != 200 || body["text"] != big {
		t.Errorf("GET /payloads = %d, %d bytes", code, len(jsonString(body)))
	}
	if code, _ := h.do("dev-b", "GET", "/payloads/"+ref, nil); code != 404 {
		t.Errorf("another developer's GET /payloads = %d, want 404", code)
	}
	// The HTTP API answers a value under 1 MiB inline: the execution's result is
	// the value, though the state machine carried the reference.
	code, rec := h.do(dev, "GET", "/executions/"+x.Name, nil)
	res, _ := rec["output"].(map[string]any)
	if val, _ := res["output"].(map[string]any); code != 200 || val["text"] != big {
		t.Errorf("GET /executions/{id} = %d, output %.200v, want the value inline", code, rec["output"])
	}
}
