package main

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// A distributed Map whose items each record one call that names the item's child execution (as a
// tool_call started from an item carries it); item "wait" then waits on a token, so the execution
// is still running, with three items finished, when local mode is killed.
const distributedMapDef = `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","End":true,
  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"Rec","States":{
    "Rec":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultPath":null,"Next":"Which",
           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id.$":"States.Format('dmap-{}', $.v)","execution.$":"$$.Execution.Id"}}},
    "Which":{"Type":"Choice","Choices":[{"Variable":"$.v","StringEquals":"wait","Next":"Cb"}],"Default":"Done"},
    "Cb":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","ResultPath":null,"Next":"Done",
          "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"dmap-cb","token.$":"$$.Task.Token"}}},
    "Done":{"Type":"Pass","End":true}}}}}}`

// Killed with kill -9 while a distributed Map has finished three items and waits on the fourth:
// after the restart the finished items' calls are not made again (their child executions are
// found in the journal under the same names), and the pre-crash token completes the Map.
func TestRestartKeepsDistributedMapItems(t *testing.T) {
	dir := t.TempDir()
	p1 := startLocal(t, dir)
	ctx := context.Background()
	c := p1.sfn()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("dmap"), RoleArn: aws.String(role), Definition: aws.String(distributedMapDef)})
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("x"),
		Input: aws.String(`{"items":[{"v":"a"},{"v":"b"},{"v":"c"},{"v":"wait"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	items := []string{"dmap-a", "dmap-b", "dmap-c", "dmap-wait"}
	eventually(t, "every item to record its call and the last to wait", func() bool {
		for _, id := range items {
			if countCalls(t, dir, id) != 1 {
				return false
			}
		}
		return countCalls(t, dir, "dmap-cb") == 1
	})
	tok := tokenFor(t, dir, "dmap-cb")
	// The journal records the token's call as the function returns, just after the function wrote
	// its invocation line; local mode lists no Map Run's children to poll, so give it a moment.
	time.Sleep(500 * time.Millisecond)
	p1.kill9(t)

	p2 := startLocal(t, dir)
	defer p2.stop(t)
	c = p2.sfn()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("local mode's log after the restart:\n%s", p2.Stderr.String())
		}
	})
	answerReplayed(t, c, tok)

	if d := waitEnd(t, c, aws.ToString(x.ExecutionArn)); d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution: %s %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	for _, id := range append(items, "dmap-cb") {
		if n := countCalls(t, dir, id); n != 1 {
			t.Errorf("%s ran %d times, want 1 (a finished item ran again after the restart)", id, n)
		}
	}
}

// answerReplayed answers a pre-crash token with SendTaskSuccess once the restarted local mode knows
// it: the replay reaches the waiting task in its own time, and until then the token is unknown.
func answerReplayed(t *testing.T, c *sfn.Client, tok string) {
	t.Helper()
	var lastErr error
	for i := 0; i < 600; i++ {
		if _, lastErr = c.SendTaskSuccess(context.Background(), &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{}`)}); lastErr == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("SendTaskSuccess with the pre-crash token: %v", lastErr)
}
