package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"

	"sinew/internal/jsonv"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Step Functions retries the model step when its answer is lost (Lambda.ClientExecutionTimeoutException
// after the function did its work): every retry answers what the first invocation answered, the
// model is asked once per step, and the session's history takes the loop's messages once.
func TestModelStepRetriedAnswersTheSame(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}}},
		turn{Text: "Oslo: 21 degrees."},
	)
	sess, err := h.store.CreateSession(h.ctx, h.dev, store.Session{AgentID: h.agentID})
	if err != nil {
		t.Fatal(err)
	}
	sid := sess.ID
	in := agentloop.Input{DeveloperID: h.dev, AgentID: h.agentID, SessionID: &sid, Messages: []any{user("weather?")}, AutoRunTools: ptr(true)}
	ev := agentloop.Event{Input: in, ExecutionID: "loop-retried"}

	first, err := h.stepper.Step(h.ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.stepper.Step(h.ctx, ev)
	if err != nil {
		t.Fatalf("the retried first step: %v", err)
	}
	if len(first.Calls) != 1 || canon(t, first) != canon(t, again) {
		t.Fatalf("the retry answered\n%s\nafter\n%s", jsonv.EncodeString(again), jsonv.EncodeString(first))
	}
	call := first.Calls[0].Call
	next := agentloop.Event{Input: in, ExecutionID: "loop-retried", State: first.State, Results: []agentloop.ItemResult{
		{Call: call, Result: &agentloop.TaskResult{Output: map[string]any{"temperature": 21}}}}}
	last, err := h.stepper.Step(h.ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if again, err = h.stepper.Step(h.ctx, next); err != nil {
			t.Fatalf("retry %d of the last step: %v", i+1, err)
		}
		if !again.Done || again.Output.LastMessage.Content != "Oslo: 21 degrees." || canon(t, again.State) != canon(t, last.State) {
			t.Fatalf("retry %d answered %s", i+1, jsonv.EncodeString(again))
		}
	}
	if n := h.model.Count(); n != 2 {
		t.Errorf("the model was asked %d times, want 2 (once per step)", n)
	}
	l, err := h.store.ListMessages(h.ctx, h.dev, sid, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range l.Items {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "assistant,tool,assistant" {
		t.Errorf("history %s, want the loop's three messages once", got)
	}
}

// A tool output stored by reference reaches the model as its value in agent_loop too.
func TestAgentLoopReadsStoredOutputsBack(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo", "bytes": 40000}`}}},
		turn{Text: "A long report."},
	)
	out := h.wait(h.run("loop-big", h.input([]any{user("report?")}, nil)))
	results, _ := out["tool_results"].([]any)
	if len(results) != 1 {
		t.Fatalf("output %v", out)
	}
	if o, _ := results[0].(map[string]any)["output"].(map[string]any); o["sinew:ref"] == nil {
		t.Errorf("tool result %.200v, want its output as a reference", results[0])
	}
	for _, m := range h.model.Request(t, 1)["messages"].([]any) {
		mm := m.(map[string]any)
		if mm["role"] != "tool" {
			continue
		}
		if c := mm["content"].(string); !strings.Contains(c, `"report":"BEGIN`) || !strings.Contains(c, `END"`) || strings.Contains(c, "sinew:ref") {
			t.Errorf("the model saw %.120q..., want the stored value", c)
		}
	}
}

// The chat hands a turn over mid-way: agent_loop's first step runs the given calls under their ids
// without asking the model, and refuses a turn that does not answer the messages.
func TestAgentLoopAdoptsAHandedOffTurn(t *testing.T) {
	h := newHarness(t, turn{Text: "Oslo: 21 degrees."})
	wt, _ := h.store.ToolsFor(h.ctx, h.dev, h.agentID, "")
	var weather *tool.Tool
	for i := range wt {
		if wt[i].Name == "get_weather" {
			weather = &wt[i]
		}
	}
	call := tool.NewCall(weather, tool.NewCallID(), map[string]any{"location": "Oslo"})
	call.ModelCallID = "m1"
	msgs := []any{user("weather?"), map[string]any{"role": "assistant", "content": "",
		"tool_calls": []any{map[string]any{"id": "m1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"location": "Oslo"}`}}}}}
	out := h.wait(h.run("loop-adopt", h.input(msgs, map[string]any{"turn": []any{call}})))
	if out["finish_reason"] != "stop" || h.runs["Oslo"] != 1 || h.model.Count() != 1 {
		t.Fatalf("output %v, Oslo ran %d, model asked %d times", out, h.runs["Oslo"], h.model.Count())
	}
	if r := out["tool_results"].([]any)[0].(map[string]any); r["id"] != call.ID {
		t.Errorf("result %v, want it under the chat's call id %s", r, call.ID)
	}
	// A turn for messages that ask for nothing is refused with a typed error.
	_, err := h.stepper.Step(h.ctx, agentloop.Event{ExecutionID: "loop-bad-turn", Input: agentloop.Input{DeveloperID: h.dev, AgentID: h.agentID,
		Messages: []any{user("hi")}, AutoRunTools: ptr(true), Turn: []any{call}}})
	if err == nil || !strings.Contains(err.Error(), "no unanswered tool call") {
		t.Errorf("err %v, want the turn refused", err)
	}
}

func ptr[T any](v T) *T { return &v }

// canon is v's JSON with object keys in order, as it travels in Step Functions.
func canon(t *testing.T, v any) string {
	t.Helper()
	g, err := jsonv.DecodeString(jsonv.EncodeString(v))
	if err != nil {
		t.Fatal(err)
	}
	return jsonv.EncodeString(g)
}

// timesOut answers as a Lambda function past its timeout (the error Step Functions names the
// task's failure after) on its first n invocations, then runs h.
type timesOut struct {
	n, calls int
	errType  string
	h        lambda.Handler
}

func (x *timesOut) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if x.calls++; x.calls <= x.n {
		return nil, messages.InvokeResponse_Error{Type: x.errType, Message: "RequestId: 1 Error: Task timed out after 120.00 seconds"}
	}
	return x.h.Invoke(ctx, payload)
}

// The model step is idempotent, so its Task retries a Lambda time-out (Sandbox.Timedout, or
// Lambda.Unknown from older runtimes) and the loop goes on.
func TestModelStepRetriedAfterATimeout(t *testing.T) {
	for _, errType := range []string{"Sandbox.Timedout", "Lambda.Unknown"} {
		t.Run(errType, func(t *testing.T) {
			h := newHarness(t, turn{Text: "Hello."})
			x := &timesOut{n: 1, errType: errType, h: h.lambda.handlers["model"]}
			h.lambda.handlers["model"] = x
			out := h.wait(h.run("loop-timeout", h.input([]any{user("hi")}, nil)))
			if out["finish_reason"] != "stop" || x.calls != 2 || h.model.Count() != 1 {
				t.Fatalf("output %v after %d model invocations, model asked %d times", out, x.calls, h.model.Count())
			}
		})
	}
}
