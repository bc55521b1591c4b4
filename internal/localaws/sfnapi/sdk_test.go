package sfnapi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// sdk is an AWS SDK for Go v2 Step Functions client of the fixture's endpoint.
func (f *fixture) sdk() *sfn.Client {
	return sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(f.url),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, NoHostPrefix)
}

func TestExecutionRoleArnIsTheMachines(t *testing.T) {
	f := setup(t)
	c, ctx := f.sdk(), context.Background()
	const myRole = "arn:aws:iam::000000000000:role/my-own-role"
	def := `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"role.$":"$$.Execution.RoleArn"},"End":true}}}`
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("roles"), Definition: aws.String(def), RoleArn: aws.String(myRole)})
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	d := f.waitStatus(t, *x.ExecutionArn, "SUCCEEDED")
	if d["output"] != `{"role":"`+myRole+`"}` {
		t.Fatalf("output %v, want the machine's role", d["output"])
	}
	h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(h.Events[0].ExecutionStartedEventDetails.RoleArn); got != myRole {
		t.Fatalf("ExecutionStarted roleArn %q, want %q", got, myRole)
	}
}

func TestAnsweredOrStoppedTokenTimedOut(t *testing.T) {
	f := setup(t)
	c, ctx := f.sdk(), context.Background()
	sm := f.machine(t, "tokens", waitDef, "STANDARD")
	start := func() (string, string) {
		x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		return *x.ExecutionArn, <-f.tokens
	}
	answered, tok := start()
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"ok":1}`)}); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(t, answered, "SUCCEEDED")
	stopped, tok2 := start()
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(stopped)}); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(t, stopped, "ABORTED")
	calls := map[string]func(string) error{
		"SendTaskSuccess": func(tk string) error {
			_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tk), Output: aws.String(`{}`)})
			return err
		},
		"SendTaskFailure": func(tk string) error {
			_, err := c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(tk), Error: aws.String("E")})
			return err
		},
		"SendTaskHeartbeat": func(tk string) error {
			_, err := c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(tk)})
			return err
		},
	}
	for op, call := range calls {
		for what, tk := range map[string]string{"answered": tok, "stopped execution's": tok2} {
			var tto *types.TaskTimedOut
			if err := call(tk); !errors.As(err, &tto) {
				t.Errorf("%s with an %s token: %v, want TaskTimedOut", op, what, err)
			}
		}
	}
	// A token never issued is still TaskDoesNotExist.
	var dne *types.TaskDoesNotExist
	if err := calls["SendTaskSuccess"]("AQ" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"); !errors.As(err, &dne) {
		t.Errorf("unknown token: %v, want TaskDoesNotExist", err)
	}
}

func TestHistoryWithoutExecutionData(t *testing.T) {
	f := setup(t)
	c, ctx := f.sdk(), context.Background()
	sm := f.machine(t, "data", waitDef, "STANDARD")
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{"secret":"s3cr3t"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(<-f.tokens), Output: aws.String(`{"answer":"s3cr3t"}`)}); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(t, *x.ExecutionArn, "SUCCEEDED")
	for _, include := range []bool{true, false} {
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn, IncludeExecutionData: aws.Bool(include)})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(h.Events)
		var sawData bool
		for _, e := range h.Events {
			for _, v := range []*string{detailInput(e), detailOutput(e)} {
				sawData = sawData || v != nil
			}
		}
		if sawData != include {
			t.Fatalf("includeExecutionData=%v: execution data shown %v in %s", include, sawData, data)
		}
		if ts := h.Events[1]; ts.StateEnteredEventDetails == nil || aws.ToString(ts.StateEnteredEventDetails.Name) != "T" {
			t.Fatalf("includeExecutionData=%v: the rest of the details must stay: %s", include, data)
		}
	}
}

// detailInput and detailOutput are an event's input and output (task parameters count as input).
func detailInput(e types.HistoryEvent) *string {
	switch {
	case e.ExecutionStartedEventDetails != nil:
		return e.ExecutionStartedEventDetails.Input
	case e.StateEnteredEventDetails != nil:
		return e.StateEnteredEventDetails.Input
	case e.TaskScheduledEventDetails != nil:
		if p := e.TaskScheduledEventDetails.Parameters; p != nil && *p != "" {
			return p
		}
	}
	return nil
}

func detailOutput(e types.HistoryEvent) *string {
	switch {
	case e.ExecutionSucceededEventDetails != nil:
		return e.ExecutionSucceededEventDetails.Output
	case e.StateExitedEventDetails != nil:
		return e.StateExitedEventDetails.Output
	case e.TaskSucceededEventDetails != nil:
		return e.TaskSucceededEventDetails.Output
	case e.TaskSubmittedEventDetails != nil:
		return e.TaskSubmittedEventDetails.Output
	}
	return nil
}

// Express executions as AWS runs them, through the SDK: StartSyncExecution answers the end with
// billing details under an express: ARN, a name may be used again, and neither DescribeExecution
// nor GetExecutionHistory knows an Express execution; a Standard machine refuses a synchronous start.
func TestExpressSemanticsThroughTheSDK(t *testing.T) {
	f := setup(t)
	c, ctx := f.sdk(), context.Background()
	sm := f.machine(t, "quick", `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"n.$":"$.n","name.$":"$$.Execution.Name"},"End":true}}}`, "EXPRESS")
	var arns []string
	for range 2 {
		out, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(sm), Name: aws.String("again"), Input: aws.String(`{"n":12345}`)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != types.SyncExecutionStatusSucceeded || aws.ToString(out.Output) != `{"n":12345,"name":"again"}` {
			t.Fatalf("StartSyncExecution = %s %q", out.Status, aws.ToString(out.Output))
		}
		if out.BillingDetails == nil || out.BillingDetails.BilledMemoryUsedInMB != 64 || out.BillingDetails.BilledDurationInMilliseconds < 100 ||
			out.BillingDetails.BilledDurationInMilliseconds%100 != 0 {
			t.Fatalf("billingDetails = %+v, want 64 MB and a duration in 100 ms steps", out.BillingDetails)
		}
		if out.StartDate == nil || out.StopDate == nil || out.StopDate.Before(*out.StartDate) {
			t.Fatalf("dates %v .. %v", out.StartDate, out.StopDate)
		}
		arns = append(arns, aws.ToString(out.ExecutionArn))
	}
	if arns[0] == arns[1] || !strings.HasPrefix(arns[0], "arn:aws:states:us-east-1:000000000000:express:quick:again:") {
		t.Fatalf("Express ARNs %v: want express:quick:again:<id>, one per start", arns)
	}
	var ae interface{ ErrorCode() string }
	if _, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arns[0])}); !errors.As(err, &ae) || ae.ErrorCode() != "InvalidArn" {
		t.Fatalf("DescribeExecution of an Express execution: %v, want InvalidArn", err)
	}
	if _, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arns[0])}); !errors.As(err, &ae) || ae.ErrorCode() != "InvalidArn" {
		t.Fatalf("GetExecutionHistory of an Express execution: %v, want InvalidArn", err)
	}
	// An asynchronous start answers at once with an express ARN.
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{"n":1}`)})
	if err != nil || !strings.Contains(aws.ToString(x.ExecutionArn), ":express:quick:") {
		t.Fatalf("StartExecution of an Express machine: %v %v", x, err)
	}
	std := f.machine(t, "standard", passDef, "STANDARD")
	if _, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(std)}); !errors.As(err, &ae) || ae.ErrorCode() != "StateMachineTypeNotSupported" {
		t.Fatalf("StartSyncExecution of a Standard machine: %v", err)
	}
	// A failure is still a 200: the status says it.
	fail := f.machine(t, "failing", `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"E","Cause":"C"}}}`, "EXPRESS")
	out, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(fail)})
	if err != nil || out.Status != types.SyncExecutionStatusFailed || aws.ToString(out.Error) != "E" || aws.ToString(out.Cause) != "C" || out.Output != nil {
		t.Fatalf("failing StartSyncExecution = %+v, %v", out, err)
	}
}
