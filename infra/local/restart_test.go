package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// Three state machines, each leaving an execution in one of the states a crash must not lose.
var restartMachines = map[string]string{
	// "first" completes before the crash; the callback task then waits on its token.
	"callback": `{"StartAt":"First","States":{
	  "First":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultPath":null,"Next":"Wait",
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id.$":"States.Format('{}-first', $$.Execution.Name)"}}},
	  "Wait":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","ResultPath":"$.cb","End":true,
	          "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id.$":"States.Format('{}-cb', $$.Execution.Name)","token.$":"$$.Task.Token"}}}}}`,
	// The first attempt fails; the execution sits in a 4 s back-off at the crash.
	"backoff": `{"StartAt":"Flaky","States":{
	  "Flaky":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultSelector":{"ok":true},"End":true,
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id.$":"States.Format('{}-flaky', $$.Execution.Name)","failTimes":1}},
	           "Retry":[{"ErrorEquals":["Test.Flaky"],"IntervalSeconds":4,"MaxAttempts":3}]}}}`,
	// The task is still running at the crash (its first call sleeps a minute).
	"slow": `{"StartAt":"Slow","States":{
	  "Slow":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultSelector":{"ok":true},"End":true,
	          "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id.$":"States.Format('{}-slow', $$.Execution.Name)","sleepOnceMs":60000}}}}}`,
}

// Killed with kill -9 while executions wait on a token, sit in a retry back-off and run a task,
// then restarted: every execution goes on, the token issued before the crash works, the running
// task runs again (at-least-once), and nothing else runs twice.
func TestRestartAfterKill9(t *testing.T) {
	dir := t.TempDir()
	p1 := startLocal(t, dir)
	ctx := context.Background()
	c := p1.sfn()
	arns := map[string]string{}
	starts := map[string]time.Time{}
	for name, def := range restartMachines {
		sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), RoleArn: aws.String(role), Definition: aws.String(def)})
		if err != nil {
			t.Fatal(name, err)
		}
		x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("x"), Input: aws.String(`{"k":"v"}`)})
		if err != nil {
			t.Fatal(name, err)
		}
		arns[name], starts[name] = aws.ToString(x.ExecutionArn), aws.ToTime(x.StartDate)
	}
	tok := tokenFor(t, dir, "x-cb")
	eventually(t, "the flaky attempt and the slow call to start", func() bool {
		return countCalls(t, dir, "x-flaky") == 1 && countCalls(t, dir, "x-slow") == 1
	})
	// The back-off's deadline is journaled right after the failure comes back; give the failure
	// time to travel back through the engine (the back-off is 4 s, so it is still pending).
	time.Sleep(500 * time.Millisecond)
	p1.kill9(t)

	p2 := startLocal(t, dir)
	c = p2.sfn()
	// The token from before the crash resumes its execution.
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"answer":42}`)}); err != nil {
		t.Fatalf("SendTaskSuccess with a pre-crash token: %v", err)
	}
	for name, arn := range arns {
		var d *sfn.DescribeExecutionOutput
		eventually(t, name+" to end", func() bool {
			var err error
			d, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
			return err == nil && d.Status != types.ExecutionStatusRunning
		})
		if d.Status != types.ExecutionStatusSucceeded {
			t.Errorf("%s: %s %s %s", name, d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
		}
		if !aws.ToTime(d.StartDate).Equal(starts[name]) {
			t.Errorf("%s: startDate %v after restart, %v before", name, aws.ToTime(d.StartDate), starts[name])
		}
		if name == "callback" {
			var out struct {
				K  string         `json:"k"`
				CB map[string]any `json:"cb"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(d.Output)), &out); err != nil || out.K != "v" || out.CB["answer"] != float64(42) {
				t.Errorf("callback output = %s", aws.ToString(d.Output))
			}
		}
	}
	for id, want := range map[string]int{
		"x-first": 1, // completed before the crash: not run again
		"x-cb":    1, // its invocation completed; only the token was awaited
		"x-flaky": 2, // the failed attempt (before) and the one retry (after), no more
		"x-slow":  2, // running at the crash: at-least-once
	} {
		if got := countCalls(t, dir, id); got != want {
			t.Errorf("%s ran %d times, want %d", id, got, want)
		}
	}
	// The back-off kept its deadline across the crash: the retry came no earlier than 4 s after the
	// failure. (How late it came is not asserted: that would be a wall-clock bound.)
	var flaky []float64
	for _, v := range invocations(t, dir) {
		if v["id"] == "x-flaky" {
			flaky = append(flaky, v["_at"].(float64))
		}
	}
	if len(flaky) == 2 && flaky[1]-flaky[0] < 4000 {
		t.Errorf("the retry came %v ms after the failure; the back-off is 4 s", flaky[1]-flaky[0])
	}
	// The old token is spent now, and says so.
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{}`)}); err == nil {
		t.Error("the pre-crash token worked twice")
	}
	// Everything is still listed after a clean restart, with its history.
	p2.stop(t)
	p3 := startLocal(t, dir)
	c = p3.sfn()
	h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arns["callback"]), ReverseOrder: true, MaxResults: 1})
	if err != nil || len(h.Events) != 1 || h.Events[0].Type != types.HistoryEventTypeExecutionSucceeded {
		t.Errorf("history after restart: %v %v", h, err)
	}
	p3.stop(t)
}
