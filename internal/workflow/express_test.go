package workflow_test

import (
	"strings"
	"testing"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// expressHarness is a harness whose POST /tool-calls runs server-side calls on tool_call_express.
func expressHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.svc.ToolCallExpressARN = toolCallExpressARN
	return h
}

// sansID is an execution's outcome without what names the execution (its call's id, its dates).
func sansID(x map[string]any) map[string]any {
	out := map[string]any{"status": x["status"], "workflow": x["workflow"], "agent_id": x["agent_id"], "error": x["error"]}
	if o, ok := x["output"].(map[string]any); ok {
		o = jsonv.Normalize(roundTrip(o)).(map[string]any)
		delete(o, "id")
		out["output"] = o
	}
	return out
}

// The two machines behave alike: each server-side call, through POST /tool-calls, ends with the
// same record on tool_call (Prefer: respond-async, then polled) as on tool_call_express (answered
// 200 in the request), a tool's failure and a transient fault retried by Dispatch included, and
// the tool runs once on each.
func TestExpressConformsToStandard(t *testing.T) {
	h := expressHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool,
		`{"name":"forecast","type":"integration","integration":{"provider":"weather","method":"get"}}`,
		`{"name":"get_item","type":"api_call","api_call":{"method":"GET","url":"`+h.api.URL+`/items/{id}"}}`,
		`{"name":"get_missing","type":"api_call","api_call":{"method":"GET","url":"`+h.api.URL+`/missing/{id}"}}`)
	cases := []struct {
		name, tool string
		args       func(run string) map[string]any
		status     string
	}{
		{"integration", "echo", func(string) map[string]any { return map[string]any{"n": 1} }, "succeeded"},
		{"integration refused", "forecast", func(run string) map[string]any { return map[string]any{"location": run + "-b", "mode": "broken"} }, "failed"},
		{"integration transient then done", "forecast", func(run string) map[string]any { return map[string]any{"location": run + "-f", "mode": "flaky"} }, "succeeded"},
		{"api_call", "get_item", func(string) map[string]any { return map[string]any{"path": map[string]any{"id": "7"}} }, "succeeded"},
		{"api_call 404", "get_missing", func(string) map[string]any { return map[string]any{"path": map[string]any{"id": "7"}} }, "failed"},
		{"api_call refused argument", "get_item", func(string) map[string]any { return map[string]any{"id": "7"} }, "failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outcome := map[string]map[string]any{}
			for _, run := range []string{"standard", "express"} {
				body := map[string]any{"agent_id": agent, "tool": tc.tool, "arguments": tc.args(run)}
				var hdr []string
				if run == "standard" {
					hdr = []string{"Prefer", "respond-async"}
				}
				code, got := h.do(dev, "POST", "/tool-calls", body, hdr...)
				switch {
				case run == "standard" && code == 202:
					rec := h.waitFinal(dev, got["execution_id"].(string))
					_, got = h.do(dev, "GET", "/executions/"+rec.ExecutionID, nil)
				case run == "express" && code == 200:
					if _, again := h.do(dev, "GET", "/executions/"+got["execution_id"].(string), nil); !jsonv.Equal(roundTrip(again), roundTrip(got)) {
						t.Errorf("the 200's execution %v differs from GET's %v", got, again)
					}
				default:
					t.Fatalf("%s: POST = %d %v", run, code, got)
				}
				outcome[run] = sansID(got)
			}
			if outcome["express"]["status"] != tc.status {
				t.Errorf("express status %v, want %s", outcome["express"]["status"], tc.status)
			}
			// The runs differ only in the arguments that tell them apart.
			express := strings.ReplaceAll(jsonv.EncodeString(outcome["express"]), "express-", "standard-")
			if want := jsonv.EncodeString(outcome["standard"]); express != want {
				t.Errorf("express outcome %s, standard's %s", express, want)
			}
		})
	}
	if n := h.weather.count("standard-f") + h.weather.count("express-f"); n != 6 {
		t.Errorf("the flaky provider ran %d times, want 3 on each machine (two transient failures, one success)", n)
	}
	if n := h.weather.count("standard-b") + h.weather.count("express-b"); n != 2 {
		t.Errorf("the refusing provider ran %d times, want once on each machine", n)
	}
	if n := h.iv.count("prepare"); n != 0 {
		t.Errorf("prepare ran %d times: a call POST /tool-calls prepared needs none", n)
	}
}

// An Idempotency-Key's repeat gets the same answer, the tool having run once: 200 with the ended
// execution, and Prefer: respond-async's 202 names the same execution, ended.
func TestExpressIdempotentRepeat(t *testing.T) {
	h := expressHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil, `{"name":"forecast","type":"integration","integration":{"provider":"weather","method":"get"}}`)
	body := map[string]any{"agent_id": agent, "tool": "forecast", "arguments": map[string]any{"location": "oslo"}}
	code, first := h.do(dev, "POST", "/tool-calls", body, "Idempotency-Key", "k-1")
	if code != 200 || first["status"] != "succeeded" {
		t.Fatalf("first = %d %v", code, first)
	}
	code, again := h.do(dev, "POST", "/tool-calls", body, "Idempotency-Key", "k-1")
	if code != 200 || !jsonv.Equal(roundTrip(again), roundTrip(first)) {
		t.Errorf("repeat = %d %v, want the first answer %v", code, again, first)
	}
	code, async := h.do(dev, "POST", "/tool-calls", body, "Idempotency-Key", "k-1", "Prefer", "respond-async")
	if code != 202 || async["execution_id"] != first["execution_id"] || async["status"] != "succeeded" {
		t.Errorf("repeat with respond-async = %d %v", code, async)
	}
	if n := h.weather.count("oslo"); n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
}

// A call that outlasts the route's wait is answered 202 with the execution to poll, which goes on
// and ends recorded; function tools and api_calls bounded past Express's room run on tool_call.
func TestExpressFallsBackToPolling(t *testing.T) {
	h := expressHarness(t)
	h.svc.SyncWait = 50 * time.Millisecond
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool, askUser(60, 0),
		`{"name":"slow_api","type":"api_call","api_call":{"method":"GET","url":"`+h.api.URL+`/items/{id}","timeout":300}}`)
	g := gateFunction(h, "integration")
	code, st := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{}})
	if code != 202 || st["status"] != "running" {
		t.Fatalf("a call past the wait = %d %v, want 202 running", code, st)
	}
	<-g.entered
	close(g.open)
	if rec := h.waitFinal(dev, st["execution_id"].(string)); rec.Status != store.ExecSucceeded || rec.Output == nil {
		t.Errorf("after the wait: %+v, want succeeded with the result", rec)
	}
	for _, tl := range []string{"ask_user", "slow_api"} {
		code, st := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": tl, "arguments": map[string]any{"path": map[string]any{"id": "1"}}})
		if code != 202 {
			t.Fatalf("%s: POST = %d %v, want 202", tl, code, st)
		}
		id := st["execution_id"].(string)
		if _, ok := h.eng.Execution(execARN(id)); !ok {
			t.Errorf("%s did not start on tool_call", tl)
		}
		if tl == "ask_user" {
			h.pending(dev, id)
			if err := h.eng.Stop(execARN(id), "Test.Done", ""); err != nil {
				t.Fatal(err)
			}
		}
		h.waitFinal(dev, id)
	}
}

// A bare StartSyncExecution naming only the tool goes through Prepare and answers the result
// object; a function tool, which cannot wait in an Express execution, ends settled failed.
func TestExpressBareStart(t *testing.T) {
	h := expressHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool, askUser(60, 0))
	for _, tc := range []struct{ name, tool, wantType, status string }{
		{"bare-echo", "echo", "", "succeeded"},
		{"bare-function", "ask_user", "Sinew.InvalidInput", "failed"},
	} {
		in := sampleInput(t, dev, agent)
		in["tool"], in["arguments"] = tc.tool, map[string]any{}
		res, err := h.svc.SFN.(workflow.SyncStarter).StartSyncExecution(h.ctx, &sfn.StartSyncExecutionInput{
			StateMachineArn: awsv2.String(toolCallExpressARN), Name: awsv2.String(tc.name), Input: awsv2.String(jsonv.EncodeString(in))})
		if err != nil || res.Status != "SUCCEEDED" {
			t.Fatalf("%s: %+v %v", tc.name, res, err)
		}
		v, _ := jsonv.DecodeString(awsv2.ToString(res.Output))
		o := v.(map[string]any)
		if tc.wantType == "" && o["output"] == nil || tc.wantType != "" && (o["error"] == nil || o["error"].(map[string]any)["type"] != tc.wantType) {
			t.Errorf("%s: output %v", tc.name, o)
		}
		if rec := h.record(dev, tc.name); string(rec.Status) != tc.status {
			t.Errorf("%s: record %+v, want %s", tc.name, rec, tc.status)
		}
	}
}

// Deploying tool_call_express over a stack with calls in flight on tool_call: a server-side call
// running, a function call waiting for its client and a keyed call that has ended all finish (or
// answer) as before, the keyed repeat without running the tool again; new calls answer in the
// request.
func TestUpgradeToExpress(t *testing.T) {
	h := newHarness(t) // as deployed before: no tool_call_express
	dev := "dev-a"
	agent := h.agent(dev, nil, echoTool, askUser(3600, 0),
		`{"name":"forecast","type":"integration","integration":{"provider":"weather","method":"get"}}`)
	g := gateFunction(h, "integration")
	code, running := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{}})
	if code != 202 {
		t.Fatalf("before the deploy: POST = %d %v", code, running)
	}
	<-g.entered
	code, waiting := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "ask_user", "arguments": map[string]any{}})
	if code != 202 {
		t.Fatalf("before the deploy: function POST = %d %v", code, waiting)
	}
	pc := h.pending(dev, waiting["execution_id"].(string))
	keyed := map[string]any{"agent_id": agent, "tool": "forecast", "arguments": map[string]any{"location": "rome"}}
	g.open <- struct{}{} // the echo call through
	code, first := h.do(dev, "POST", "/tool-calls", keyed, "Idempotency-Key", "before")
	if code != 202 {
		t.Fatalf("before the deploy: keyed POST = %d %v", code, first)
	}
	close(g.open)
	h.waitFinal(dev, first["execution_id"].(string))

	h.svc.ToolCallExpressARN = toolCallExpressARN // the deploy

	if rec := h.waitFinal(dev, running["execution_id"].(string)); rec.Status != store.ExecSucceeded {
		t.Errorf("the call running across the deploy: %+v", rec)
	}
	if code, body := h.do(dev, "POST", callPath(pc.ExecutionID, pc.CallID, "result"), map[string]any{"output": "yes"}); code != 200 {
		t.Fatalf("answering the waiting call = %d %v", code, body)
	}
	if rec := h.waitFinal(dev, pc.ExecutionID); rec.Status != store.ExecSucceeded {
		t.Errorf("the function call waiting across the deploy: %+v", rec)
	}
	code, again := h.do(dev, "POST", "/tool-calls", keyed, "Idempotency-Key", "before")
	if code != 200 || again["execution_id"] != first["execution_id"] || again["status"] != "succeeded" {
		t.Errorf("the keyed repeat after the deploy = %d %v, want 200 with %v ended", code, again, first["execution_id"])
	}
	if n := h.weather.count("rome"); n != 1 {
		t.Errorf("the keyed call's tool ran %d times, want once", n)
	}
	if code, x := h.do(dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{}}); code != 200 || x["status"] != "succeeded" {
		t.Errorf("a new call after the deploy = %d %v, want 200 with the result", code, x)
	}
}
