package taskexec_test

import (
	"encoding/json"
	"path/filepath"
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
}
