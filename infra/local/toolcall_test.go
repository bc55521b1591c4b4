package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/deploy"
)

// client is a developer of the local HTTP API, with the JWT `local token` printed for it.
// Its methods take the calling test's t: subtests share one client.
type client struct {
	url string
	jwt string
}

func newClient(t testing.TB, p *proc, dev string) *client {
	t.Helper()
	out, err := exec.Command(binPath, "token", "--dir", p.Dir, dev).Output()
	if err != nil {
		t.Fatalf("local token %s: %v", dev, err)
	}
	return &client{url: p.Endpoints["http"], jwt: strings.TrimSpace(string(out))}
}

// do sends a request and answers the status, the decoded body and the raw body.
func (c *client) do(t testing.TB, method, path string, body any, hdr ...string) (int, map[string]any, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.jwt)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, string(raw)
}

// must sends a request that has to answer want, and answers the body.
func (c *client) must(t testing.TB, want int, method, path string, body any) map[string]any {
	t.Helper()
	code, m, raw := c.do(t, method, path, body)
	if code != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, code, raw, want)
	}
	return m
}

// startCall posts a tool call for the execution to poll (Prefer: respond-async) and checks that
// the execution can be read at once: the route records it before it answers 202.
func (c *client) startCall(t *testing.T, agent, toolName string, args map[string]any) string {
	t.Helper()
	code, st, raw := c.do(t, "POST", "/tool-calls", map[string]any{"agent_id": agent, "task_id": nil, "session_id": nil, "tool": toolName, "arguments": args},
		"Prefer", "respond-async")
	if code != 202 {
		t.Fatalf("POST /tool-calls = %d %s, want 202", code, raw)
	}
	id, _ := st["execution_id"].(string)
	// The execution starts before it is recorded, so its function may already wait on its answer.
	if id == "" || (st["status"] != "running" && st["status"] != "awaiting_input") {
		t.Fatalf("POST /tool-calls = %v", st)
	}
	if code, x, raw := c.do(t, "GET", "/executions/"+id, nil); code != 200 || x["execution_id"] != id || x["workflow"] != "tool_call" {
		t.Fatalf("GET /executions/%s right after the 202 = %d %s, want the execution", id, code, raw)
	}
	return id
}

// pendingCall waits until the execution is awaiting_input and GET /calls?status=pending shows its
// call, and answers that call.
func (c *client) pendingCall(t *testing.T, id string) map[string]any {
	t.Helper()
	var call map[string]any
	eventually(t, "execution "+id+" to await input", func() bool {
		_, x, _ := c.do(t, "GET", "/executions/"+id, nil)
		if x["status"] != "awaiting_input" {
			if s, _ := x["status"].(string); s != "running" {
				t.Fatalf("execution %s is %s while waiting for awaiting_input: %v", id, s, x)
			}
			return false
		}
		for _, it := range c.must(t, 200, "GET", "/calls?status=pending&limit=100", nil)["items"].([]any) {
			if m := it.(map[string]any); m["execution_id"] == id {
				call = m
			}
		}
		return call != nil
	})
	if tok, _ := call["task_token"].(string); tok == "" || call["type"] != "function" || call["status"] != "pending" {
		t.Fatalf("pending call = %v, want a function call with its task token", call)
	}
	return call
}

// final waits for the execution's final status and answers the record and its raw JSON.
func (c *client) final(t *testing.T, id string) (map[string]any, string) {
	t.Helper()
	var x map[string]any
	var raw string
	eventually(t, "execution "+id+" to end", func() bool {
		_, x, raw = c.do(t, "GET", "/executions/"+id, nil)
		switch x["status"] {
		case "succeeded", "failed", "timed_out", "cancelled":
			return true
		}
		return false
	})
	return x, raw
}

func (c *client) callsWithStatus(t *testing.T, status string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for _, it := range c.must(t, 200, "GET", "/calls?status="+status+"&limit=100", nil)["items"].([]any) {
		ids[it.(map[string]any)["call_id"].(string)] = true
	}
	return ids
}

// TestToolCallFunctionResumed is a function tool end to end through local mode's public
// endpoints: POST /tool-calls, then the call resumed by the AWS CLI, by aws-sdk-go-v2, over the
// HTTP result route and by Julep's PUT /executions/{id}; failed by the CLI's send-task-failure;
// left to time out; and the answers the rules refuse (409, 410, another developer's 404).
func TestToolCallFunctionResumed(t *testing.T) {
	dir := t.TempDir()
	p := startLocal(t, dir, "--in-memory")
	ctx := context.Background()
	dev, other := newClient(t, p, "dev-toolcall"), newClient(t, p, "dev-other")
	sfnEP := p.Endpoints["stepfunctions"]
	execARN := func(id string) string {
		return strings.Replace(machineArn(deploy.ToolCall), ":stateMachine:", ":execution:", 1) + ":" + id
	}

	agent := dev.must(t, 201, "POST", "/agents", map[string]any{"name": "resumer", "about": "function tools, resumed every way"})["id"].(string)
	dev.must(t, 201, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "ask_user", "type": "function", "description": "a person answers",
		"function": map[string]any{"parameters": map[string]any{"type": "object"}, "timeout_seconds": 3600}})
	// Short enough to pass in the test, long enough for the call to be recorded first.
	dev.must(t, 201, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "ask_quick", "type": "function", "description": "expires",
		"function": map[string]any{"parameters": map[string]any{"type": "object"}, "timeout_seconds": 5}})

	// Started first, so its five seconds pass while the others run.
	quick := dev.startCall(t, agent, "ask_quick", map[string]any{"question": "still there?"})

	// The value each client sends back; 2^53+1 checks that numbers stay exact end to end.
	const exact = "9007199254740993"
	tests := []struct {
		name   string
		resume func(t *testing.T, id string, call map[string]any)
	}{
		{"aws CLI send-task-success", func(t *testing.T, _ string, call map[string]any) {
			awsJSON(t, p, sfnEP, "stepfunctions", "send-task-success", "--task-token", call["task_token"].(string),
				"--task-output", `{"answer":"from the CLI","n":`+exact+`}`)
		}},
		{"aws-sdk-go-v2 SendTaskSuccess", func(t *testing.T, _ string, call map[string]any) {
			if _, err := p.sfn().SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(call["task_token"].(string)),
				Output: aws.String(`{"answer":"from the SDK","n":` + exact + `}`)}); err != nil {
				t.Fatal(err)
			}
		}},
		{"POST result", func(t *testing.T, id string, call map[string]any) {
			path := "/executions/" + id + "/calls/" + call["call_id"].(string)
			// Another developer can neither answer nor heartbeat it; the owner can heartbeat.
			if code, _, raw := other.do(t, "POST", path+"/result", json.RawMessage(`{"output":{"answer":"stolen"}}`)); code != 404 {
				t.Errorf("another developer's answer = %d %s, want 404", code, raw)
			}
			if code, _, raw := other.do(t, "POST", path+"/heartbeat", nil); code != 404 {
				t.Errorf("another developer's heartbeat = %d %s, want 404", code, raw)
			}
			if code, _, raw := other.do(t, "GET", "/executions/"+id, nil); code != 404 {
				t.Errorf("another developer's GET = %d %s, want 404", code, raw)
			}
			dev.must(t, 204, "POST", path+"/heartbeat", nil)
			if c := dev.must(t, 200, "POST", path+"/result", json.RawMessage(`{"output":{"answer":"over HTTP","n":`+exact+`}}`)); c["status"] != "answered" {
				t.Errorf("answer = %v", c)
			}
		}},
		{"PUT /executions/{id}", func(t *testing.T, id string, _ map[string]any) {
			dev.must(t, 200, "PUT", "/executions/"+id, json.RawMessage(`{"status":"running","input":{"answer":"by PUT","n":`+exact+`}}`))
		}},
	}
	transitions := map[string]int{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := dev.startCall(t, agent, "ask_user", map[string]any{"question": tt.name})
			call := dev.pendingCall(t, id)
			tt.resume(t, id, call)
			x, raw := dev.final(t, id)
			want := map[string]any{"id": call["call_id"], "type": "function", "name": "ask_user"}
			out, _ := x["output"].(map[string]any)
			if x["status"] != "succeeded" || out["id"] != want["id"] || out["type"] != "function" || out["name"] != "ask_user" || out["error"] != nil {
				t.Fatalf("execution = %s, want succeeded with the result of %v", raw, want)
			}
			if res, _ := out["output"].(map[string]any); res["answer"] == nil || !strings.Contains(raw, `"n":`+exact) {
				t.Errorf("result output = %v (raw %s), want the client's output with n exact", out["output"], raw)
			}
			if !dev.callsWithStatus(t, "answered")[call["call_id"].(string)] {
				t.Errorf("call %s is not listed as answered", call["call_id"])
			}
			// Step Functions' own view: SUCCEEDED, its output the same result. Settle records the
			// result as the last state runs, so the execution may close a moment after the record.
			var d *sfn.DescribeExecutionOutput
			var err error
			eventually(t, "the execution to close", func() bool {
				d, err = p.sfn().DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(execARN(id))})
				return err != nil || d.Status != types.ExecutionStatusRunning
			})
			if err != nil || d.Status != types.ExecutionStatusSucceeded || !strings.Contains(aws.ToString(d.Output), `"n":`+exact) {
				t.Errorf("DescribeExecution = %v %v", d, err)
			}
			// A second answer, each way, is refused: the call is answered and its token used.
			path := "/executions/" + id + "/calls/" + call["call_id"].(string) + "/result"
			if code, _, raw := dev.do(t, "POST", path, map[string]any{"output": "again"}); code != 409 {
				t.Errorf("second answer = %d %s, want 409", code, raw)
			}
			if code, _, raw := dev.do(t, "PUT", "/executions/"+id, map[string]any{"status": "running", "input": "again"}); code != 422 {
				t.Errorf("PUT after the end = %d %s, want 422 (no pending call)", code, raw)
			}
			_, err = p.sfn().SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(call["task_token"].(string)), Output: aws.String(`1`)})
			var used *types.TaskTimedOut
			if !errors.As(err, &used) {
				t.Errorf("SendTaskSuccess with a used token = %v, want TaskTimedOut (AWS's answer to a used token)", err)
			}
			transitions[tt.name] = stateTransitions(t, p, execARN(id))
		})
	}

	t.Run("aws CLI send-task-failure", func(t *testing.T) {
		id := dev.startCall(t, agent, "ask_user", map[string]any{"question": "may I?"})
		call := dev.pendingCall(t, id)
		awsJSON(t, p, sfnEP, "stepfunctions", "send-task-failure", "--task-token", call["task_token"].(string),
			"--error", "NotAllowed", "--cause", "the user said no")
		x, raw := dev.final(t, id)
		e, _ := x["error"].(map[string]any)
		if x["status"] != "failed" || e["type"] != "Client.NotAllowed" || e["message"] != "the user said no" {
			t.Errorf("execution = %s, want failed with Client.NotAllowed", raw)
		}
		if out, _ := x["output"].(map[string]any); out["id"] != call["call_id"] || out["error"] == nil {
			t.Errorf("output = %v, want the error result", x["output"])
		}
		if !dev.callsWithStatus(t, "failed")[call["call_id"].(string)] {
			t.Errorf("call %s is not listed as failed", call["call_id"])
		}
		// The tool failed, not the workflow: Step Functions reports SUCCEEDED (once it closes).
		var d *sfn.DescribeExecutionOutput
		var err error
		eventually(t, "the execution to close", func() bool {
			d, err = p.sfn().DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(execARN(id))})
			return err != nil || d.Status != types.ExecutionStatusRunning
		})
		if err != nil || d.Status != types.ExecutionStatusSucceeded {
			t.Errorf("DescribeExecution = %v %v", d, err)
		}
		path := "/executions/" + id + "/calls/" + call["call_id"].(string) + "/result"
		if code, _, raw := dev.do(t, "POST", path, map[string]any{"output": "too late"}); code != 409 {
			t.Errorf("answer after the failure = %d %s, want 409", code, raw)
		}
		transitions["aws CLI send-task-failure"] = stateTransitions(t, p, execARN(id))
	})

	t.Run("timeout_seconds", func(t *testing.T) {
		x, raw := dev.final(t, quick)
		e, _ := x["error"].(map[string]any)
		if x["status"] != "timed_out" || e["type"] != "Sinew.Timeout" {
			t.Fatalf("execution = %s, want timed_out with Sinew.Timeout", raw)
		}
		out, _ := x["output"].(map[string]any)
		callID, _ := out["id"].(string)
		if !dev.callsWithStatus(t, "expired")[callID] || dev.callsWithStatus(t, "pending")[callID] {
			t.Errorf("call %q: expired %v, pending %v; want expired only", callID, dev.callsWithStatus(t, "expired"), dev.callsWithStatus(t, "pending"))
		}
		path := "/executions/" + quick + "/calls/" + callID
		if code, _, raw := dev.do(t, "POST", path+"/result", map[string]any{"output": "late"}); code != 410 {
			t.Errorf("answer after expiry = %d %s, want 410", code, raw)
		}
		if code, _, raw := dev.do(t, "POST", path+"/heartbeat", nil); code != 410 {
			t.Errorf("heartbeat after expiry = %d %s, want 410", code, raw)
		}
		if code, _, raw := other.do(t, "POST", path+"/result", map[string]any{"output": "late"}); code != 404 {
			t.Errorf("another developer's answer after expiry = %d %s, want 404", code, raw)
		}
		transitions["timeout_seconds"] = stateTransitions(t, p, execARN(quick))
	})

	// What Step Functions bills per function call: an answer runs one state (Dispatch), a failure
	// or an expiry two (Settle records it).
	for name, n := range transitions {
		t.Logf("%s: %d state transitions", name, n)
		want := 1
		if name == "aws CLI send-task-failure" || name == "timeout_seconds" {
			want = 2
		}
		if n != want {
			t.Errorf("%s: %d state transitions, want %d", name, n, want)
		}
	}
	if len(dev.callsWithStatus(t, "pending")) != 0 {
		t.Errorf("calls still pending: %v", dev.callsWithStatus(t, "pending"))
	}
	p.stop(t)
}

// stateTransitions counts the states an execution entered (what Step Functions bills), from its
// history through the SDK (the CLI takes seconds to start on a loaded machine).
func stateTransitions(t *testing.T, p *proc, arn string) int {
	t.Helper()
	n := 0
	pg := sfn.NewGetExecutionHistoryPaginator(p.sfn(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			if strings.HasSuffix(string(e.Type), "StateEntered") {
				n++
			}
		}
	}
	return n
}

// TestToolCallBareStart: a user's StartExecution of tool_call naming only a server-side tool
// reaches its executor through the state machine: Dispatch invokes prepare, which answers its
// token with Sinew.Prepare through local mode's Step Functions API (AWS_ENDPOINT_URL_SFN, as
// deployed through the default endpoints); Prepare makes the call, Prepared sends it back to
// Dispatch, which invokes the executor, and the executor answers its token; the execution succeeds
// with the result, recorded. No function invokes another.
func TestToolCallBareStart(t *testing.T) {
	dir := t.TempDir()
	p := startLocal(t, dir, "--in-memory")
	ctx := context.Background()
	dev := newClient(t, p, "dev-bare")
	agent := dev.must(t, 201, "POST", "/agents", map[string]any{"name": "bare", "about": "started by a user's own machine"})["id"].(string)
	dev.must(t, 201, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "echo", "type": "integration",
		"integration": map[string]any{"provider": "dummy"}})
	dev.must(t, 201, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "get_agent", "type": "system",
		"system": map[string]any{"resource": "agent", "operation": "get"}})
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"echo", map[string]any{"greeting": "hi"}, `"greeting":"hi"`},
		{"get_agent", map[string]any{"agent_id": agent}, `"name":"bare"`},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			in, _ := json.Marshal(map[string]any{"developer_id": "dev-bare", "agent_id": agent, "task_id": nil, "session_id": nil,
				"tool": tt.tool, "arguments": tt.args})
			st, err := p.sfn().StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machineArn(deploy.ToolCall)),
				Name: aws.String("bare-" + tt.tool), Input: aws.String(string(in))})
			if err != nil {
				t.Fatal(err)
			}
			var d *sfn.DescribeExecutionOutput
			eventually(t, "the execution to close", func() bool {
				d, err = p.sfn().DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: st.ExecutionArn})
				return err != nil || d.Status != types.ExecutionStatusRunning
			})
			if err != nil || d.Status != types.ExecutionStatusSucceeded || !strings.Contains(aws.ToString(d.Output), tt.want) ||
				strings.Contains(aws.ToString(d.Output), `"error"`) {
				t.Fatalf("DescribeExecution = %v %v, want SUCCEEDED with %s", d, err, tt.want)
			}
			x, raw := dev.final(t, "bare-"+tt.tool)
			if x["status"] != "succeeded" || !strings.Contains(raw, tt.want) {
				t.Errorf("record = %s", raw)
			}
			if n := stateTransitions(t, p, aws.ToString(st.ExecutionArn)); n != 4 {
				t.Errorf("%d state transitions, want 4 (Dispatch, Prepare, Prepared, Dispatch)", n)
			}
		})
	}
}
