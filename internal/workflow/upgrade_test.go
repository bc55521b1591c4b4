package workflow_test

import (
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/deploy"
	"sinew/internal/executor/guard"
	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// previousARN is the state machine running the definition deployed before this one.
const previousARN = "arn:aws:states:us-east-1:000000000000:stateMachine:sinew-tool_call-previous"

// previous registers testdata/tool_call.v1.asl.json, tool_call as deployed before the call path
// was made lean (Prepare, a Choice, a Task per type, Settle; claims in idempotency records), with
// the same functions: a Standard execution keeps the definition it started with after a deploy.
func (h *harness) previous(t *testing.T) *asl.Machine {
	return h.previousFrom(t, "internal/workflow/testdata/tool_call.v1.asl.json")
}

// previousFrom registers the definition in file as the previous one.
func (h *harness) previousFrom(t *testing.T, file string) *asl.Machine {
	t.Helper()
	def, _ := deploy.StateMachineByName(deploy.ToolCall)
	rendered, err := def.Render(readFile(t, file), func(v deploy.Value) (string, error) { return fnARN(v.Target), nil })
	if err != nil {
		t.Fatal(err)
	}
	m, err := asl.Parse(rendered, asl.Options{JSONata: jsonata.New()})
	if err != nil {
		t.Fatal(err)
	}
	h.machines[previousARN] = m
	return m
}

func (h *harness) startOn(t *testing.T, m *asl.Machine, name string, input map[string]any) *asl.Execution {
	t.Helper()
	for _, k := range []string{"task_id", "session_id", "arguments"} {
		if _, ok := input[k]; !ok {
			input[k] = nil
		}
	}
	x, err := h.eng.Start(h.ctx, asl.StartInput{Machine: m, StateMachineArn: previousARN, Name: name, Input: jsonv.EncodeString(input)})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestUpgradeFromPreviousDefinition: executions started on the previous definition, and the
// records its code wrote, finish correctly on this code: Prepare and Settle keep their entry
// points, the executors take the old envelope (claims in idempotency records, the outcome left to
// Settle), a call the old executor already ran is answered from its record and not run again, the
// HTTP routes answer an old execution's function call, and the status-change event changes
// nothing the old Settle recorded.
func TestUpgradeFromPreviousDefinition(t *testing.T) {
	h := newHarness(t)
	prev := h.previous(t)
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool, askUser(3600, 0))
	in := func(toolName string) map[string]any {
		return map[string]any{"developer_id": dev, "agent_id": agent, "tool": toolName, "arguments": map[string]any{"n": 1}}
	}
	settled := func(t *testing.T, name string, want store.ExecStatus) *store.Execution {
		t.Helper()
		rec := h.record(dev, name)
		if rec.Status != want {
			t.Fatalf("record %s = %+v, want %s", name, rec, want)
		}
		return rec
	}

	t.Run("integration", func(t *testing.T) {
		prep, settle := h.iv.count("prepare"), h.iv.count("settle")
		out := output(t, h.wait(h.startOn(t, prev, "v1-echo", in("echo"))))
		if o, _ := out["output"].(map[string]any); o["greeting"] != "overridden" {
			t.Errorf("output = %v", out)
		}
		settled(t, "v1-echo", store.ExecSucceeded)
		if h.iv.count("prepare") != prep+1 || h.iv.count("settle") != settle+1 {
			t.Errorf("Prepare ran %d times, Settle %d, want once each", h.iv.count("prepare")-prep, h.iv.count("settle")-settle)
		}
	})

	t.Run("a call the old executor ran", func(t *testing.T) {
		// The old executor recorded the call done, and its reply was lost: the Task's retry,
		// now on this code, answers the record.
		name := "v1-ran"
		callID := workflow.CallIDFor(dev, name)
		done := map[string]any{"state": "done", "call": "integration/echo", "output": map[string]any{"from": "the old run"}}
		if _, _, err := h.store.PutIdempotency(h.ctx, dev, guard.Key(callID), done, time.Hour); err != nil {
			t.Fatal(err)
		}
		out := output(t, h.wait(h.startOn(t, prev, name, in("echo"))))
		jsonEqual(t, "output", out["output"], map[string]any{"from": "the old run"})
		settled(t, name, store.ExecSucceeded)
	})

	answers := []struct {
		name   string
		answer func(t *testing.T, x *asl.Execution, pc store.PendingCall)
	}{
		{"over HTTP", func(t *testing.T, x *asl.Execution, pc store.PendingCall) {
			if code, body := h.do(dev, "POST", callPath(x.Name, pc.CallID, "result"), map[string]any{"output": "Lisbon"}); code != 200 {
				t.Fatalf("answer = %d %v", code, body)
			}
		}},
		{"by SendTaskSuccess", func(t *testing.T, _ *asl.Execution, pc store.PendingCall) {
			if err := h.eng.SendTaskSuccess(pc.TaskToken, `"Lisbon"`); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for i, a := range answers {
		t.Run("function answered "+a.name, func(t *testing.T) {
			name := []string{"v1-ask-http", "v1-ask-sdk"}[i]
			// The previous route recorded the execution before starting it.
			if _, _, err := h.store.CreateExecution(h.ctx, dev, store.Execution{ExecutionID: name, Workflow: workflow.ToolCall, AgentID: agent}); err != nil {
				t.Fatal(err)
			}
			x := h.startOn(t, prev, name, in("ask_user"))
			waitParked(t, x)
			c, err := h.store.GetCall(h.ctx, dev, name, workflow.CallIDFor(dev, name))
			if err != nil {
				t.Fatal(err)
			}
			pc := *c
			a.answer(t, x, pc)
			out := output(t, h.wait(x))
			jsonEqual(t, "result", out, map[string]any{"id": pc.CallID, "type": "function", "name": "ask_user", "output": "Lisbon"})
			rec := settled(t, name, store.ExecSucceeded)
			jsonEqual(t, "recorded output", rec.Output, out)
			if st := h.callStatus(dev, name, pc.CallID); st != store.CallAnswered {
				t.Errorf("call status = %s, want answered", st)
			}
			// A second answer is still a conflict.
			if code, _ := h.do(dev, "POST", callPath(name, pc.CallID, "result"), map[string]any{"output": "Porto"}); code != 409 {
				t.Errorf("second answer = %d, want 409", code)
			}
		})
	}
}

// TestUpgradeFromLeanDefinition: executions started on testdata/tool_call.v2.asl.json, the lean
// definition before Dispatch (a bare start ran Prepare, then Route again, then Execute or
// Function), finish on this code: Prepare answers what its Output reads, the executors take
// Execute's synchronous envelope, and the function call is answered over HTTP or by
// SendTaskSuccess.
func TestUpgradeFromLeanDefinition(t *testing.T) {
	h, prev, dev, agent := upgradeFrom(t, "internal/workflow/testdata/tool_call.v2.asl.json")
	in := func(toolName string) map[string]any {
		return map[string]any{"developer_id": dev, "agent_id": agent, "tool": toolName, "arguments": map[string]any{}}
	}
	for _, name := range []string{"echo", "list_agents"} {
		t.Run(name, func(t *testing.T) {
			x := h.startOn(t, prev, "v2-"+name, in(name))
			out := output(t, h.wait(x))
			if out["output"] == nil || out["error"] != nil {
				t.Errorf("output = %v", out)
			}
			if n := countPrefix(history(x), "TaskStateEntered Execute"); n != 1 {
				t.Errorf("history %v: want the previous definition's Execute", history(x))
			}
			if rec := h.record(dev, x.Name); rec.Status != store.ExecSucceeded {
				t.Errorf("record = %+v", rec)
			}
		})
	}
	for _, how := range []string{"http", "sdk"} {
		t.Run("function answered by "+how, func(t *testing.T) {
			x := h.startOn(t, prev, "v2-ask-"+how, in("ask_user"))
			waitParked(t, x)
			c, err := h.store.GetCall(h.ctx, dev, x.Name, workflow.CallIDFor(dev, x.Name))
			if err != nil {
				t.Fatal(err)
			}
			pc := *c
			if how == "http" {
				if code, body := h.do(dev, "POST", callPath(x.Name, pc.CallID, "result"), map[string]any{"output": "Lisbon"}); code != 200 {
					t.Fatalf("answer = %d %v", code, body)
				}
			} else if err := h.eng.SendTaskSuccess(pc.TaskToken, `"Lisbon"`); err != nil {
				t.Fatal(err)
			}
			out := output(t, h.wait(x))
			jsonEqual(t, "result", out, map[string]any{"id": pc.CallID, "type": "function", "name": "ask_user", "output": "Lisbon"})
			if rec := h.record(dev, x.Name); rec.Status != store.ExecSucceeded {
				t.Errorf("record = %+v", rec)
			}
			if st := h.callStatus(dev, x.Name, pc.CallID); st != store.CallAnswered {
				t.Errorf("call status = %s, want answered", st)
			}
		})
	}
}

// TestUpgradeFromRouteDefinition: executions started on testdata/tool_call.v3.asl.json, the
// definition before the one-state Dispatch (Route; POST /tool-calls' call went to Execute or
// Function, a bare start to Prepare and then Dispatch, whose Output placed the answer in the
// result object), finish on this code: Prepare without a token answers the envelope, the executors
// answer the old Dispatch's token with the bare output and take Execute's synchronous envelope, the
// function Lambda records Function's call, and the status-change event takes the result object
// those definitions end with as it is.
func TestUpgradeFromRouteDefinition(t *testing.T) {
	upgradeOfStarts(t, "internal/workflow/testdata/tool_call.v3.asl.json", "v3", "TaskStateEntered Execute")
}

// TestUpgradeFromDispatchDefinition: executions started on testdata/tool_call.v4.asl.json, the
// one-state Dispatch before its one envelope (it sent a server-side executor record and
// whole_result beside the token, and prepare the bare request with the token), finish on this
// code: the executors take the old flags, prepare the bare request, and the function Lambda the
// Function state's record.
func TestUpgradeFromDispatchDefinition(t *testing.T) {
	upgradeOfStarts(t, "internal/workflow/testdata/tool_call.v4.asl.json", "v4", "TaskStateEntered Dispatch")
}

// TestUpgradeFromOneEnvelopeDefinition: executions started on testdata/tool_call.v5.asl.json, the
// definition before Prepared (a bare start's Dispatch invoked prepare with the request and its
// token, and prepare invoked the executor with it and waited), finish on this code: prepare hands
// the call to its executor as an Event invocation it does not wait for, the executor answers the
// token, and a function call still goes Prepare, Function after Sinew.WaitForClient.
func TestUpgradeFromOneEnvelopeDefinition(t *testing.T) {
	upgradeOfStarts(t, "internal/workflow/testdata/tool_call.v5.asl.json", "v5", "TaskStateEntered Dispatch")
}

// upgradeOfStarts runs calls of each type on the previous definition at path, started by POST
// /tool-calls (whose first state is postState) and by a bare StartExecution (named prefix-...),
// each to its recorded end, function calls answered over HTTP and by SendTaskSuccess.
func upgradeOfStarts(t *testing.T, path, prefix, postState string) {
	h, prev, dev, agent := upgradeFrom(t, path)
	// POST /tool-calls on the previous definition, as a call started just before the deploy.
	post := func(t *testing.T, toolName string) *asl.Execution {
		t.Helper()
		h.svc.ToolCallARN = previousARN
		defer func() { h.svc.ToolCallARN = toolCallARN }()
		code, st := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": toolName, "arguments": map[string]any{}})
		if code != 202 {
			t.Fatalf("POST = %d %v", code, st)
		}
		x, ok := h.eng.Execution(strings.Replace(previousARN, ":stateMachine:", ":execution:", 1) + ":" + st["execution_id"].(string))
		if !ok {
			t.Fatal("no execution in the engine")
		}
		return x
	}
	start := func(t *testing.T, name, toolName string) *asl.Execution {
		t.Helper()
		return h.startOn(t, prev, name, map[string]any{"developer_id": dev, "agent_id": agent, "tool": toolName, "arguments": map[string]any{}})
	}
	for _, name := range []string{"echo", "list_agents"} {
		for _, entry := range []string{"post", "start"} {
			t.Run(name+"/"+entry, func(t *testing.T) {
				var x *asl.Execution
				want := postState
				if entry == "post" {
					x = post(t, name)
				} else {
					x, want = start(t, prefix+"-"+name, name), "TaskStateEntered Dispatch"
				}
				out := output(t, h.wait(x))
				if out["output"] == nil || out["error"] != nil || out["id"] != workflow.CallIDFor(dev, x.Name) {
					t.Errorf("output = %v, want the result object", out)
				}
				if n := countPrefix(history(x), want); n != 1 {
					t.Errorf("history %v: want the previous definition's %s", history(x), want)
				}
				if rec := h.waitFinal(dev, x.Name); rec.Status != store.ExecSucceeded {
					t.Errorf("record = %+v", rec)
				}
			})
		}
	}
	for _, entry := range []string{"post", "start"} {
		for _, how := range []string{"http", "sdk"} {
			t.Run("function/"+entry+" answered by "+how, func(t *testing.T) {
				var x *asl.Execution
				if entry == "post" {
					x = post(t, "ask_user")
				} else {
					x = start(t, prefix+"-ask-"+how, "ask_user")
				}
				waitParked(t, x)
				c, err := h.store.GetCall(h.ctx, dev, x.Name, workflow.CallIDFor(dev, x.Name))
				if err != nil {
					t.Fatal(err)
				}
				pc := *c
				if how == "http" {
					if code, body := h.do(dev, "POST", callPath(x.Name, pc.CallID, "result"), map[string]any{"output": []any{"Lisbon", int64(9007199254740993)}}); code != 200 {
						t.Fatalf("answer = %d %v", code, body)
					}
				} else if err := h.eng.SendTaskSuccess(pc.TaskToken, `["Lisbon",9007199254740993]`); err != nil {
					t.Fatal(err)
				}
				d := h.wait(x)
				want := map[string]any{"id": pc.CallID, "type": "function", "name": "ask_user", "output": []any{"Lisbon", int64(9007199254740993)}}
				if entry == "post" && postState == "TaskStateEntered Dispatch" {
					// The one-state Dispatch ends with the client's answer untouched, which the
					// event puts in the result object.
					answer, err := jsonv.DecodeString(d.Output)
					if err != nil {
						t.Fatal(err)
					}
					jsonEqual(t, "answer", answer, want["output"])
				} else {
					jsonEqual(t, "result", output(t, d), want)
				}
				rec := h.waitFinal(dev, x.Name)
				if rec.Status != store.ExecSucceeded {
					t.Errorf("record = %+v", rec)
				}
				// The event took a result object as it is, not as an answer to wrap again.
				jsonEqual(t, "recorded output", rec.Output, want)
				if st := h.callStatus(dev, x.Name, pc.CallID); st != store.CallAnswered {
					t.Errorf("call status = %s, want answered", st)
				}
			})
		}
	}
}

// upgradeFrom is the setting of an upgrade test: a harness with the system executor, the previous
// definition at path registered beside the current one, and developer dev-a's agent with an
// integration, a function and a system tool.
func upgradeFrom(t *testing.T, path string) (h *harness, prev *asl.Machine, dev, agent string) {
	t.Helper()
	h = newHarness(t)
	h.withSystem()
	prev = h.previousFrom(t, path)
	dev = "dev-a"
	agent = h.agent(dev, nil, echoTool, askUser(3600, 0),
		`{"name":"list_agents","type":"system","system":{"resource":"agent","operation":"list"}}`)
	return h, prev, dev, agent
}
