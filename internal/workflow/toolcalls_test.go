package workflow_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"sinew/internal/asl"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// gate holds every invocation of a function until it is opened: while the executor's gate is
// shut, whatever GET finds was recorded by the route itself.
type gate struct {
	next    lambda.Handler
	open    chan struct{}
	entered chan struct{}
}

func (g *gate) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.next.Invoke(ctx, payload)
}

// gateFunction puts a shut gate in front of the harness's function name.
func gateFunction(h *harness, name string) *gate {
	g := &gate{next: h.handler[name], open: make(chan struct{}), entered: make(chan struct{}, 1)}
	h.iv.mu.Lock()
	h.iv.handlers[name] = g
	h.iv.mu.Unlock()
	h.t.Cleanup(func() {
		select {
		case <-g.open:
		default:
			close(g.open)
		}
	})
	return g
}

// waitStatus polls the record until it has a final status.
func (h *harness) waitFinal(dev, id string) *store.Execution {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		x, err := h.store.GetExecution(h.ctx, dev, id)
		if err == nil && x.Status.Final() {
			return x
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("execution %s never ended (last %+v, %v)", id, x, err)
		}
		sleepMs(5)
	}
}

// TestPostToolCallsStartsThenRecords: POST /tool-calls starts the execution and records it before
// it answers 202, so a GET right after finds it running while its executor has not run; the
// executor then takes the same record over (no Prepare runs), and the execution ends on it. A
// repeat with the key, before and after the executor, is the same execution.
func TestPostToolCallsStartsThenRecords(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool)
	g := gateFunction(h, "integration")
	body := map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{"n": 1}}

	for _, key := range []string{"", "order-immediate"} {
		t.Run("key="+key, func(t *testing.T) {
			var hdr []string
			if key != "" {
				hdr = []string{"Idempotency-Key", key}
			}
			code, started := h.do(dev, "POST", "/tool-calls", body, hdr...)
			if code != 202 || started["status"] != "running" {
				t.Fatalf("POST = %d %v", code, started)
			}
			id := started["execution_id"].(string)
			code, x := h.do(dev, "GET", "/executions/"+id, nil)
			if code != 200 || x["status"] != "running" || x["workflow"] != "tool_call" || x["agent_id"] != agent || x["execution_id"] != id {
				t.Fatalf("GET right after the 202 = %d %v, want the running execution", code, x)
			}
			created := x["created_at"]
			// The executor has not run: the engine holds the execution at its Task.
			select {
			case <-g.entered:
			case <-time.After(20 * time.Second):
				t.Fatal("the executor was never invoked")
			}
			if key != "" {
				if code, again := h.do(dev, "POST", "/tool-calls", body, hdr...); code != 202 || again["execution_id"] != id || again["status"] != "running" {
					t.Errorf("repeat before the executor = %d %v, want %s running", code, again, id)
				}
			}
			// Another developer sees none of it.
			if code, _ := h.do("dev-b", "GET", "/executions/"+id, nil); code != 404 {
				t.Errorf("another developer's GET = %d, want 404", code)
			}
			g.open <- struct{}{} // one executor through
			rec := h.waitFinal(dev, id)
			if rec.Status != store.ExecSucceeded {
				t.Fatalf("record = %+v, want succeeded", rec)
			}
			if rec.CreatedAt.Format(time.RFC3339Nano) != created {
				t.Errorf("created_at %v changed from the route's %v: the executor made a second record", rec.CreatedAt, created)
			}
			if key != "" {
				if code, after := h.do(dev, "POST", "/tool-calls", body, hdr...); code != 202 || after["execution_id"] != id || after["status"] != "succeeded" {
					t.Errorf("repeat after the end = %d %v, want %s succeeded", code, after, id)
				}
			}
		})
	}
	// One record per execution, and the engine ran exactly two.
	if l, err := h.store.ListExecutions(h.ctx, dev, store.Page{Limit: 10}); err != nil || len(l.Items) != 2 {
		t.Errorf("executions = %+v (%v), want 2", l, err)
	}
	if n, m := h.iv.count("prepare"), h.iv.count("integration"); n != 0 || m != 2 {
		t.Errorf("Prepare ran %d times, the executor %d, want 0 and 2", n, m)
	}
}

// lostStart starts the execution and then reports that the answer never came, as when the
// connection drops after Step Functions took the request.
type lostStart struct {
	workflow.SFN
	name *string // the execution it started
}

func (l lostStart) StartExecution(ctx context.Context, in *sfn.StartExecutionInput, o ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	*l.name = *in.Name
	if _, err := l.SFN.StartExecution(ctx, in, o...); err != nil {
		return nil, err
	}
	return nil, &smithyhttp.RequestSendError{Err: context.DeadlineExceeded}
}

// TestStartToolCallFailures: a start that fails leaves no record of an execution that never ran
// (and a retry with the key starts it); a call too large for Step Functions is a 413 before
// anything is written; a start whose answer was lost still ends recorded, as its executor records it.
func TestStartToolCallFailures(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool)
	req := workflow.ToolCallRequest{AgentID: agent, Tool: "echo", Arguments: map[string]any{"n": 1}}

	t.Run("start refused", func(t *testing.T) {
		broken := *h.svc
		broken.ToolCallARN = strings.TrimSuffix(toolCallARN, "sinew-tool_call") + "not-deployed"
		for _, key := range []string{"", "order-refused"} {
			if _, err := broken.StartToolCall(h.ctx, dev, req, key); !fault.Is(err, fault.Internal) {
				t.Errorf("key %q: start on a missing state machine = %v, want Internal", key, err)
			}
		}
		if l, err := h.store.ListExecutions(h.ctx, dev, store.Page{Limit: 10}); err != nil || len(l.Items) != 0 {
			t.Fatalf("records left by failed starts: %+v (%v)", l, err)
		}
		// The key's retry, once Step Functions answers, starts the execution.
		st, err := h.svc.StartToolCall(h.ctx, dev, req, "order-refused")
		if err != nil || st.ExecutionID != workflow.IdempotentName(dev, "POST /tool-calls", "order-refused") {
			t.Fatalf("retry = %+v %v", st, err)
		}
		if rec := h.waitFinal(dev, st.ExecutionID); rec.Status != store.ExecSucceeded {
			t.Errorf("retried execution = %+v", rec)
		}
	})

	t.Run("too large", func(t *testing.T) {
		before, _ := h.store.ListExecutions(h.ctx, dev, store.Page{Limit: 100})
		big := strings.Repeat("x", 300<<10)
		code, body := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{"text": big}})
		e, _ := body["error"].(map[string]any)
		if code != 413 || e["field"] != "arguments" || !strings.Contains(e["message"].(string), "256 KiB") {
			t.Errorf("POST with 300 KiB of arguments = %d %v, want 413 naming arguments", code, body)
		}
		if after, _ := h.store.ListExecutions(h.ctx, dev, store.Page{Limit: 100}); len(after.Items) != len(before.Items) {
			t.Errorf("a refused call left a record: %d executions, was %d", len(after.Items), len(before.Items))
		}
	})

	t.Run("answer lost", func(t *testing.T) {
		g := gateFunction(h, "integration")
		lost := *h.svc
		var name string
		lost.SFN = lostStart{h.svc.SFN, &name}
		_, err := lost.StartToolCall(h.ctx, dev, req, "")
		if !fault.Is(err, fault.Transient) {
			t.Fatalf("start with a lost answer = %v, want Transient", err)
		}
		// The route records only after the start's answer; the executor records it.
		if _, err := h.store.GetExecution(h.ctx, dev, name); !fault.Is(err, fault.NotFound) {
			t.Errorf("record after the failed start: %v, want none yet", err)
		}
		close(g.open)
		if rec := h.waitFinal(dev, name); rec.Status != store.ExecSucceeded || rec.AgentID != agent {
			t.Errorf("record = %+v, want succeeded", rec)
		}
	})
}

// TestPostToolCallsRequests: a repeat of the key for an ended execution costs the record's read.
func TestPostToolCallsRequests(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool)
	body := map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{}}
	code, st := h.do(dev, "POST", "/tool-calls", body, "Idempotency-Key", "count-me")
	if code != 202 {
		t.Fatalf("POST = %d %v", code, st)
	}
	x, ok := h.eng.Execution(execARN(st["execution_id"].(string)))
	if !ok {
		t.Fatal("no execution in the engine")
	}
	output(t, h.wait(x))
	h.ddb.Reset()
	if code, again := h.do(dev, "POST", "/tool-calls", body, "Idempotency-Key", "count-me"); code != 202 || again["status"] != "succeeded" {
		t.Fatalf("repeat = %d %v", code, again)
	}
	if ops := h.ddb.Ops(); h.ddb.Total() != 2 || ops["BatchGetItem"] != 1 || ops["Query"] != 1 {
		t.Errorf("repeat: DynamoDB %v, want the tool's BatchGetItem and the record's Query", ops)
	}
}

// TestToolCallFunctionAnswered: a function call POST /tool-calls started waits in Dispatch, its
// one state; the execution ends with the client's answer as it came (2^53+1 stays exact, and an
// answer shaped like an error result is still an answer), and the status-change event records the
// result object with it and marks the call answered. A late answer is 409.
func TestToolCallFunctionAnswered(t *testing.T) {
	tests := []struct {
		name, how, answer string
		want              any
	}{
		{"SendTaskSuccess", "sdk", `["Lisbon",9007199254740993]`, []any{"Lisbon", int64(9007199254740993)}},
		{"HTTP result route", "http", `{"city":"Lisbon","n":9007199254740993}`, map[string]any{"city": "Lisbon", "n": int64(9007199254740993)}},
		{"an answer with an error key", "sdk", `{"error":{"type":"x","message":"y"}}`, map[string]any{"error": map[string]any{"type": "x", "message": "y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			dev := "dev-a"
			agent := h.agent(dev, nil, askUser(3600, 0))
			code, st := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "ask_user", "arguments": map[string]any{"question": "Which city?"}})
			if code != 202 {
				t.Fatalf("POST = %d %v", code, st)
			}
			x, ok := h.eng.Execution(execARN(st["execution_id"].(string)))
			if !ok {
				t.Fatal("no execution in the engine")
			}
			pc := h.pending(dev, x.Name)
			if tt.how == "sdk" {
				if err := h.eng.SendTaskSuccess(pc.TaskToken, tt.answer); err != nil {
					t.Fatal(err)
				}
			} else {
				v, _ := jsonv.DecodeString(tt.answer)
				if code, body := h.do(dev, "POST", callPath(x.Name, pc.CallID, "result"), map[string]any{"output": v}); code != 200 {
					t.Fatalf("answer = %d %v", code, body)
				}
			}
			d := h.wait(x)
			if d.Status != asl.StatusSucceeded {
				t.Fatalf("status %s: %s %s", d.Status, d.Error, d.Cause)
			}
			got, _ := jsonv.DecodeString(d.Output)
			jsonEqual(t, "execution output", got, tt.want)
			if strings.Contains(tt.answer, "9007199254740993") && !strings.Contains(d.Output, "9007199254740993") {
				t.Errorf("output %s lost the exact integer", d.Output)
			}
			if h := history(x); countPrefix(h, "TaskStateEntered") != 1 {
				t.Errorf("history %v: want Dispatch alone", h)
			}
			rec := h.waitFinal(dev, x.Name)
			if rec.Status != store.ExecSucceeded {
				t.Errorf("record = %+v, want succeeded", rec)
			}
			jsonEqual(t, "recorded output", rec.Output, map[string]any{"id": pc.CallID, "type": "function", "name": "ask_user", "output": tt.want})
			if strings.Contains(tt.answer, "9007199254740993") && !strings.Contains(jsonString(rec.Output), "9007199254740993") {
				t.Errorf("recorded output %s lost the exact integer", jsonString(rec.Output))
			}
			if st := h.callStatus(dev, x.Name, pc.CallID); st != store.CallAnswered {
				t.Errorf("call status = %s, want answered", st)
			}
			if code, _ := h.do(dev, "POST", callPath(x.Name, pc.CallID, "result"), map[string]any{"output": 1}); code != 409 {
				t.Errorf("second answer = %d, want 409", code)
			}
		})
	}
}
