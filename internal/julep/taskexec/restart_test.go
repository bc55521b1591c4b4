package taskexec_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitStatus polls GET /executions/{id} until its status is want.
func (l *local) waitStatus(id, want string) map[string]any {
	l.t.Helper()
	var x map[string]any
	for i := 0; i < 600; i++ {
		x = l.api("GET", "/executions/"+id, nil, 200)
		if x["status"] == want {
			return x
		}
		time.Sleep(100 * time.Millisecond)
	}
	l.t.Fatalf("execution %s: %v, want %s", id, x, want)
	return nil
}

// TestTaskSurvivesKill9: a task's execution waits for input across a kill -9 of local mode, is
// resumed by the restarted one, survives another kill -9 in its sleep, and finishes.
func TestTaskSurvivesKill9(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l := startLocal(t, dir)
	agent := l.makeAgent()
	task := l.api("POST", "/agents/"+agent+"/tasks", map[string]any{"name": "survive", "main": steps(`[
		{"wait_for_input": {"info": {"q": "name?"}}},
		{"sleep": {"seconds": 3}},
		{"evaluate": {"hello": "$ 'hi ' + inputs[1]['name']"}}]`)}, 201)
	x := l.api("POST", "/tasks/"+task["id"].(string)+"/executions", map[string]any{"input": map[string]any{}}, 201)
	id := x["id"].(string)
	l.waitStatus(id, "awaiting_input")

	l.proc.Kill()
	l = startLocal(t, dir)
	l.waitStatus(id, "awaiting_input")
	l.api("PUT", "/executions/"+id, map[string]any{"status": "running", "input": map[string]any{"name": "Ada"}}, 200)
	l.waitStatus(id, "running")

	// Killed while the sleep's timer runs.
	l.proc.Kill()
	l = startLocal(t, dir)
	done := l.waitStatus(id, "succeeded")
	if out, _ := json.Marshal(done["output"]); string(out) != `{"hello":"hi Ada"}` {
		t.Errorf("output %s", out)
	}
	ts := l.api("GET", "/executions/"+id+"/transitions", nil, 200)["items"].([]any)
	var kinds []string
	for _, tr := range ts {
		kinds = append(kinds, tr.(map[string]any)["type"].(string))
	}
	if got, _ := json.Marshal(kinds); string(got) != `["init","wait","resume","step","step","finish"]` {
		t.Errorf("transitions %s", got)
	}
	l.checkSettledAndDrawn(id, task["id"].(string))
}

// checkSettledAndDrawn: the ended execution's record is settled by its status-change event (GET
// /executions lists it succeeded), and the console lists the task's machine and draws the
// execution on it.
func (l *local) checkSettledAndDrawn(id, taskID string) {
	l.t.Helper()
	settled := false
	for i := 0; i < 600 && !settled; i++ {
		for _, it := range l.api("GET", "/executions", nil, 200)["items"].([]any) {
			x := it.(map[string]any)
			settled = settled || (x["execution_id"] == id && x["status"] == "succeeded")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !settled {
		l.t.Errorf("GET /executions never listed %s succeeded", id)
	}
	machine := "task-" + taskID
	found := false
	for _, it := range l.api("GET", "/console/api/machines", nil, 200)["items"].([]any) {
		m := it.(map[string]any)
		found = found || (m["name"] == machine && m["sinew"] == true)
	}
	if !found {
		l.t.Errorf("the console does not list %s as sinew's", machine)
	}
	v := l.api("GET", "/console/api/executions/"+machine+"/"+id, nil, 200)
	if v["status"] != "SUCCEEDED" || v["graph"] == nil || v["record"] == nil {
		l.t.Errorf("the console's view of %s: status %v, graph %v, record %v", id, v["status"], v["graph"] != nil, v["record"] != nil)
	}
}

// TestWaitAnsweredByCallRoute: a wait answered through POST /executions/{id}/calls/{call_id}/result
// (not PUT /executions/{id}) is settled too, so the task's next wait is its only pending call.
func TestWaitAnsweredByCallRoute(t *testing.T) {
	l := startLocal(t, "", "--in-memory")
	task := l.api("POST", "/agents/"+l.makeAgent()+"/tasks", map[string]any{"name": "two waits", "main": steps(`[
		{"wait_for_input": {"info": {"q": "first"}}},
		{"wait_for_input": {"info": {"q": "second"}}},
		{"evaluate": {"got": "$ [inputs[1], _]"}}]`)}, 201)
	id := l.api("POST", "/tasks/"+task["id"].(string)+"/executions", map[string]any{"input": map[string]any{}}, 201)["id"].(string)
	first := l.waitStatus(id, "awaiting_input")["pending_calls"].([]any)[0].(map[string]any)["call_id"].(string)
	l.api("POST", "/executions/"+id+"/calls/"+first+"/result", map[string]any{"output": "one"}, 200)
	var x map[string]any
	for i := 0; i < 600; i++ {
		x = l.api("GET", "/executions/"+id, nil, 200)
		calls, _ := x["pending_calls"].([]any)
		if len(calls) == 1 && calls[0].(map[string]any)["call_id"] != first {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	l.api("PUT", "/executions/"+id, map[string]any{"status": "running", "input": "two"}, 200)
	done := l.waitStatus(id, "succeeded")
	if out, _ := json.Marshal(done["output"]); string(out) != `{"got":["one","two"]}` {
		t.Errorf("output %s (last view %v)", out, x)
	}
}

// TestChosenTaskIDTaken: task machines are named by task id across developers, so a task that
// another developer makes with a chosen id (createOrUpdate) that is this one's is refused with a
// 409, whether it has steps at once or is given them later, and this task's machine still runs
// its own steps.
func TestChosenTaskIDTaken(t *testing.T) {
	l := startLocal(t, "", "--in-memory")
	task := l.api("POST", "/agents/"+l.makeAgent()+"/tasks", map[string]any{"name": "mine", "main": steps(`[{"evaluate": {"who": "mine"}}]`)}, 201)
	id := task["id"].(string)

	other := *l
	out, err := exec.Command(l.bin, "token", "--dir", l.proc.Dir, "dev-other").Output()
	if err != nil {
		t.Fatalf("local token: %v", err)
	}
	other.tok = strings.TrimSpace(string(out))
	agent := other.makeAgent()
	theirs := map[string]any{"name": "theirs", "main": steps(`[{"evaluate": {"who": "theirs"}}]`)}
	other.api("POST", "/agents/"+agent+"/tasks/"+id, theirs, 409)
	other.api("GET", "/tasks/"+id, nil, 404)
	// Made without steps, given them later.
	other.api("POST", "/agents/"+agent+"/tasks/"+id, map[string]any{"name": "theirs"}, 201)
	other.api("PUT", "/tasks/"+id, theirs, 409)
	if got := other.api("GET", "/tasks/"+id, nil, 200); got["main"] != nil {
		t.Errorf("the refused steps stayed on the other's task: %v", got)
	}

	x := l.api("POST", "/tasks/"+id+"/executions", map[string]any{"input": map[string]any{}}, 201)
	done := l.waitStatus(x["id"].(string), "succeeded")
	if o, _ := json.Marshal(done["output"]); string(o) != `{"who":"mine"}` {
		t.Errorf("my task ran %s", o)
	}
}
