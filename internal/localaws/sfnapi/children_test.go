package sfnapi

import (
	"strings"
	"testing"
	"time"
)

// A .sync:2 child is an execution of its own (listed, described), and after a restart the parent
// finds the child it started, whose pre-restart token still works: the parent completes with the
// child's output, and no second child is started.
func TestChildSurvivesRestart(t *testing.T) {
	st := openStore(t)
	f1 := serve(t, st)
	child := f1.machine(t, "child", waitDef, "STANDARD")
	parentDef := `{"StartAt":"Call","States":{"Call":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2",
		"Parameters":{"StateMachineArn":"` + child + `","Input":{"from.$":"$$.Execution.Id"}},"OutputPath":"$.Output","End":true}}}`
	parent := f1.machine(t, "parent", parentDef, "STANDARD")
	arn := f1.ok(t, "StartExecution", map[string]any{"stateMachineArn": parent, "name": "p1", "input": `{}`})["executionArn"].(string)
	tok := <-f1.tokens
	children := f1.ok(t, "ListExecutions", map[string]any{"stateMachineArn": child})["executions"].([]any)
	if len(children) != 1 {
		t.Fatalf("child executions listed: %v", children)
	}
	childArn := children[0].(map[string]any)["executionArn"].(string)
	if d := f1.ok(t, "DescribeExecution", map[string]any{"executionArn": childArn}); d["status"] != "RUNNING" || !strings.Contains(d["input"].(string), arn) {
		t.Fatalf("the child: %v", d)
	}

	// The child's call has returned (and is journaled) once its task is submitted.
	for guard := time.Now().Add(30 * time.Second); ; { // a guard against a hang, not a bound
		h := f1.ok(t, "GetExecutionHistory", map[string]any{"executionArn": childArn, "reverseOrder": true, "maxResults": 1})
		if h["events"].([]any)[0].(map[string]any)["type"] == "TaskSubmitted" {
			break
		}
		if time.Now().After(guard) {
			t.Fatal("the child's task was never submitted")
		}
		time.Sleep(time.Millisecond)
	}

	f2 := serve(t, st) // the restart
	f2.ok(t, "SendTaskSuccess", map[string]any{"taskToken": tok, "output": `{"answer":42}`})
	d := f2.waitStatus(t, arn, "SUCCEEDED")
	if d["output"] != `{"answer":42}` {
		t.Errorf("parent output = %v", d["output"])
	}
	if d := f2.waitStatus(t, childArn, "SUCCEEDED"); d["output"] != `{"answer":42}` {
		t.Errorf("child output = %v", d["output"])
	}
	if n := len(f2.ok(t, "ListExecutions", map[string]any{"stateMachineArn": child})["executions"].([]any)); n != 1 {
		t.Errorf("%d child executions after the restart, want the one", n)
	}
	select {
	case <-f2.tokens:
		t.Error("the child's callback ran again after the restart")
	default:
	}
}
