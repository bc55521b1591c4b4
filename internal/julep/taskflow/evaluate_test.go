package taskflow

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sinew/internal/asl"
	asljsonata "sinew/internal/asl/jsonata"
	"sinew/internal/julep/pyexpr"
)

// evaluatorLambda answers the evaluator Task's invocations as the prepare function's evaluate
// action does (pyexpr.Evaluate), counting them.
type evaluatorLambda struct{ calls atomic.Int64 }

func (l *evaluatorLambda) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	l.calls.Add(1)
	var ev struct{ Evaluate pyexpr.Request }
	if err := json.Unmarshal(req.Payload, &ev); err != nil || req.FunctionName != "prepare" {
		return asl.FunctionErrorResponse("Sinew.InvalidInput", "not an evaluate request to prepare"), nil
	}
	r, err := pyexpr.Evaluate(ctx, ev.Evaluate)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(r)
	return &asl.LambdaResponse{Payload: b}, nil
}

var realEvaluator = &Evaluator{Function: "prepare", Names: pyexpr.Names,
	Evaluable: func(src string, n map[string]string) bool {
		c, _ := pyexpr.Classify(src, n)
		return c == pyexpr.NeedsEval
	}}

func runEval(t *testing.T, wfs map[string][]any, wf, input string) (asl.Description, int64, []byte) {
	t.Helper()
	def, err := Compile(wfs, Options{ToolCallARN: "arn:aws:states:us-east-1:000000000000:stateMachine:tc",
		AgentLoopARN: "arn:aws:states:us-east-1:000000000000:stateMachine:al",
		SelfARN:      "arn:aws:states:us-east-1:000000000000:stateMachine:self", Expr: pyexpr.Compile, Eval: realEvaluator})
	if err != nil {
		t.Fatal(err)
	}
	m, err := asl.Parse(def, asl.Options{JSONata: asljsonata.New()})
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, def)
	}
	fn := &evaluatorLambda{}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)), Lambda: fn})
	x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `{"developer_id":"d","workflow":"` + wf + `","input":` + input + `}`})
	if err != nil {
		t.Fatal(err)
	}
	d, err := x.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d, fn.calls.Load(), def
}

// TestEvaluatorSteps: a step whose expressions do not all compile runs them in the evaluator (one
// invocation per step), the others in JSONata; steps whose expressions compile invoke nothing.
func TestEvaluatorSteps(t *testing.T) {
	const csv = `{"csv": "a,b\n1,2\n", "xs": [1, 2, 3, 4, 5]}`
	for _, tc := range []struct {
		name, steps, input, want string
		calls                    int64
	}{
		{"none needed", `[{"evaluate": {"x": "$ _['xs'][0] + 1"}}]`, csv, `{"x":2}`, 0},
		{"evaluate", `[{"evaluate": {"rows": "$ list(csv.reader(_['csv']))", "n": "$ len(_['xs'])"}}]`, csv,
			`{"n":5,"rows":[["a","b"],["1","2"]]}`, 1},
		{"two in a step", `[{"evaluate": {"a": "$ _['xs'][::2]", "b": "$ _['xs'][1::2]"}}]`, csv, `{"a":[1,3,5],"b":[2,4]}`, 1},
		{"second step", `[{"evaluate": {"n": 1}}, {"set": {"odd": "$ inputs[0]['xs'][::2]"}}, {"get": "odd"}]`, csv, `[1,3,5]`, 1},
		{"log", `[{"log": "{{ _['xs'][::-2] }}"}]`, csv, `"[5, 3, 1]"`, 1},
		{"if", `[{"if": "$ len(_['xs'][::2]) == 3", "then": {"evaluate": {"r": "yes"}}, "else": {"evaluate": {"r": "no"}}}]`, csv, `{"r":"yes"}`, 1},
		{"branch", `[{"if": "$ True", "then": {"evaluate": {"r": "$ _['xs'][::4]"}}}]`, csv, `{"r":[1,5]}`, 1},
		{"switch", `[{"switch": [{"case": "$ _['xs'][::2] == [1]", "then": {"log": "one"}}, {"case": "_", "then": {"log": "$ str(_['xs'][::3])"}}]}]`, csv, `"[1, 4]"`, 2},
		{"foreach over", `[{"foreach": {"in": "$ _['xs'][::2]", "do": {"evaluate": {"d": "$ _ * 2"}}}}]`, csv, `[{"d":2},{"d":6},{"d":10}]`, 1},
		{"in an iteration", `[{"over": "$ [[1, 2, 3], [4, 5]]", "map": {"evaluate": {"o": "$ _[::2]"}}, "parallelism": 2}]`, `{}`, `[{"o":[1,3]},{"o":[4]}]`, 2},
		{"list input compiled", `[{"evaluate": {"v": 1}}, {"evaluate": {"a": "$ inputs[0]", "n": "$ len(steps)", "s": "$ steps[0]['input']"}}]`, `[1, 2, 3]`, `{"a":[1,2,3],"n":1,"s":[1,2,3]}`, 0},
		{"list input", `[{"evaluate": {"a": "$ inputs[0][::2]", "n": "$ len(inputs)"}}]`, `[1, 2, 3]`, `{"a":[1,3],"n":1}`, 1},
		{"steps", `[{"evaluate": {"v": [1, 2]}}, {"evaluate": {"s": "$ steps[0]['output']['v'][::-2]", "n": "$ len(steps)", "o": "$ outputs[0]['v'][::2]"}}]`, `{}`, `{"n":1,"o":[1],"s":[2]}`, 1},
		{"return", `[{"return": {"r": "$ _['xs'][::-2]", "s": "$ _['xs'][-1::-4]"}}, {"error": "not reached"}]`, csv, `{"r":[5,3,1],"s":[5,1]}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A second workflow, whose first step needs the evaluator, is reached from Start's choice.
			wfs := map[string][]any{"main": steps(tc.steps), "other": steps(`[{"evaluate": {"y": "$ _[::2]"}}]`)}
			d, calls, def := runEval(t, wfs, "main", tc.input)
			if d.Status != "SUCCEEDED" || d.Output != tc.want || calls != tc.calls {
				t.Errorf("%s %s %s %s, %d evaluator calls; want %s, %d\n%s", d.Status, d.Output, d.Error, d.Cause, calls, tc.want, tc.calls, def)
			}
		})
	}
}

func TestEvaluatorOtherWorkflow(t *testing.T) {
	wfs := map[string][]any{"main": steps(`[{"log": "a"}]`), "other": steps(`[{"evaluate": {"y": "$ _[::2]"}}]`)}
	d, calls, _ := runEval(t, wfs, "other", `[1, 2, 3]`)
	if d.Status != "SUCCEEDED" || d.Output != `{"y":[1,3]}` || calls != 1 {
		t.Errorf("%s %s %s %s, %d calls", d.Status, d.Output, d.Error, d.Cause, calls)
	}
}

// TestEvaluatorFailure: a Python exception in the evaluator fails the step as Julep's would, with
// the expression and the exception's message.
func TestEvaluatorFailure(t *testing.T) {
	d, calls, _ := runEval(t, map[string][]any{"main": steps(`[{"evaluate": {"x": "$ _['xs'][::2]['nope']"}}]`)}, "main", `{"xs": [1]}`)
	if d.Status != "FAILED" || d.Error != StepErrorName || !strings.HasPrefix(d.Cause, `expression "_['xs'][::2]['nope']": `) || calls != 1 {
		t.Errorf("%s %s %s, %d calls", d.Status, d.Error, d.Cause, calls)
	}
}

// TestEvaluatorRefusals: without an evaluator, or for a reduce (run once per result), an
// expression that does not compile refuses the task at creation, naming the step's field.
func TestEvaluatorRefusals(t *testing.T) {
	for _, tc := range []struct {
		steps, path string
		eval        *Evaluator
	}{
		{`[{"evaluate": {"a": "$ _[::2]"}}]`, "main[0].evaluate.a", nil},
		{`[{"over": "$ [1]", "map": {"evaluate": {"v": 1}}, "reduce": "$ results + [_][::2]"}]`, "main[0].reduce", realEvaluator},
		{`[{"evaluate": {"a": "$ sorted(_)"}}]`, "main[0].evaluate.a", realEvaluator},
	} {
		_, err := Compile(map[string][]any{"main": steps(tc.steps)}, Options{Expr: pyexpr.Compile, Eval: tc.eval})
		e, ok := err.(*Error)
		if !ok || e.Path != tc.path {
			t.Errorf("%s: %v, want an error at %s", tc.steps, err, tc.path)
		}
	}
}
