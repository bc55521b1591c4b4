package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

const role = "arn:aws:iam::000000000000:role/test"

// callbackDef: Pass, Choice, then a .waitForTaskToken task whose Lambda records its payload (and
// token) in test-invocations.jsonl.
const callbackDef = `{"StartAt":"P","States":{
 "P":{"Type":"Pass","Result":{"a":1},"ResultPath":"$.p","Next":"W"},
 "W":{"Type":"Wait","Seconds":0,"Next":"C"},
 "C":{"Type":"Choice","Choices":[{"Variable":"$.go","BooleanEquals":true,"Next":"T"}],"Default":"Done"},
 "T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
      "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id.$":"$$.Execution.Name","token.$":"$$.Task.Token"}},
      "ResultPath":"$.cb","Next":"Done"},
 "Done":{"Type":"Succeed"}}}`

func tokenFor(t *testing.T, dir, id string) string {
	t.Helper()
	var tok string
	eventually(t, "the task of "+id+" to run", func() bool {
		for _, v := range invocations(t, dir) {
			if v["id"] == id {
				tok, _ = v["token"].(string)
			}
		}
		return tok != ""
	})
	return tok
}

// The AWS CLI, pointed at local mode with --endpoint-url, runs a workflow end to end.
func TestCLI(t *testing.T) {
	dir := t.TempDir()
	p := startLocal(t, dir, "--in-memory")
	ep := p.Endpoints["stepfunctions"]
	defFile := filepath.Join(dir, "def.json")
	if err := os.WriteFile(defFile, []byte(callbackDef), 0o600); err != nil {
		t.Fatal(err)
	}
	sm := awsJSON(t, p, ep, "stepfunctions", "create-state-machine", "--name", "cli", "--definition", "file://"+defFile, "--role-arn", role)["stateMachineArn"].(string)

	start := awsJSON(t, p, ep, "stepfunctions", "start-execution", "--state-machine-arn", sm, "--name", "e1", "--input", `{"go":true}`)
	arn := start["executionArn"].(string)
	if arn != "arn:aws:states:us-east-1:000000000000:execution:cli:e1" {
		t.Errorf("executionArn = %s", arn)
	}
	tok := tokenFor(t, dir, "e1")
	// Same name and input while it runs: the same execution.
	if again := awsJSON(t, p, ep, "stepfunctions", "start-execution", "--state-machine-arn", sm, "--name", "e1", "--input", `{"go":true}`); again["executionArn"] != arn {
		t.Errorf("repeat start gave %v", again)
	}
	// Other input: ExecutionAlreadyExists, as AWS.
	if _, errOut, err := awsCLI(t, p, ep, "stepfunctions", "start-execution", "--state-machine-arn", sm, "--name", "e1", "--input", `{"go":false}`); err == nil ||
		!strings.Contains(errOut, "(ExecutionAlreadyExists)") || !strings.Contains(errOut, "Execution Already Exists: '"+arn+"'") {
		t.Errorf("start with other input: %v %s", err, errOut)
	}
	if d := awsJSON(t, p, ep, "stepfunctions", "describe-execution", "--execution-arn", arn); d["status"] != "RUNNING" {
		t.Errorf("status before the answer = %v", d["status"])
	}
	awsJSON(t, p, ep, "stepfunctions", "send-task-success", "--task-token", tok, "--task-output", `{"ok":1}`)
	var d map[string]any
	eventually(t, "e1 to succeed", func() bool {
		d = awsJSON(t, p, ep, "stepfunctions", "describe-execution", "--execution-arn", arn)
		return d["status"] != "RUNNING"
	})
	if d["status"] != "SUCCEEDED" {
		t.Fatalf("describe-execution = %v", d)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(d["output"].(string)), &out); err != nil || out["go"] != true || out["cb"].(map[string]any)["ok"] != float64(1) || out["p"] == nil {
		t.Errorf("output = %v (%v)", d["output"], err)
	}
	// Timestamps travel as epoch seconds (awsCLI has the CLI print them as they travel).
	if sd, ok := d["startDate"].(float64); !ok || sd < 1.7e9 {
		t.Errorf("startDate = %v, want epoch seconds", d["startDate"])
	}

	h := awsJSON(t, p, ep, "stepfunctions", "get-execution-history", "--execution-arn", arn, "--reverse-order", "--max-items", "2")
	evs := h["events"].([]any)
	if len(evs) != 2 || evs[0].(map[string]any)["type"] != "ExecutionSucceeded" || h["NextToken"] == nil {
		t.Errorf("reverse history page = %v", h)
	}
	all := awsJSON(t, p, ep, "stepfunctions", "get-execution-history", "--execution-arn", arn)["events"].([]any)
	var types []string
	for _, e := range all {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	for _, want := range []string{"ExecutionStarted", "PassStateEntered", "WaitStateExited", "ChoiceStateEntered", "TaskScheduled", "TaskSubmitted", "TaskSucceeded", "ExecutionSucceeded"} {
		if !strings.Contains(strings.Join(types, ","), want) {
			t.Errorf("history lacks %s: %v", want, types)
		}
	}

	// A used token, a malformed one, a closed execution's name.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stepfunctions", "send-task-success", "--task-token", tok, "--task-output", "{}"}, "(TaskTimedOut)"},
		{[]string{"stepfunctions", "send-task-failure", "--task-token", "not-a-token"}, "(InvalidToken)"},
		{[]string{"stepfunctions", "start-execution", "--state-machine-arn", sm, "--name", "e1", "--input", `{"go":true}`}, "(ExecutionAlreadyExists)"},
		{[]string{"stepfunctions", "describe-execution", "--execution-arn", arn + "x"}, "(ExecutionDoesNotExist)"},
		{[]string{"stepfunctions", "describe-execution", "--execution-arn", "nope"}, "(InvalidArn)"},
	} {
		if _, errOut, err := awsCLI(t, p, ep, tc.args...); err == nil || !strings.Contains(errOut, tc.want) {
			t.Errorf("aws %s: %v %q, want %s", strings.Join(tc.args, " "), err, errOut, tc.want)
		}
	}

	list := awsJSON(t, p, ep, "stepfunctions", "list-executions", "--state-machine-arn", sm)["executions"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["status"] != "SUCCEEDED" {
		t.Errorf("list-executions = %v", list)
	}
	sms := awsJSON(t, p, ep, "stepfunctions", "list-state-machines")["stateMachines"].([]any)
	var names []string
	for _, m := range sms {
		names = append(names, m.(map[string]any)["name"].(string))
	}
	if !strings.Contains(strings.Join(names, ","), "tool_call") || !strings.Contains(strings.Join(names, ","), "cli") {
		t.Errorf("list-state-machines = %v (statemachines/ are loaded at start)", names)
	}

	// The Lambda Invoke API and DynamoDB Local, through the same CLI.
	outFile := filepath.Join(dir, "out.json")
	inv := awsJSON(t, p, p.Endpoints["lambda"], "lambda", "invoke", "--function-name", "sinew-test-echo", "--payload", `{"hello":"world"}`, outFile)
	if inv["StatusCode"] != float64(200) {
		t.Errorf("lambda invoke = %v", inv)
	}
	if data, _ := os.ReadFile(outFile); string(data) != `{"hello":"world"}` {
		t.Errorf("lambda invoke payload = %s", data)
	}
	tables := awsJSON(t, p, p.Endpoints["aws"], "dynamodb", "list-tables")["TableNames"].([]any)
	if len(tables) == 0 || !strings.Contains(strings.Join(anyStrings(tables), ","), tableName) {
		t.Errorf("dynamodb list-tables = %v", tables)
	}

	// KMS (the key file under the local directory) and PutEvents, through the same CLI.
	// A blob argument's text goes as the bytes (awsCLI has v2 do as v1); fileb:// sends a file's bytes.
	enc := awsJSON(t, p, p.Endpoints["kms"], "kms", "encrypt", "--key-id", "alias/sinew-secrets", "--plaintext", "hello")
	blob, err := base64.StdEncoding.DecodeString(enc["CiphertextBlob"].(string))
	if err != nil {
		t.Fatal(err)
	}
	blobFile := filepath.Join(dir, "blob")
	if err := os.WriteFile(blobFile, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	dec := awsJSON(t, p, p.Endpoints["kms"], "kms", "decrypt", "--ciphertext-blob", "fileb://"+blobFile)
	if plain, _ := base64.StdEncoding.DecodeString(dec["Plaintext"].(string)); string(plain) != "hello" {
		t.Errorf("kms decrypt = %v", dec)
	}
	if dk := awsJSON(t, p, p.Endpoints["kms"], "kms", "generate-data-key", "--key-id", "alias/sinew-secrets", "--key-spec", "AES_256"); dk["Plaintext"] == nil || dk["CiphertextBlob"] == nil {
		t.Errorf("kms generate-data-key = %v", dk)
	}
	put := awsJSON(t, p, p.Endpoints["events"], "events", "put-events", "--entries", `[{"Source":"test.cli","DetailType":"Hello","Detail":"{\"a\":1}"}]`)
	if put["FailedEntryCount"] != float64(0) {
		t.Errorf("put-events = %v", put)
	}

	// The status changes went to the EventBridge feed, shaped as EventBridge delivers them.
	eventually(t, "the SUCCEEDED status change in the feed", func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
		for _, line := range splitLines(data) {
			var e struct {
				Source     string         `json:"source"`
				DetailType string         `json:"detail-type"`
				Resources  []string       `json:"resources"`
				Detail     map[string]any `json:"detail"`
			}
			if json.Unmarshal(line, &e) == nil && e.Source == "aws.states" && e.DetailType == "Step Functions Execution Status Change" &&
				e.Detail["status"] == "SUCCEEDED" && e.Detail["executionArn"] == arn && len(e.Resources) == 1 && e.Detail["stopDate"] != nil {
				return true
			}
		}
		return false
	})
	p.stop(t)
}

func anyStrings(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i], _ = x.(string)
	}
	return out
}

// aws-sdk-go-v2 clients work against local mode with only an endpoint override (and, for
// StartSyncExecution, the sync- host prefix disabled).
func TestSDK(t *testing.T) {
	dir := t.TempDir()
	p := startLocal(t, dir, "--in-memory")
	ctx := context.Background()
	c := p.sfn()
	express, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("fast"), RoleArn: aws.String(role),
		Type: types.StateMachineTypeExpress, Definition: aws.String(`{"StartAt":"E","States":{"E":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
		"Parameters":{"FunctionName":"sinew-test-echo","Payload.$":"$"},"OutputPath":"$.Payload","End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: express.StateMachineArn, Input: aws.String(`{"n":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != types.SyncExecutionStatusSucceeded || aws.ToString(res.Output) != `{"n":7}` || res.StopDate == nil {
		t.Errorf("StartSyncExecution = %s %s", res.Status, aws.ToString(res.Output))
	}

	std, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("std"), RoleArn: aws.String(role), Definition: aws.String(callbackDef)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: std.StateMachineArn, Name: aws.String("s1"), Input: aws.String(`{"go":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	tok := tokenFor(t, dir, "s1")
	if _, err := c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(tok)}); err != nil {
		t.Errorf("SendTaskHeartbeat: %v", err)
	}
	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String("{not json")})
	var badOut *types.InvalidOutput
	if !errors.As(err, &badOut) {
		t.Errorf("SendTaskSuccess(bad output) = %v, want InvalidOutput", err)
	}
	if _, err := c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(tok), Error: aws.String("Client.Refused"), Cause: aws.String("no")}); err != nil {
		t.Fatal(err)
	}
	var d *sfn.DescribeExecutionOutput
	eventually(t, "s1 to end", func() bool {
		d, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: st.ExecutionArn})
		return err == nil && d.Status != types.ExecutionStatusRunning
	})
	if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "Client.Refused" || aws.ToString(d.Cause) != "no" {
		t.Errorf("after SendTaskFailure: %s %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String("{}")})
	var gone *types.TaskTimedOut
	if !errors.As(err, &gone) {
		t.Errorf("reused token: %v, want TaskTimedOut (AWS's answer to a used token)", err)
	}

	// History through the SDK's paginator, in pages of 3, forwards.
	pg := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: st.ExecutionArn, MaxResults: 3})
	var ids []int64
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			ids = append(ids, e.Id)
		}
	}
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("history ids = %v, want 1..n in order", ids)
		}
	}
	if len(ids) < 8 {
		t.Errorf("only %d events", len(ids))
	}

	_, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(aws.ToString(st.ExecutionArn) + "-missing")})
	var noExec *types.ExecutionDoesNotExist
	if !errors.As(err, &noExec) {
		t.Errorf("unknown execution: %v", err)
	}
	_, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(strings.Replace(aws.ToString(std.StateMachineArn), ":std", ":nope", 1))})
	var noSM *types.StateMachineDoesNotExist
	if !errors.As(err, &noSM) {
		t.Errorf("unknown state machine: %v", err)
	}

	// The Lambda SDK against the Invoke API.
	lc := lambda.New(lambda.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.Endpoints["lambda"]),
		Credentials: p.Credentials()})
	lo, err := lc.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("sinew-test-echo"), Payload: []byte(`[1,2]`)})
	if err != nil || string(lo.Payload) != `[1,2]` {
		t.Errorf("lambda Invoke = %v %v", lo, err)
	}

	// The HTTP API behind local JWTs: `token` prints one the API accepts.
	out, err := exec.Command(binPath, "token", "--dir", dir, "dev-1").Output()
	if err != nil {
		t.Fatal(err)
	}
	jwt := strings.TrimSpace(string(out))
	req, _ := http.NewRequest(http.MethodGet, p.Endpoints["http"]+"/healthz", nil)
	req.Header.Set("Authorization", "Bearer "+jwt)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz with a local token: %d", resp.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodGet, p.Endpoints["http"]+"/healthz", nil)
	req.Header.Set("Authorization", "Bearer "+jwt+"x")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /healthz with a forged token: %d, want 401", resp.StatusCode)
	}
	p.stop(t)
}
