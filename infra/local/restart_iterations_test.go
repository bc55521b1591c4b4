package main

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// An inline Map whose iterations each record a call, wait their item's seconds, then (item "cb")
// wait on a token, and record a second call; and a Parallel with one branch that finishes at once
// and one that waits 4 s. Killed with item "a" and the first branch finished, item "b" and the
// second branch in their 4 s Waits, and item "cb" on its token.
var iterationMachines = map[string]string{
	"imap": `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","End":true,
	  "ItemProcessor":{"StartAt":"Rec","States":{
	    "Rec":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultPath":null,"Next":"W",
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id.$":"States.Format('imap-{}', $.v)"}}},
	    "W":{"Type":"Wait","SecondsPath":"$.s","Next":"Which"},
	    "Which":{"Type":"Choice","Choices":[{"Variable":"$.v","StringEquals":"cb","Next":"Cb"}],"Default":"After"},
	    "Cb":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","ResultPath":null,"Next":"After",
	          "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"imap-cb-token","token.$":"$$.Task.Token"}}},
	    "After":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultSelector":{"v.$":"$.Payload.v"},"End":true,
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id.$":"States.Format('imap-after-{}', $.v)","v.$":"$.v"}}}}}}}}`,
	"ipar": `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
	  {"StartAt":"Now","States":{"Now":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultSelector":{"b":"now"},"End":true,
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"ipar-now"}}}}},
	  {"StartAt":"Rec","States":{
	    "Rec":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultPath":null,"Next":"W",
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"ipar-rec"}}},
	    "W":{"Type":"Wait","Seconds":4,"Next":"After"},
	    "After":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultSelector":{"b":"after"},"End":true,
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"ipar-after"}}}}}]}}}`,
	// Started after the restart: its 3 s wait is the yardstick the resumed waits are ordered by.
	"marker": `{"StartAt":"W","States":{
	  "W":{"Type":"Wait","Seconds":3,"Next":"After"},
	  "After":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultSelector":{"ok":true},"End":true,
	           "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id":"marker-after"}}}}}`,
}

// Killed with kill -9 while Map iterations and Parallel branches have finished, wait in a Wait
// state, or wait on a token: after the restart a finished iteration or branch makes none of its
// calls again, a waiting one resumes at its deadline (before a 3 s marker started at the restart),
// and the pre-crash token completes its iteration.
func TestRestartKeepsMapAndParallelIterations(t *testing.T) {
	dir := t.TempDir()
	p1 := startLocal(t, dir)
	ctx := context.Background()
	c := p1.sfn()
	arns := map[string]string{}
	for name, def := range iterationMachines {
		sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), RoleArn: aws.String(role), Definition: aws.String(def)})
		if err != nil {
			t.Fatal(name, err)
		}
		arns[name] = aws.ToString(sm.StateMachineArn)
	}
	inputs := map[string]string{"imap": `{"items":[{"v":"a","s":0},{"v":"b","s":4},{"v":"cb","s":0}]}`, "ipar": `{}`}
	execs := map[string]string{}
	for _, name := range []string{"imap", "ipar"} {
		x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arns[name]), Name: aws.String("x"), Input: aws.String(inputs[name])})
		if err != nil {
			t.Fatal(name, err)
		}
		execs[name] = aws.ToString(x.ExecutionArn)
	}
	finished := []string{"imap-a", "imap-after-a", "imap-b", "imap-cb", "ipar-now", "ipar-rec"}
	eventually(t, "the finished iterations and branches to run and the others to wait", func() bool {
		for _, id := range append(finished, "imap-cb-token") {
			if countCalls(t, dir, id) != 1 {
				return false
			}
		}
		return true
	})
	tok := tokenFor(t, dir, "imap-cb-token")
	// The journal records a call as the function returns, just after the function wrote its line.
	time.Sleep(500 * time.Millisecond)
	p1.kill9(t)
	// The 4 s deadlines pass while the process is down.
	time.Sleep(4 * time.Second)

	p2 := startLocal(t, dir)
	defer p2.stop(t)
	c = p2.sfn()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("local mode's log after the restart:\n%s", p2.Stderr.String())
		}
	})
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arns["marker"]), Name: aws.String("m")}); err != nil {
		t.Fatal(err)
	}
	answerReplayed(t, c, tok)
	want := map[string]string{"imap": `[{"v":"a"},{"v":"b"},{"v":"cb"}]`, "ipar": `[{"b":"now"},{"b":"after"}]`}
	for name, arn := range execs {
		if d := waitEnd(t, c, arn); d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != want[name] {
			t.Errorf("%s: %s %s %s %s, want SUCCEEDED with %s", name, d.Status, aws.ToString(d.Output), aws.ToString(d.Error), aws.ToString(d.Cause), want[name])
		}
	}
	for _, id := range append(finished, "imap-cb-token", "imap-after-b", "imap-after-cb", "ipar-after") {
		if n := countCalls(t, dir, id); n != 1 {
			t.Errorf("%s ran %d times, want 1", id, n)
		}
	}
	if d := waitEnd(t, c, p2execArn(arns["marker"], "m")); d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("marker: %s", d.Status)
	}
	markerAt := callTime(t, dir, "marker-after")
	for _, id := range []string{"imap-after-b", "ipar-after"} {
		if at := callTime(t, dir, id); at >= markerAt {
			t.Errorf("%s ran after the 3 s marker started at the restart: its 4 s wait started over (%d ms vs %d ms)", id, at, markerAt)
		}
	}
}
