package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// The state machines of TestRestartKeepsTimersTimesAndChildren, each leaving an execution in a
// state whose time or child a crash must not lose. Every record id is fixed, so the test can read
// when each call ran.
var restart2Machines = map[string]string{
	// A relative wait of 4 s, entered before the crash.
	"wait": `{"StartAt":"W","States":{
	  "W":{"Type":"Wait","SecondsPath":"$.s","Next":"After"},
	  "After":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultSelector":{"ok":true},"End":true,
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"wait-after"}}}}}`,
	// A token nobody answers, with a 4 s timeout armed before the crash.
	"timeout": `{"StartAt":"T","States":{
	  "T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","TimeoutSeconds":4,"End":true,
	       "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"timeout-cb","token.$":"$$.Task.Token"}}}}}`,
	// A failed attempt whose 4 s back-off starts before the crash.
	"backoff": `{"StartAt":"F","States":{
	  "F":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultSelector":{"ok":true},"End":true,
	       "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"backoff-flaky","failTimes":1}},
	       "Retry":[{"ErrorEquals":["Test.Flaky"],"IntervalSeconds":4,"MaxAttempts":2}]}}}`,
	// A call, then a token: its history so far must read the same after the restart.
	"history": `{"StartAt":"First","States":{
	  "First":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultPath":null,"Next":"Cb",
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"history-first"}}},
	  "Cb":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","ResultPath":"$.cb","End":true,
	        "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"history-cb","token.$":"$$.Task.Token"}}}}}`,
	// A child that waits on a token (the shape a tool_call with a function tool has).
	"child": `{"StartAt":"Cb","States":{
	  "Cb":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","End":true,
	        "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"child-cb","token.$":"$$.Task.Token"}}}}}`,
	// A parent that starts it as events/workflows/compute_args.asl.json starts tool_call.
	"parent": `{"StartAt":"Call","States":{
	  "Call":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","ResultSelector":{"result.$":"$.Output"},"OutputPath":"$.result","End":true,
	          "Parameters":{"StateMachineArn":"arn:aws:states:us-east-1:000000000000:stateMachine:child",
	                        "Input":{"k.$":"$.k","AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$":"$$.Execution.Id"}}}}}`,
	// Started after the restart: its 3 s wait is the yardstick the resumed timers are ordered by.
	"marker": `{"StartAt":"W","States":{
	  "W":{"Type":"Wait","Seconds":3,"Next":"After"},
	  "After":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultSelector":{"ok":true},"End":true,
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"marker-after"}}}}}`,
}

// Killed with kill -9 while executions sit in a relative Wait, wait on a token with a timeout,
// sit in a retry back-off, have a history, and wait on a child execution; restarted after their
// deadlines passed: each timer fires at its first deadline (at once; a timer re-armed in full
// would fire 4 s after the restart, after the 3 s marker started then), the history shows the
// times it showed before, and the parent finds its child, whose pre-crash token completes both.
func TestRestartKeepsTimersTimesAndChildren(t *testing.T) {
	dir := t.TempDir()
	p1 := startLocal(t, dir)
	ctx := context.Background()
	c := p1.sfn()
	arns := map[string]string{}
	for _, name := range []string{"wait", "timeout", "backoff", "history", "child", "parent", "marker"} {
		sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), RoleArn: aws.String(role), Definition: aws.String(restart2Machines[name])})
		if err != nil {
			t.Fatal(name, err)
		}
		arns[name] = aws.ToString(sm.StateMachineArn)
	}
	execs := map[string]string{}
	for _, name := range []string{"wait", "timeout", "backoff", "history", "parent"} {
		x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arns[name]), Name: aws.String("x"), Input: aws.String(`{"s":4,"k":"v"}`)})
		if err != nil {
			t.Fatal(name, err)
		}
		execs[name] = aws.ToString(x.ExecutionArn)
	}
	last := func(c *sfn.Client, arn string) types.HistoryEventType {
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), ReverseOrder: true, MaxResults: 1})
		if err != nil || len(h.Events) == 0 {
			return ""
		}
		return h.Events[0].Type
	}
	eventually(t, "every execution to reach its state", func() bool {
		return last(c, execs["wait"]) == types.HistoryEventTypeWaitStateEntered &&
			last(c, execs["timeout"]) == types.HistoryEventTypeTaskSubmitted &&
			last(c, execs["history"]) == types.HistoryEventTypeTaskSubmitted &&
			countCalls(t, dir, "backoff-flaky") == 1 && countCalls(t, dir, "child-cb") == 1
	})
	childTok := tokenFor(t, dir, "child-cb")
	var children []types.ExecutionListItem
	eventually(t, "the child to be listed", func() bool {
		l, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(arns["child"])})
		children = l.Executions
		return err == nil && len(children) == 1
	})
	childArn := aws.ToString(children[0].ExecutionArn)
	// The wait's deadline is journaled as it is entered and the back-off's as the failure comes
	// back; give both a moment to land (they are due in 4 s, so still pending).
	time.Sleep(500 * time.Millisecond)
	before, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(execs["history"])})
	if err != nil {
		t.Fatal(err)
	}
	p1.kill9(t)
	// Every deadline (4 s from at most now) passes while the process is down.
	time.Sleep(4 * time.Second)

	p2 := startLocal(t, dir)
	c = p2.sfn()
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arns["marker"]), Name: aws.String("m")}); err != nil {
		t.Fatal(err)
	}

	t.Run("history keeps its times", func(t *testing.T) {
		eventually(t, "the history execution to wait on its token again", func() bool {
			return last(c, execs["history"]) == types.HistoryEventTypeTaskSubmitted
		})
		after, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(execs["history"])})
		if err != nil {
			t.Fatal(err)
		}
		if len(after.Events) != len(before.Events) {
			t.Fatalf("%d events after the restart, %d before", len(after.Events), len(before.Events))
		}
		for i, b := range before.Events {
			a := after.Events[i]
			if a.Type != b.Type || !aws.ToTime(a.Timestamp).Equal(aws.ToTime(b.Timestamp)) {
				t.Errorf("event %d: %s at %v after the restart, %s at %v before", i+1, a.Type, aws.ToTime(a.Timestamp), b.Type, aws.ToTime(b.Timestamp))
			}
		}
	})

	t.Run("child is found again", func(t *testing.T) {
		if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(childTok), Output: aws.String(`{"answer":42}`)}); err != nil {
			t.Fatalf("SendTaskSuccess with the child's pre-crash token: %v", err)
		}
		for _, arn := range []string{execs["parent"], childArn} {
			d := waitEnd(t, c, arn)
			if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != `{"answer":42}` {
				t.Errorf("%s: %s %s %s %s", arn, d.Status, aws.ToString(d.Output), aws.ToString(d.Error), aws.ToString(d.Cause))
			}
		}
		d := waitEnd(t, c, childArn)
		if !strings.Contains(aws.ToString(d.Input), execs["parent"]) {
			t.Errorf("child input = %s", aws.ToString(d.Input))
		}
		l, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(arns["child"])})
		if err != nil || len(l.Executions) != 1 {
			t.Errorf("child executions after the restart: %+v %v (want the one started before)", l, err)
		}
		if n := countCalls(t, dir, "child-cb"); n != 1 {
			t.Errorf("the child's call ran %d times, want 1", n)
		}
	})

	marker := waitEnd(t, c, p2execArn(arns["marker"], "m"))
	if marker.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("marker: %s", marker.Status)
	}
	markerAt := callTime(t, dir, "marker-after")

	t.Run("wait keeps its deadline", func(t *testing.T) {
		if d := waitEnd(t, c, execs["wait"]); d.Status != types.ExecutionStatusSucceeded {
			t.Fatalf("wait: %s %s", d.Status, aws.ToString(d.Cause))
		}
		if at := callTime(t, dir, "wait-after"); at >= markerAt {
			t.Errorf("the wait ended after the 3 s marker started at the restart: it started over (%d ms vs %d ms)", at, markerAt)
		}
	})
	t.Run("task timeout keeps its deadline", func(t *testing.T) {
		d := waitEnd(t, c, execs["timeout"])
		if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "States.Timeout" {
			t.Fatalf("timeout: %s %s", d.Status, aws.ToString(d.Error))
		}
		if at := aws.ToTime(d.StopDate).UnixMilli(); at >= markerAt {
			t.Errorf("the task timed out after the 3 s marker started at the restart: it was re-armed in full (%d ms vs %d ms)", at, markerAt)
		}
		if n := countCalls(t, dir, "timeout-cb"); n != 1 {
			t.Errorf("the timed-out task's call ran %d times, want 1", n)
		}
	})
	t.Run("back-off keeps its deadline", func(t *testing.T) {
		if d := waitEnd(t, c, execs["backoff"]); d.Status != types.ExecutionStatusSucceeded {
			t.Fatalf("backoff: %s %s", d.Status, aws.ToString(d.Cause))
		}
		var at []int64
		for _, v := range invocations(t, dir) {
			if v["id"] == "backoff-flaky" {
				at = append(at, int64(v["_at"].(float64)))
			}
		}
		if len(at) != 2 {
			t.Fatalf("the flaky call ran %d times, want 2", len(at))
		}
		if at[1]-at[0] < 4000 || at[1] >= markerAt {
			t.Errorf("the retry came %d ms after the failure (back-off 4 s), at %d ms, the marker at %d ms", at[1]-at[0], at[1], markerAt)
		}
	})
	p2.stop(t)
}

func p2execArn(machineArn, name string) string {
	return strings.Replace(machineArn, ":stateMachine:", ":execution:", 1) + ":" + name
}

// waitEnd polls DescribeExecution until the execution has ended.
func waitEnd(t testing.TB, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	var d *sfn.DescribeExecutionOutput
	eventually(t, arn+" to end", func() bool {
		var err error
		d, err = c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		return err == nil && d.Status != types.ExecutionStatusRunning
	})
	return d
}

// callTime is when the recorded call id last ran (Unix ms, from the record function).
func callTime(t *testing.T, dir, id string) int64 {
	t.Helper()
	var at int64
	for _, v := range invocations(t, dir) {
		if v["id"] == id {
			n, _ := v["_at"].(float64)
			at = int64(n)
		}
	}
	if at == 0 {
		t.Fatalf("%s never ran", id)
	}
	return at
}
