package taskexec_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// julepTasks are the tasks TestJulepSDK runs, one execution each, through every step kind;
// confirm is the id of the agent's function tool confirm.
func julepTasks(svc, confirm string) []map[string]any {
	tools := []any{
		map[string]any{"name": "echo", "type": "integration", "integration": map[string]any{"provider": "dummy"}},
		map[string]any{"name": "weather", "type": "api_call", "api_call": map[string]any{"method": "GET", "url": "http://" + svc + "/weather/{city}"}},
		map[string]any{"name": "list_agents", "type": "system", "system": map[string]any{"resource": "agent", "operation": "list"}},
		map[string]any{"name": "ask", "type": "function", "function": map[string]any{"parameters": map[string]any{"type": "object"}}},
	}
	return []map[string]any{
		{"name": "control", "input": map[string]any{"a": 2, "xs": []any{1, 2, 3}}, "body": map[string]any{"name": "control", "main": steps(`[
			{"evaluate": {"b": "$ _['a'] + 1"}},
			{"set": {"total": "$ _['b'] * 2"}},
			{"log": "total is {{_['total']}}"},
			{"get": "total"},
			{"if": "$ _ > 5", "then": {"evaluate": {"big": "$ _"}}, "else": {"evaluate": {"big": 0}}},
			{"switch": [{"case": "$ _['big'] == 1", "then": {"log": "one"}}, {"case": "_", "then": {"evaluate": {"n": "$ outputs[0]['b']"}}}]},
			{"foreach": {"in": "$ inputs[0]['xs']", "do": {"evaluate": {"d": "$ _ * 2"}}}},
			{"over": "$ inputs[0]['xs']", "map": {"evaluate": {"v": "$ _ + 1"}}, "reduce": "$ results + [_['v']]", "parallelism": 2},
			{"parallel": [{"evaluate": {"p": 1}}, {"log": "two"}]},
			{"return": {"log": "$ outputs[2]", "each": "$ outputs[6]", "reduced": "$ outputs[7]", "par": "$ _", "n": "$ outputs[5]['n']"}},
			{"error": "not reached"}]`)}},
		{"name": "tools", "input": map[string]any{"who": "Ada", "city": "Faro"}, "resume": []any{map[string]any{"yes": true}},
			"body": map[string]any{"name": "tools", "tools": tools, "main": steps(`[
			{"tool": "echo", "arguments": {"text": "$ _['who']"}},
			{"tool": "weather", "arguments": {"path": {"city": "$ inputs[0]['city']"}}},
			{"tool": "list_agents", "arguments": {"limit": 5}},
			{"tool": "ask", "arguments": {"q": "sure?"}},
			{"return": {"echo": "$ outputs[0]", "weather": "$ outputs[1]", "agents": "$ outputs[2]", "asked": "$ _"}}]`)}},
		{"name": "wait", "input": map[string]any{"hint": "yours"}, "resume": []any{map[string]any{"name": "Ada"}},
			"body": map[string]any{"name": "wait", "input_schema": map[string]any{"type": "object", "required": []any{"hint"}}, "main": steps(`[
			{"wait_for_input": {"info": {"question": "$ 'name? ' + _['hint']"}}},
			{"evaluate": {"hello": "$ 'hi ' + _['name']"}}]`)}},
		{"name": "prompt", "input": map[string]any{"who": "Ada"}, "body": map[string]any{"name": "prompt", "tools": tools[:2], "inherit_tools": true, "main": steps(`[
			{"prompt": "Please echo for {{_['who']}}", "auto_run_tools": true, "unwrap": true,
			 "tools": [{"ref": {"name": "echo"}}, {"ref": {"id": "` + confirm + `"}}]}]`)}},
		{"name": "badref", "input": map[string]any{}, "body": map[string]any{"name": "badref", "tools": tools[:1], "main": steps(`[
			{"prompt": "hi", "tools": [{"ref": {"name": "echo"}}, {"ref": {"name": "nope"}}]}]`)}},
		{"name": "inherited", "input": map[string]any{}, "resume": []any{map[string]any{"sure": true}},
			"body": map[string]any{"name": "inherited", "inherit_tools": true, "main": steps(`[
			{"tool": "confirm", "arguments": {"q": "really?"}},
			{"evaluate": {"got": "$ _"}}]`)}},
		{"name": "workflow", "input": map[string]any{"n": 4}, "body": map[string]any{"name": "workflow",
			"main":   steps(`[{"workflow": "double", "arguments": {"x": "$ _['n']"}}, {"evaluate": {"r": "$ _['y']"}}]`),
			"double": steps(`[{"evaluate": {"y": "$ _['x'] * 2"}}]`)}},
		{"name": "sleep", "input": map[string]any{}, "body": map[string]any{"name": "sleep", "main": steps(`[{"sleep": {"seconds": 1}}, {"evaluate": {"slept": true}}]`)}},
		{"name": "fails", "input": map[string]any{}, "body": map[string]any{"name": "fails", "main": steps(`[{"evaluate": {"a": 1}}, {"error": "it broke"}]`)}},
		{"name": "cancel", "input": map[string]any{}, "cancel": true, "body": map[string]any{"name": "cancel", "main": steps(`[{"wait_for_input": {"info": {"q": "never answered"}}}]`)}},
		{"name": "refused", "input": map[string]any{}, "body": map[string]any{"name": "refused", "main": steps(`[{"evaluate": {"x": "$ __import__('os')"}}]`)}},
	}
}

// TestJulepSDK drives Julep's own TypeScript SDK (@julep/sdk, pinned) against local mode through
// a task of each step kind: executions, their transitions, a wait_for_input and a function tool
// resumed with executions.changeStatus, a prompt whose scripted model calls a tool, a failing
// step, a cancel, a task refused at creation, and secrets.create.
func TestJulepSDK(t *testing.T) {
	l := startLocal(t, "", "--in-memory")
	agent := l.makeAgent()
	confirm := l.api("POST", "/agents/"+agent+"/tools", map[string]any{"name": "confirm", "type": "function",
		"function": map[string]any{"parameters": map[string]any{"type": "object"}}}, 201)["id"].(string)
	out, raw := l.runSDK(map[string]any{"agent_id": agent, "tasks": julepTasks(l.svc, confirm),
		"secret": map[string]any{"name": "JULEP_TEST", "value": "s3cret-value-for-the-test", "description": "from the SDK"}})
	t.Logf("the SDK's answers: %s", raw)
	if strings.Contains(raw, "s3cret-value-for-the-test") {
		t.Errorf("an answer carried the secret's value")
	}
	if out.Secret["name"] != "JULEP_TEST" {
		t.Errorf("secrets.create: %v", out.Secret)
	}
	got := map[string]sdkTask{}
	for _, r := range out.Tasks {
		got[r.Name] = r
	}
	for _, tc := range []struct {
		name, status, output, transitions string
	}{
		{"control", "succeeded", `{"each":[{"d":2},{"d":4},{"d":6}],"log":"total is 6","n":3,"par":[{"p":1},"two"],"reduced":[2,3,4]}`, "init,step,step,step,step,step,step,step,step,step,step,finish"},
		{"wait", "succeeded", `{"hello":"hi Ada"}`, "init,wait,resume,step,finish"},
		{"prompt", "succeeded", `"The echo answered."`, "init,step,finish"},
		{"workflow", "succeeded", `{"r":8}`, "init,step,step,finish"},
		{"sleep", "succeeded", `{"slept":true}`, "init,step,step,finish"},
		{"fails", "failed", `null`, "init,step,error"},
		{"cancel", "cancelled", `null`, "init,wait,cancelled"},
		{"inherited", "succeeded", `{"got":{"sure":true}}`, "init,step,step,finish"},
	} {
		r := got[tc.name]
		if r.Create != nil || r.Run != nil {
			t.Errorf("%s: create %v, run %v", tc.name, r.Create, r.Run)
			continue
		}
		o, _ := json.Marshal(r.Execution["output"])
		if r.Execution["status"] != tc.status || string(o) != tc.output {
			t.Errorf("%s: %v %s (error %v), want %s %s", tc.name, r.Execution["status"], o, r.Execution["error"], tc.status, tc.output)
		}
		if k := kinds(r.Transitions); k != tc.transitions {
			t.Errorf("%s: transitions %s, want %s", tc.name, k, tc.transitions)
		}
		if len(r.Listed) != 1 || r.Listed[0] != r.Execution["id"] {
			t.Errorf("%s: executions.list %v, want the one execution", tc.name, r.Listed)
		}
	}
	checkTools(t, got["tools"])
	if e := got["fails"].Execution["error"]; e == nil || !strings.Contains(e.(string), "it broke") {
		t.Errorf("fails: error %v", e)
	}
	if c := got["refused"].Create; c == nil || c["status"] != float64(400) || !strings.Contains(c["error"].(string), "main[0].evaluate.x") {
		t.Errorf("refused: %v, want a 400 naming main[0].evaluate.x", c)
	}
	if w := got["wait"].Waited; len(w) != 1 || w[0]["status"] != "awaiting_input" {
		t.Errorf("wait: waited %v", w)
	}
	if c := got["badref"].Create; c == nil || c["status"] != float64(400) || !strings.Contains(c["error"].(string), "main[0].tools[1].ref.name") || !strings.Contains(c["error"].(string), "nope") {
		t.Errorf("badref: %v, want a 400 naming main[0].tools[1].ref.name and nope", c)
	}
	// The inherited function tool waited in its tool_call child; changeStatus on the task answered it.
	if w := got["inherited"].Waited; len(w) != 1 || w[0]["status"] != "awaiting_input" {
		t.Errorf("inherited: waited %v", w)
	} else if calls, _ := w[0]["pending_calls"].([]any); len(calls) != 1 || calls[0].(map[string]any)["tool"] != "confirm" ||
		calls[0].(map[string]any)["execution_id"] == w[0]["id"] {
		t.Errorf("inherited: pending calls %v, want confirm's in the child", calls)
	}
}

// checkTools: a tool_call of each tool type, the function tool resumed by changeStatus.
func checkTools(t *testing.T, r sdkTask) {
	t.Helper()
	if r.Create != nil || r.Run != nil || r.Execution["status"] != "succeeded" {
		t.Fatalf("tools: %v %v %v", r.Create, r.Run, r.Execution)
	}
	o, _ := r.Execution["output"].(map[string]any)
	b, _ := json.Marshal(o)
	for _, want := range []string{`"text":"Ada"`, `"city":"Faro"`, `"julep-tasks"`, `"asked":{"yes":true}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("tools: output %s lacks %s", b, want)
		}
	}
	if k := kinds(r.Transitions); k != "init,step,step,step,wait,resume,step,finish" {
		t.Errorf("tools: transitions %s", k)
	}
}
