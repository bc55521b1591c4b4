package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// A tool call as a user's state machine fans them out: a DISTRIBUTED Map whose every item starts a
// child execution with states:startExecution.sync:2 and no Name; the child makes one call with a
// side effect outside local mode (a POST to the test's loopback server, which counts them).
const (
	fanoutCallDef = `{"StartAt":"Call","States":{"Call":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
  "Parameters":{"FunctionName":"sinew-test-post","Payload":{"id.$":"$.id","url.$":"$.url","sleepMs":150,"execution.$":"$$.Execution.Name"}},
  "ResultSelector":{"id.$":"$.Payload.id"},"End":true}}}`
	fanoutDef = `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.calls","MaxConcurrency":12,"End":true,
  "ItemSelector":{"id.$":"$$.Map.Item.Value.id","url.$":"$.url","started.$":"$$.Execution.StartTime","entered.$":"$$.State.EnteredTime"},
  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"Run","States":{
    "Run":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","OutputPath":"$.Output","End":true,
      "Parameters":{"StateMachineArn":"%s","Input":{"id.$":"$.id","url.$":"$.url","at.$":"$$.State.EnteredTime","AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$":"$$.Execution.Id"}}}}}}}}`
)

// sideEffects counts the POSTs of sinew-test-post by id, and the child execution that made each.
type sideEffects struct {
	mu    sync.Mutex
	count map[string]int
	by    map[string][]string // id -> the child executions' names
}

func (s *sideEffects) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct{ ID, Execution string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.ID == "" {
		http.Error(w, "want {id, execution}", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.count[in.ID]++
	s.by[in.ID] = append(s.by[in.ID], in.Execution)
	s.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]string{"id": in.ID})
}

func (s *sideEffects) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.count {
		n += c
	}
	return n
}

// Killed with kill -9 while a DISTRIBUTED Map of 200 tool calls (startExecution.sync:2 children
// without a Name) has made about a fifth of its calls: after the restart every item's task
// re-attaches to the child it started, so no call whose child had finished runs again; the
// calls running at the crash may run again (at least once), no more than the Map runs at a time.
func TestRestartReattachesDistributedMapChildren(t *testing.T) {
	const items, conc = 200, 12
	fx := &sideEffects{count: map[string]int{}, by: map[string][]string{}}
	srv := httptest.NewServer(fx)
	defer srv.Close()

	dir := t.TempDir()
	p1 := startLocal(t, dir)
	ctx := context.Background()
	c := p1.sfn()
	call, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("toolcall"), RoleArn: aws.String(role), Definition: aws.String(fanoutCallDef)})
	if err != nil {
		t.Fatal(err)
	}
	def := fmt.Sprintf(fanoutDef, aws.ToString(call.StateMachineArn))
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("fanout"), RoleArn: aws.String(role), Definition: aws.String(def)})
	if err != nil {
		t.Fatal(err)
	}
	calls := make([]map[string]string, items)
	for i := range calls {
		calls[i] = map[string]string{"id": fmt.Sprintf("call-%03d", i)}
	}
	in, _ := json.Marshal(map[string]any{"calls": calls, "url": srv.URL})
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("x"), Input: aws.String(string(in))})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "about a fifth of the calls to run", func() bool { return fx.total() >= 42 })
	finished := succeededChildren(t, c, aws.ToString(call.StateMachineArn))
	p1.kill9(t)
	if len(finished) == 0 {
		t.Fatal("no child execution had succeeded before the kill: the test proves nothing")
	}

	p2 := startLocal(t, dir)
	defer p2.stop(t)
	c = p2.sfn()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("local mode's log after the restart:\n%s", p2.Stderr.String())
		}
	})
	d := waitEnd(t, c, aws.ToString(x.ExecutionArn))
	if d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution: %s %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	var out []struct{ ID string }
	if err := json.Unmarshal([]byte(aws.ToString(d.Output)), &out); err != nil || len(out) != items {
		t.Fatalf("output: %d results (%v), want %d", len(out), err, items)
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	reruns, rerunFinished := 0, 0
	for i, r := range out {
		id := fmt.Sprintf("call-%03d", i)
		if r.ID != id {
			t.Errorf("result %d is %q, want %q", i, r.ID, id)
		}
		n := fx.count[id]
		switch {
		case n == 0:
			t.Errorf("%s never ran", id)
		case n > 1 && finished[fx.by[id][0]]:
			rerunFinished++
			t.Errorf("%s ran %d times (by %s); its child execution had succeeded before the kill", id, n, strings.Join(fx.by[id], ", "))
		case n > 1:
			reruns++
			if by := fx.by[id]; by[0] != by[n-1] {
				t.Errorf("%s ran in child executions %s: its task started a new child in place of re-attaching", id, strings.Join(by, ", "))
			}
		}
	}
	t.Logf("%d child executions had succeeded before the kill; %d finished calls ran again, %d calls running at the kill ran again", len(finished), rerunFinished, reruns)
	if reruns > conc {
		t.Errorf("%d calls ran again; at most %d were running at the kill", reruns, conc)
	}
}

// succeededChildren names the executions of machine that have succeeded.
func succeededChildren(t *testing.T, c *sfn.Client, machine string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	p := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: aws.String(machine), StatusFilter: types.ExecutionStatusSucceeded})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range page.Executions {
			out[aws.ToString(x.Name)] = true
		}
	}
	return out
}

// A DISTRIBUTED Map whose items start a child with states:startExecution.waitForTaskToken: the
// child records the token it was given and waits; the test answers for it.
const (
	tokenChildDef = `{"StartAt":"Rec","States":{"Rec":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","ResultPath":null,"End":true,
  "Parameters":{"FunctionName":"sinew-test-record","Payload":{"id.$":"States.Format('tokchild-{}', $.v)","token.$":"$.token"}}}}}`
	tokenFanoutDef = `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","End":true,
  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"Run","States":{
    "Run":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.waitForTaskToken","End":true,
      "Parameters":{"StateMachineArn":"%s","Input":{"v.$":"$.v","token.$":"$$.Task.Token","at.$":"$$.State.EnteredTime"}}}}}}}}`
)

// Killed with kill -9 while every item's .waitForTaskToken child has recorded the token it was
// given: after the restart the items re-attach to those children (none starts again), and the
// tokens the children hold, issued before the crash, complete the items.
func TestRestartReattachesTokenChildren(t *testing.T) {
	dir := t.TempDir()
	p1 := startLocal(t, dir)
	ctx := context.Background()
	c := p1.sfn()
	child, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("tokchild"), RoleArn: aws.String(role), Definition: aws.String(tokenChildDef)})
	if err != nil {
		t.Fatal(err)
	}
	def := fmt.Sprintf(tokenFanoutDef, aws.ToString(child.StateMachineArn))
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("tokfanout"), RoleArn: aws.String(role), Definition: aws.String(def)})
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("x"),
		Input: aws.String(`{"items":[{"v":"a"},{"v":"b"},{"v":"c"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"tokchild-a", "tokchild-b", "tokchild-c"}
	toks := map[string]string{}
	for _, id := range ids {
		toks[id] = tokenFor(t, dir, id)
	}
	// The children end after recording; their parents' tasks wait on the tokens.
	eventually(t, "the children to end", func() bool { return len(succeededChildren(t, c, aws.ToString(child.StateMachineArn))) == len(ids) })
	p1.kill9(t)

	p2 := startLocal(t, dir)
	defer p2.stop(t)
	c = p2.sfn()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("local mode's log after the restart:\n%s", p2.Stderr.String())
		}
	})
	for _, id := range ids {
		answerReplayed(t, c, toks[id])
	}
	if d := waitEnd(t, c, aws.ToString(x.ExecutionArn)); d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution: %s %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	for _, id := range ids {
		if n := countCalls(t, dir, id); n != 1 {
			t.Errorf("%s ran %d times, want 1: its parent task started a new child in place of re-attaching", id, n)
		}
	}
}
