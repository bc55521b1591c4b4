package taskexec_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// positions are transitions as "type@step" (the step of current).
func positions(items []any) string {
	var out []string
	for _, it := range items {
		tr := it.(map[string]any)
		out = append(out, fmt.Sprintf("%v@%v", tr["type"], tr["current"].(map[string]any)["step"]))
	}
	return strings.Join(out, ",")
}

// TestTransitionsOfAnUpdatedTask: an execution started before its task was updated is read by the
// definition it ran (DescribeStateMachineForExecution), not by the task's new steps, while it
// waits, once it has ended, and after a kill -9 of local mode; an execution started after the
// update is read by the new steps.
func TestTransitionsOfAnUpdatedTask(t *testing.T) {
	t.Setenv("SINEW_LOCAL_LOG_REQUESTS", "1") // a line for every AWS request: the Step Functions calls of a GET
	dir := filepath.Join(t.TempDir(), "data")
	l := startLocal(t, dir)
	task := l.api("POST", "/agents/"+l.makeAgent()+"/tasks", map[string]any{"name": "updated", "main": steps(`[
		{"wait_for_input": {"info": {"q": "name?"}}},
		{"evaluate": {"hello": "$ 'hi ' + _['name']"}}]`)}, 201)
	taskID := task["id"].(string)
	old := l.api("POST", "/tasks/"+taskID+"/executions", map[string]any{"input": map[string]any{}}, 201)["id"].(string)
	l.waitStatus(old, "awaiting_input")

	// Mid-flight, the task gains two steps before its wait: the old execution's wait is now main.2.
	l.api("PUT", "/tasks/"+taskID, map[string]any{"name": "updated", "main": steps(`[
		{"evaluate": {"a": 1}},
		{"evaluate": {"b": 2}},
		{"wait_for_input": {"info": {"q": "again?"}}},
		{"evaluate": {"bye": "$ 'bye ' + _['name']"}}]`)}, 200)
	transitions := func(id string) string {
		return positions(l.api("GET", "/executions/"+id+"/transitions", nil, 200)["items"].([]any))
	}
	if got := transitions(old); got != "init@0,wait@0" {
		t.Errorf("the waiting execution after the update: %s, want init@0,wait@0", got)
	}
	l.api("PUT", "/executions/"+old, map[string]any{"status": "running", "input": map[string]any{"name": "Ada"}}, 200)
	done := l.waitStatus(old, "succeeded")
	const wantOld = "init@0,wait@0,resume@0,step@1,finish@1"
	if out, _ := json.Marshal(done["output"]); string(out) != `{"hello":"hi Ada"}` || done["transition_count"] != float64(5) {
		t.Errorf("the old execution: output %s, transition_count %v", out, done["transition_count"])
	}
	if got := transitions(old); got != wantOld {
		t.Errorf("the old execution: %s, want %s", got, wantOld)
	}

	fresh := l.api("POST", "/tasks/"+taskID+"/executions", map[string]any{"input": map[string]any{}}, 201)["id"].(string)
	l.waitStatus(fresh, "awaiting_input")
	l.api("PUT", "/executions/"+fresh, map[string]any{"status": "running", "input": map[string]any{"name": "Bo"}}, 200)
	l.waitStatus(fresh, "succeeded")
	const wantFresh = "init@0,step@0,step@1,wait@2,resume@2,step@3,finish@3"
	if got := transitions(fresh); got != wantFresh {
		t.Errorf("the execution of the updated task: %s, want %s", got, wantFresh)
	}

	l.proc.Kill()
	l = startLocal(t, dir)
	if got := transitions(old); got != wantOld {
		t.Errorf("the old execution after a kill -9: %s, want %s", got, wantOld)
	}
	// GET /executions/{id} reads the history and the definition the execution ran, which an
	// instance of the api function keeps for its next read (TestGetReadsTheDefinitionOnce): two
	// GETs make two history reads and one or two definition reads (two instances), nothing else.
	// Local mode's log reaches the test a moment late: a ListExecutions before and after them
	// marks where their lines begin and end.
	_, from := l.mark(taskID, len(l.proc.Stderr.String()))
	for i := range 2 {
		if x := l.api("GET", "/executions/"+fresh, nil, 200); x["transition_count"] != float64(7) || x["status"] != "succeeded" {
			t.Errorf("GET %d of the new execution after a kill -9: %v", i, x)
		}
	}
	to, _ := l.mark(taskID, from)
	ops := statesOps(l.proc.Stderr.String()[from:to])
	if want := "DescribeStateMachineForExecution,GetExecutionHistory,GetExecutionHistory"; ops != want &&
		ops != "DescribeStateMachineForExecution,"+want {
		t.Errorf("two GETs of a task execution made the Step Functions calls %q, want %s (or a definition read more)", ops, want)
	}
}

// mark lists the task's executions, whose ListExecutions line marks a place in local mode's log,
// and gives where that line's op starts and ends once it has arrived (after offset after).
func (l *local) mark(taskID string, after int) (int, int) {
	l.t.Helper()
	l.api("GET", "/tasks/"+taskID+"/executions", nil, 200)
	const op = "op=ListExecutions "
	for range 500 {
		if i := strings.Index(l.proc.Stderr.String()[after:], op); i >= 0 {
			return after + i, after + i + len(op)
		}
		time.Sleep(10 * time.Millisecond)
	}
	l.t.Fatal("local mode's log never showed the mark's ListExecutions")
	return 0, 0
}

// statesOps are the Step Functions operations local mode logged in log, sorted.
func statesOps(log string) string {
	var ops []string
	for _, line := range strings.Split(log, "\n") {
		if _, rest, ok := strings.Cut(line, "service=states op="); ok {
			ops = append(ops, strings.Fields(rest)[0])
		}
	}
	slices.Sort(ops)
	return strings.Join(ops, ",")
}
