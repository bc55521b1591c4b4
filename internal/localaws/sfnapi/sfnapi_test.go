package sfnapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/localaws/durable"
)

type echo struct{ tokens chan string }

func (e echo) Invoke(_ context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	var p struct {
		Token string `json:"token"`
	}
	if json.Unmarshal(req.Payload, &p) == nil && p.Token != "" {
		e.tokens <- p.Token
	}
	return &asl.LambdaResponse{Payload: req.Payload}, nil
}

type fixture struct {
	url    string
	svc    *Service
	tokens chan string
}

func setup(t *testing.T) *fixture {
	t.Helper()
	return serve(t, openStore(t))
}

// openStore opens a durable store of the test's own, closed when the test ends.
func openStore(t *testing.T) *durable.Store {
	t.Helper()
	st, err := durable.Open(filepath.Join(t.TempDir(), "sfn.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// serve runs a service over st: calling it again on the same store is a restart.
func serve(t *testing.T, st *durable.Store) *fixture {
	t.Helper()
	inv := echo{tokens: make(chan string, 100)}
	rec := durable.NewRecorder(st, inv, nil, nil)
	var svc *Service
	eng := asl.New(asl.Config{Lambda: rec, Clock: rec, Machines: func(arn string) (*asl.Machine, bool) { return svc.Resolve(arn) },
		StartChild: func(ctx context.Context, in asl.StartInput) (asl.Child, error) { return svc.StartChild(ctx, in) }})
	svc = New(Options{Store: st, Recorder: rec, Engine: eng})
	if err := svc.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	return &fixture{url: srv.URL, svc: svc, tokens: inv.tokens}
}

// call posts one operation and gives the status and decoded body.
func (f *fixture) call(t *testing.T, op string, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s: body %q is not JSON", op, data)
	}
	return resp.StatusCode, out
}

func (f *fixture) ok(t *testing.T, op string, body any) map[string]any {
	t.Helper()
	data, _ := json.Marshal(body)
	status, out := f.call(t, op, string(data))
	if status != 200 {
		t.Fatalf("%s: %d %v", op, status, out)
	}
	return out
}

const (
	waitDef = `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",` +
		`"Parameters":{"FunctionName":"cb","Payload":{"token.$":"$$.Task.Token"}},"End":true}}}`
	passDef = `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`
	// otherDef is another definition an Express machine can run.
	otherDef = `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"End":true}}}`
	role     = "arn:aws:iam::000000000000:role/r"
)

func (f *fixture) machine(t *testing.T, name, def, typ string) string {
	t.Helper()
	out := f.ok(t, "CreateStateMachine", map[string]any{"name": name, "definition": def, "roleArn": role, "type": typ})
	return out["stateMachineArn"].(string)
}

func (f *fixture) waitStatus(t *testing.T, arn, want string) map[string]any {
	t.Helper()
	for range 5000 {
		d := f.ok(t, "DescribeExecution", map[string]any{"executionArn": arn})
		if d["status"] == want {
			return d
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s never reached %s", arn, want)
	return nil
}

func TestBadInput(t *testing.T) {
	f := setup(t)
	sm := f.machine(t, "bad", waitDef, "STANDARD")
	closed := f.ok(t, "StartExecution", map[string]any{"stateMachineArn": sm, "name": "done", "input": "{}"})["executionArn"].(string)
	f.ok(t, "SendTaskSuccess", map[string]any{"taskToken": <-f.tokens, "output": "{}"})
	f.waitStatus(t, closed, "SUCCEEDED")
	running := f.ok(t, "StartExecution", map[string]any{"stateMachineArn": sm, "name": "run", "input": `{"a":1}`})["executionArn"].(string)
	tok := <-f.tokens
	missingSM := strings.Replace(sm, ":bad", ":nope", 1)
	missingEx := strings.Replace(running, ":run", ":nope", 1)
	big := `{"s":"` + strings.Repeat("x", asl.MaxPayloadBytes) + `"}`
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	tests := []struct {
		name, op, body string
		status         int
		typ, msg       string
	}{
		{"malformed JSON", "StartExecution", `{"stateMachineArn":`, 400, "SerializationException", ""},
		{"wrong member type", "StartExecution", `{"stateMachineArn":5}`, 400, "SerializationException", "stateMachineArn"},
		{"unknown operation", "StartExecutionz", `{}`, 400, "UnknownOperationException", ""},
		{"missing arn", "StartExecution", `{}`, 400, "ValidationException", "'stateMachineArn'"},
		{"not an ARN", "DescribeStateMachine", `{"stateMachineArn":"foo"}`, 400, "InvalidArn", "Invalid Arn: 'Invalid ARN prefix: foo'"},
		{"execution ARN for a machine", "StartExecution", js(map[string]any{"stateMachineArn": running}), 400, "InvalidArn", ""},
		{"unknown machine", "StartExecution", js(map[string]any{"stateMachineArn": missingSM}), 400, "StateMachineDoesNotExist", "State Machine Does Not Exist: '" + missingSM + "'"},
		{"unknown execution", "DescribeExecution", js(map[string]any{"executionArn": missingEx}), 400, "ExecutionDoesNotExist", "Execution Does Not Exist: '" + missingEx + "'"},
		{"history of unknown execution", "GetExecutionHistory", js(map[string]any{"executionArn": missingEx}), 400, "ExecutionDoesNotExist", ""},
		{"bad input JSON", "StartExecution", js(map[string]any{"stateMachineArn": sm, "input": "{nope"}), 400, "InvalidExecutionInput", "Invalid State Machine Execution Input: '"},
		{"oversized input", "StartExecution", js(map[string]any{"stateMachineArn": sm, "input": big}), 400, "ValidationException", "262144"},
		{"oversized request", "StartExecution", js(map[string]any{"stateMachineArn": sm, "input": strings.Repeat(" ", 1<<20+10)}), 413, "ValidationException", ""},
		{"bad name", "StartExecution", js(map[string]any{"stateMachineArn": sm, "name": "a b"}), 400, "InvalidName", "Invalid Name: 'a b'"},
		{"closed name", "StartExecution", js(map[string]any{"stateMachineArn": sm, "name": "done", "input": "{}"}), 400, "ExecutionAlreadyExists", "Execution Already Exists: '" + closed + "'"},
		{"running name, other input", "StartExecution", js(map[string]any{"stateMachineArn": sm, "name": "run", "input": "{}"}), 400, "ExecutionAlreadyExists", ""},
		{"bad token", "SendTaskSuccess", `{"taskToken":"abc","output":"{}"}`, 400, "InvalidToken", "Invalid Token: 'Invalid token'"},
		{"unknown token", "SendTaskSuccess", js(map[string]any{"taskToken": "AQ" + strings.Repeat("A", 64), "output": "{}"}), 400, "TaskDoesNotExist", ""},
		{"used token", "SendTaskFailure", js(map[string]any{"taskToken": tokOf(t, f, closed)}), 400, "TaskTimedOut", ""},
		{"bad output", "SendTaskSuccess", js(map[string]any{"taskToken": tok, "output": "{x"}), 400, "InvalidOutput", "Invalid Output: '"},
		{"missing output", "SendTaskSuccess", js(map[string]any{"taskToken": tok}), 400, "ValidationException", "'output'"},
		{"long token", "SendTaskHeartbeat", js(map[string]any{"taskToken": strings.Repeat("A", 2049)}), 400, "ValidationException", "2048"},
		{"bad next token", "GetExecutionHistory", js(map[string]any{"executionArn": running, "nextToken": "zzz"}), 400, "InvalidToken", ""},
		{"too many results", "ListExecutions", js(map[string]any{"stateMachineArn": sm, "maxResults": 1001}), 400, "ValidationException", "maxResults"},
		{"bad definition", "CreateStateMachine", js(map[string]any{"name": "x", "definition": `{"StartAt":"Q","States":{}}`, "roleArn": role}), 400, "InvalidDefinition", "Invalid State Machine Definition: '"},
		{"sync on standard", "StartSyncExecution", js(map[string]any{"stateMachineArn": sm}), 400, "StateMachineTypeNotSupported", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, out := f.call(t, tc.op, tc.body)
			if status != tc.status || out["__type"] != tc.typ {
				t.Fatalf("got %d %v, want %d %s", status, out, tc.status, tc.typ)
			}
			if msg, _ := out["message"].(string); !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not contain %q", msg, tc.msg)
			}
		})
	}
	// The running execution is untouched by the bad requests.
	if d := f.ok(t, "DescribeExecution", map[string]any{"executionArn": running}); d["status"] != "RUNNING" {
		t.Errorf("running execution is %v", d["status"])
	}
}

// tokOf digs the token a finished execution's task was given out of its history.
func tokOf(t *testing.T, f *fixture, arn string) string {
	t.Helper()
	h := f.ok(t, "GetExecutionHistory", map[string]any{"executionArn": arn})
	for _, e := range h["events"].([]any) {
		ev := e.(map[string]any)
		if d, ok := ev["taskScheduledEventDetails"].(map[string]any); ok {
			var p struct {
				Payload struct {
					Token string `json:"token"`
				} `json:"Payload"`
			}
			if err := json.Unmarshal([]byte(d["parameters"].(string)), &p); err != nil {
				t.Fatal(err)
			}
			return p.Payload.Token
		}
	}
	t.Fatal("no TaskScheduled event")
	return ""
}

func TestStartIdempotentAndPaging(t *testing.T) {
	f := setup(t)
	sm := f.machine(t, "idem", waitDef, "STANDARD")
	first := f.ok(t, "StartExecution", map[string]any{"stateMachineArn": sm, "name": "n1", "input": `{"k":1}`})
	tok := <-f.tokens
	again := f.ok(t, "StartExecution", map[string]any{"stateMachineArn": sm, "name": "n1", "input": `{"k":1}`})
	if first["executionArn"] != again["executionArn"] || first["startDate"] != again["startDate"] {
		t.Errorf("same name and input while running: %v then %v", first, again)
	}
	f.ok(t, "SendTaskSuccess", map[string]any{"taskToken": tok, "output": `{"r":2}`})
	arn := first["executionArn"].(string)
	d := f.waitStatus(t, arn, "SUCCEEDED")
	if d["output"] != `{"r":2}` {
		t.Errorf("output = %v", d["output"])
	}
	// History, forwards and backwards, in pages of 2, equals the whole.
	whole := f.ok(t, "GetExecutionHistory", map[string]any{"executionArn": arn})["events"].([]any)
	for _, rev := range []bool{false, true} {
		var got []any
		next := ""
		for {
			req := map[string]any{"executionArn": arn, "maxResults": 2, "reverseOrder": rev}
			if next != "" {
				req["nextToken"] = next
			}
			out := f.ok(t, "GetExecutionHistory", req)
			got = append(got, out["events"].([]any)...)
			n, _ := out["nextToken"].(string)
			if n == "" {
				break
			}
			next = n
		}
		if len(got) != len(whole) || len(whole) < 5 {
			t.Fatalf("reverse=%v: %d events in pages, %d whole", rev, len(got), len(whole))
		}
		first := got[0].(map[string]any)["type"]
		if want := map[bool]string{false: "ExecutionStarted", true: "ExecutionSucceeded"}[rev]; first != want {
			t.Errorf("reverse=%v: first event %v, want %s", rev, first, want)
		}
	}
	// ListExecutions: newest first, filtered by status.
	f.ok(t, "StartExecution", map[string]any{"stateMachineArn": sm, "name": "n2"})
	<-f.tokens
	list := f.ok(t, "ListExecutions", map[string]any{"stateMachineArn": sm})["executions"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["name"] != "n2" {
		t.Errorf("ListExecutions = %v", list)
	}
	running := f.ok(t, "ListExecutions", map[string]any{"stateMachineArn": sm, "statusFilter": "RUNNING"})["executions"].([]any)
	if len(running) != 1 {
		t.Errorf("RUNNING filter gave %d", len(running))
	}
	stop := f.ok(t, "StopExecution", map[string]any{"executionArn": running[0].(map[string]any)["executionArn"], "error": "E", "cause": "C"})
	if _, ok := stop["stopDate"].(float64); !ok {
		t.Errorf("stopDate = %v", stop["stopDate"])
	}
}

func TestSyncExpressAndValidate(t *testing.T) {
	f := setup(t)
	sm := f.machine(t, "fast", passDef, "EXPRESS")
	out := f.ok(t, "StartSyncExecution", map[string]any{"stateMachineArn": sm, "input": `{"x":[1,2]}`})
	if out["status"] != "SUCCEEDED" || out["output"] != `{"x":[1,2]}` {
		t.Errorf("StartSyncExecution = %v", out)
	}
	v := f.ok(t, "ValidateStateMachineDefinition", map[string]any{"definition": `{"StartAt":"A","States":{"A":{"Type":"Nope","End":true}}}`})
	if v["result"] != "FAIL" || len(v["diagnostics"].([]any)) == 0 {
		t.Errorf("Validate = %v", v)
	}
	if v := f.ok(t, "ValidateStateMachineDefinition", map[string]any{"definition": passDef}); v["result"] != "OK" {
		t.Errorf("Validate(ok) = %v", v)
	}
	// The same create again is idempotent; another definition under the name clashes.
	f.machine(t, "fast", passDef, "EXPRESS")
	status, e := f.call(t, "CreateStateMachine", fmt.Sprintf(`{"name":"fast","definition":%q,"roleArn":%q,"type":"EXPRESS"}`, otherDef, role))
	if status != 400 || e["__type"] != "StateMachineAlreadyExists" {
		t.Errorf("clash = %d %v", status, e)
	}
	// An Express machine cannot wait for a token, created or updated.
	status, e = f.call(t, "CreateStateMachine", fmt.Sprintf(`{"name":"slow","definition":%q,"roleArn":%q,"type":"EXPRESS"}`, waitDef, role))
	if status != 400 || e["__type"] != "InvalidDefinition" || !strings.Contains(fmt.Sprint(e["message"]), ".waitForTaskToken") {
		t.Errorf("Express with a token wait = %d %v", status, e)
	}
	status, e = f.call(t, "UpdateStateMachine", fmt.Sprintf(`{"stateMachineArn":%q,"definition":%q}`, sm, waitDef))
	if status != 400 || e["__type"] != "InvalidDefinition" {
		t.Errorf("Express updated to a token wait = %d %v", status, e)
	}
	upd := f.ok(t, "UpdateStateMachine", map[string]any{"stateMachineArn": sm, "definition": otherDef})
	if upd["updateDate"] == nil {
		t.Errorf("UpdateStateMachine = %v", upd)
	}
	if d := f.ok(t, "DescribeStateMachine", map[string]any{"stateMachineArn": sm}); d["definition"] != otherDef {
		t.Errorf("definition after update = %v", d["definition"])
	}
	f.ok(t, "DeleteStateMachine", map[string]any{"stateMachineArn": sm})
	if status, e := f.call(t, "DescribeStateMachine", fmt.Sprintf(`{"stateMachineArn":%q}`, sm)); status != 400 || e["__type"] != "StateMachineDoesNotExist" {
		t.Errorf("after delete: %d %v", status, e)
	}
}

// After a restart, a running execution goes on with the definition it started with, even when
// its state machine was updated meanwhile, and its pre-restart token still works.
func TestRestartKeepsDefinitionAndToken(t *testing.T) {
	st := openStore(t)
	f1 := serve(t, st)
	sm := f1.machine(t, "upd", waitDef, "STANDARD")
	arn := f1.ok(t, "StartExecution", map[string]any{"stateMachineArn": sm, "name": "r1", "input": `{"in":1}`})["executionArn"].(string)
	tok := <-f1.tokens
	f1.ok(t, "UpdateStateMachine", map[string]any{"stateMachineArn": sm, "definition": passDef})

	f2 := serve(t, st) // the restart: a new engine and service over the same store
	if d := f2.ok(t, "DescribeExecution", map[string]any{"executionArn": arn}); d["status"] != "RUNNING" {
		t.Fatalf("after restart: %v", d)
	}
	f2.ok(t, "SendTaskSuccess", map[string]any{"taskToken": tok, "output": `{"via":"old token"}`})
	d := f2.waitStatus(t, arn, "SUCCEEDED")
	select {
	case <-f2.tokens:
		t.Fatal("the callback task's invocation ran again after the restart; the journal should answer it")
	default:
	}
	if d["output"] != `{"via":"old token"}` {
		t.Errorf("output = %v (the old definition's callback task should have produced it)", d["output"])
	}
	if d := f2.ok(t, "DescribeStateMachine", map[string]any{"stateMachineArn": sm}); d["definition"] != passDef {
		t.Errorf("the update was lost: %v", d["definition"])
	}
}
