package sfnapi

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// DescribeStateMachineForExecution through the SDK answers the definition each execution started
// with, whatever the machine became later, before and after a restart, running or ended; an
// unknown or Express execution is refused as AWS refuses it.
func TestDescribeStateMachineForExecution(t *testing.T) {
	st := openStore(t)
	f := serve(t, st)
	c, ctx := f.sdk(), context.Background()
	const myRole = "arn:aws:iam::000000000000:role/first"
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("versions"), Definition: aws.String(waitDef), RoleArn: aws.String(myRole)})
	if err != nil {
		t.Fatal(err)
	}
	start := func(c *sfn.Client, name string) string {
		x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		return *x.ExecutionArn
	}
	ended, running := start(c, "ended"), start(c, "running")
	tok := <-f.tokens
	<-f.tokens
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: sm.StateMachineArn, Definition: aws.String(passDef)}); err != nil {
		t.Fatal(err)
	}
	after := start(c, "after")
	for _, arn := range []string{ended, after} {
		f.waitStatus(t, arn, "SUCCEEDED")
	}
	want := map[string]struct{ def, rev string }{ended: {waitDef, "1"}, running: {waitDef, "1"}, after: {passDef, "2"}}
	check := func(c *sfn.Client, when string) {
		t.Helper()
		for arn, w := range want {
			d, err := c.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: aws.String(arn)})
			if err != nil {
				t.Fatalf("%s: %s: %v", when, arn, err)
			}
			if aws.ToString(d.Definition) != w.def || aws.ToString(d.RevisionId) != w.rev || aws.ToString(d.StateMachineArn) != *sm.StateMachineArn ||
				aws.ToString(d.Name) != "versions" || aws.ToString(d.RoleArn) != myRole || d.UpdateDate == nil || d.LoggingConfiguration == nil || d.TracingConfiguration == nil {
				t.Errorf("%s: %s: definition %s revision %s machine %s name %s role %s", when, arn, aws.ToString(d.Definition),
					aws.ToString(d.RevisionId), aws.ToString(d.StateMachineArn), aws.ToString(d.Name), aws.ToString(d.RoleArn))
			}
			if w.rev == "1" && !d.UpdateDate.Equal(sm.CreationDate.Truncate(time.Millisecond)) {
				t.Errorf("%s: %s: updateDate %v, want the creation date %v", when, arn, d.UpdateDate, sm.CreationDate)
			}
		}
	}
	check(c, "before the restart")
	f2 := serve(t, st) // the restart: closed records keep a ref to their definition, stored once
	check(f2.sdk(), "after the restart")

	var ae interface{ ErrorCode() string }
	for arn, code := range map[string]string{
		*sm.StateMachineArn + "x": "InvalidArn",
		"arn:aws:states:us-east-1:000000000000:execution:versions:nope":     "ExecutionDoesNotExist",
		"arn:aws:states:us-east-1:000000000000:express:versions:n:1234abcd": "InvalidArn",
	} {
		_, err := f2.sdk().DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: aws.String(arn)})
		if !errors.As(err, &ae) || ae.ErrorCode() != code {
			t.Errorf("%s: %v, want %s", arn, err, code)
		}
	}
}
