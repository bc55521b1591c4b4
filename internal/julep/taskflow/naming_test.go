package taskflow

import (
	"context"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
	asljsonata "sinew/internal/asl/jsonata"
)

// TestIterationsHaveTheirOwnChildren: iterations of nested Maps (and of a Parallel inside a Map)
// that run the same step on the same input each start a child execution of their own: a child's
// name carries the whole path of iteration indexes, not the innermost Map's alone.
func TestIterationsHaveTheirOwnChildren(t *testing.T) {
	leaf := steps(`[{"evaluate": {"y": "$ _.x * 10"}}]`)
	for _, tc := range []struct{ name, main, input, want string }{
		{"nested foreach", `[{"foreach": {"in": "$ _.xss", "do": {"foreach": {"in": "$ _", "do": {"workflow": "leaf", "arguments": {"x": "$ _"}}}}}}]`,
			`{"xss": [[1], [1]]}`, `[[{"y":10}],[{"y":10}]]`},
		{"nested map", `[{"over": "$ _.xss", "parallelism": 2, "map": {"over": "$ _", "map": {"workflow": "leaf", "arguments": {"x": "$ _"}}}}]`,
			`{"xss": [[1, 1], [1]]}`, `[[{"y":10},{"y":10}],[{"y":10}]]`},
		{"parallel in foreach", `[{"foreach": {"in": "$ _.xs", "do": {"parallel": [{"workflow": "leaf", "arguments": {"x": 2}}]}}}]`,
			`{"xs": [0, 0]}`, `[[{"y":20}],[{"y":20}]]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const self = "arn:aws:states:us-east-1:000000000000:stateMachine:self"
			def, err := Compile(map[string][]any{"main": steps(tc.main), "leaf": leaf}, Options{ToolCallARN: "arn:aws:states:us-east-1:000000000000:stateMachine:tc",
				AgentLoopARN: "arn:aws:states:us-east-1:000000000000:stateMachine:al", SelfARN: self, Expr: testExpr})
			if err != nil {
				t.Fatal(err)
			}
			m, err := asl.Parse(def, asl.Options{JSONata: asljsonata.New()})
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, def)
			}
			eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)),
				Machines: func(arn string) (*asl.Machine, bool) { return m, arn == self }})
			x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, StateMachineArn: self, Name: "parent",
				Input: `{"developer_id":"d","workflow":"main","input":` + tc.input + `}`})
			if err != nil {
				t.Fatal(err)
			}
			d, err := x.Wait(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != "SUCCEEDED" || d.Output != tc.want {
				t.Errorf("%s %s %s %s; want %s", d.Status, d.Output, d.Error, d.Cause, tc.want)
			}
		})
	}
}

// TestPromptTools: a prompt step's list of tools resolves its references, by id or by name, among
// the task's tools (and the agent's it inherits) into the agent_loop input's tool_names, keeps its
// definitions as the input's tools, and refuses a reference to no tool, naming the step and it.
func TestPromptTools(t *testing.T) {
	o := Options{ToolCallARN: "arn:aws:states:us-east-1:000000000000:stateMachine:tc", AgentLoopARN: "arn:aws:states:us-east-1:000000000000:stateMachine:al",
		Expr: testExpr, Tools: []ToolRef{{ID: "t-1", Name: "echo"}, {ID: "a-1", Name: "weather"}}}
	for _, tc := range []struct{ tools, want, errPath string }{
		{`"all"`, `'tools': null, 'tool_names': null`, ""},
		{`[{"ref": {"name": "echo"}}, {"ref": {"id": "a-1"}}]`, `'tools': null, 'tool_names': [\"echo\",\"weather\"]`, ""},
		{`[{"name": "inline", "type": "function", "function": {}}]`, `'tools': [{\"function\":{},\"name\":\"inline\",\"type\":\"function\"}], 'tool_names': []`, ""},
		{`[]`, `'tools': [], 'tool_names': []`, ""},
		{`[{"ref": {"name": "echo"}}, {"ref": {"name": "nope"}}]`, "", "main[0].tools[1].ref.name"},
		{`[{"ref": {"id": "zz"}}]`, "", "main[0].tools[0].ref.id"},
		{`[{"ref": {"id": "t-1", "name": "echo"}}]`, "", "main[0].tools[0].ref"},
		{`[{"name": "x", "type": "integration", "integration": {"provider": "dummy", "setup": {"k": "v"}}}]`, "", "main[0].tools[0].integration.setup"},
		{`"some"`, "", "main[0].tools"},
	} {
		def, err := Compile(map[string][]any{"main": steps(`[{"prompt": "hi", "tools": ` + tc.tools + `}]`)}, o)
		if tc.errPath != "" {
			if e, ok := err.(*Error); !ok || e.Path != tc.errPath {
				t.Errorf("%s: %v, want an error at %s", tc.tools, err, tc.errPath)
			}
			continue
		}
		if err != nil || !strings.Contains(string(def), tc.want) {
			t.Errorf("%s: %v; the machine lacks %s:\n%s", tc.tools, err, tc.want, def)
		}
	}
}
