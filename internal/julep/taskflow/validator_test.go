package taskflow_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sinew/internal/julep/pyexpr"
	"sinew/internal/julep/taskflow"
)

// everyKind is a task with a step of every kind, nested where Julep nests them.
const everyKind = `{
	"main": [
		{"evaluate": {"b": "$ _['a'] + 1", "rows": "$ list(csv.reader('a,b'))"}},
		{"set": {"total": "$ _['b'] * 2"}},
		{"get": "total"},
		{"log": "total is {{_}}"},
		{"tool_call": "ignored", "kind_": "tool_call", "tool": "echo", "arguments": {"text": "$ str(_)"}},
		{"tool": "ask", "arguments": "_"},
		{"prompt": [{"role": "user", "content": "say {{_}}"}], "settings": {"temperature": 0}, "unwrap": true},
		{"wait_for_input": {"info": {"q": "more?"}}},
		{"if": "$ _ is not None and [1, 2][::2] == [1]", "then": {"evaluate": {"x": 1}}, "else": {"workflow": "other", "arguments": {"n": 1}}},
		{"switch": [{"case": "$ _['x'] == 1", "then": {"sleep": {"seconds": 2}}}, {"case": "_", "then": {"error": "no"}}]},
		{"foreach": {"in": "$ [1, 2]", "do": {"tool": "echo", "arguments": {"n": "$ _"}}}},
		{"over": "$ [1, 2]", "map": {"evaluate": {"v": "$ [_][::-2]"}}, "reduce": "$ results + [_]", "parallelism": 4},
		{"parallel": [{"evaluate": {"p": 1}}, {"prompt": "hi"}]},
		{"return": {"done": true}}
	],
	"other": [{"evaluate": {"n": "$ _['n']"}}, {"error": "other fails"}]
}`

func names(src string) map[string][]any {
	var wfs map[string][]any
	if err := json.Unmarshal([]byte(src), &wfs); err != nil {
		panic(err)
	}
	return wfs
}

// TestValidatorAcceptsCompiledMachines: a compiled task with every step kind passes
// asl-validator (the linter make asl runs on statemachines/).
func TestValidatorAcceptsCompiledMachines(t *testing.T) {
	wfs := names(strings.Replace(everyKind, `{"tool_call": "ignored", "kind_": "tool_call", `, `{"kind_": "tool_call", `, 1))
	def, err := taskflow.Compile(wfs, taskflow.Options{
		ToolCallARN:   "arn:aws:states:us-east-1:000000000000:stateMachine:sinew-tool_call",
		AgentLoopARN:  "arn:aws:states:us-east-1:000000000000:stateMachine:sinew-agent_loop",
		SelfARN:       "arn:aws:states:us-east-1:000000000000:stateMachine:sinew-task-0",
		Expr:          pyexpr.Compile,
		FunctionTools: map[string]int64{"ask": 3600},
		Eval: &taskflow.Evaluator{Function: "sinew-prepare", Names: pyexpr.Names, Evaluable: func(src string, n map[string]string) bool {
			c, _ := pyexpr.Classify(src, n)
			return c == pyexpr.NeedsEval
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../../..")
	bin := filepath.Join(root, "infra/node_modules/.bin/asl-validator")
	if _, err := os.Stat(bin); err != nil {
		t.Fatal("asl-validator is not installed: run make deps (npm ci in infra/)")
	}
	path := filepath.Join(t.TempDir(), "task.asl.json")
	if err := os.WriteFile(path, def, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--json-path", path).CombinedOutput()
	if err != nil {
		t.Fatalf("asl-validator: %v\n%s\n%s", err, out, def)
	}
	var m map[string]any
	_ = json.Unmarshal(def, &m)
	if n := len(m["States"].(map[string]any)); n < 20 {
		t.Errorf("%d states: the task did not compile whole", n)
	}
	if n := strings.Count(string(def), taskflow.EvalMark); n != 3 {
		t.Errorf("%d evaluator Tasks, want 3 (main.0, main.8, the map's iteration)", n)
	}
}
