package taskflow

import (
	"context"
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
