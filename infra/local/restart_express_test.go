package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// An asynchronous Express execution: a Wait, then one call with a side effect outside local mode.
const expressAsyncDef = `{"StartAt":"Hold","States":{"Hold":{"Type":"Wait","Seconds":2,"Next":"Call"},
  "Call":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
    "Parameters":{"FunctionName":"sinew-test-post","Payload":{"id.$":"$.id","url.$":"$.url","execution.$":"$$.Execution.Name"}},"End":true}}}`

// Killed with kill -9 while asynchronous Express executions wait before their call: AWS runs an
// accepted Express execution at least once, and so does local mode, whose starts are journaled
// before StartExecution answers: after the restart each one runs, under the ARN it was answered.
func TestRestartRunsAcceptedExpressExecutions(t *testing.T) {
	const n = 5
	fx := &sideEffects{count: map[string]int{}, by: map[string][]string{}}
	srv := httptest.NewServer(fx)
	defer srv.Close()

	dir := t.TempDir()
	p1 := startLocal(t, dir)
	ctx := context.Background()
	c := p1.sfn()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("express-async"), RoleArn: aws.String(role),
		Definition: aws.String(expressAsyncDef), Type: types.StateMachineTypeExpress})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		in, _ := json.Marshal(map[string]string{"id": string(rune('a' + i)), "url": srv.URL})
		if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(string(in))}); err != nil {
			t.Fatal(err)
		}
	}
	p1.kill9(t) // within the Wait: no call has run
	if got := fx.total(); got != 0 {
		t.Fatalf("%d calls ran before the kill, want none: the test proves nothing", got)
	}

	p2 := startLocal(t, dir)
	defer p2.stop(t)
	deadline := time.Now().Add(time.Minute)
	for fx.total() < n && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	for i := range n {
		if id := string(rune('a' + i)); fx.count[id] != 1 {
			t.Errorf("execution %s made its call %d times after the restart, want once", id, fx.count[id])
		}
	}
}
