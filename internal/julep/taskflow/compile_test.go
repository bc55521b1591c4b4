package taskflow

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
	asljsonata "sinew/internal/asl/jsonata"
)

// testExpr stands in for package pyexpr in these tests of the machine's structure: "$ X" is X
// written in JSONata already, with Julep's names (as whole words) replaced by their bindings, and
// any other string is a literal. The real expressions are pyexpr's and its tests'.
func testExpr(src string, n map[string]string) (string, error) {
	if !strings.HasPrefix(src, "$ ") {
		b, _ := json.Marshal(src)
		return string(b), nil
	}
	return nameRE.ReplaceAllStringFunc(src[2:], func(w string) string {
		if v, ok := n[w]; ok {
			return "(" + v + ")"
		}
		return w
	}), nil
}

var nameRE = regexp.MustCompile(`\b(_|outputs|inputs|steps|state|results)\b|\b_\b`)

func run(t *testing.T, wfs map[string][]any, input string) asl.Description {
	t.Helper()
	def, err := Compile(wfs, Options{ToolCallARN: "arn:aws:states:us-east-1:000000000000:stateMachine:tc",
		AgentLoopARN: "arn:aws:states:us-east-1:000000000000:stateMachine:al",
		SelfARN:      "arn:aws:states:us-east-1:000000000000:stateMachine:self", Expr: testExpr})
	if err != nil {
		t.Fatal(err)
	}
	m, err := asl.Parse(def, asl.Options{JSONata: asljsonata.New()})
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, def)
	}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))})
	x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `{"developer_id":"d","workflow":"main","input":` + input + `}`})
	if err != nil {
		t.Fatal(err)
	}
	d, err := x.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func steps(js string) []any {
	var v []any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		panic(err)
	}
	return v
}

func TestPassSteps(t *testing.T) {
	for _, tc := range []struct {
		name, steps, input, want string
	}{
		{"evaluate", `[{"evaluate": {"x": "$ _.a + 1", "s": "hi"}}]`, `{"a": 1}`, `{"s":"hi","x":2}`},
		{"outputs", `[{"evaluate": {"x": "$ [1,2]"}}, {"evaluate": {"y": "$ outputs[0].x", "z": "$ inputs[0].a"}}]`, `{"a": 5}`, `{"y":[1,2],"z":5}`},
		{"set get", `[{"set": {"k": "$ _.a"}}, {"evaluate": {"n": 0}}, {"get": "k"}]`, `{"a": "v"}`, `"v"`},
		{"log", `[{"log": "hello"}]`, `{}`, `"hello"`},
		{"return", `[{"return": {"r": "$ _.a"}}, {"error": "not reached"}]`, `{"a": 3}`, `{"r":3}`},
		{"if then", `[{"if": "$ _.a > 1", "then": {"evaluate": {"b": "big"}}, "else": {"evaluate": {"b": "small"}}}]`, `{"a": 3}`, `{"b":"big"}`},
		{"if else", `[{"if": "$ _.a > 1", "then": {"evaluate": {"b": "big"}}, "else": {"evaluate": {"b": "small"}}}]`, `{"a": 0}`, `{"b":"small"}`},
		{"if no else", `[{"if": "$ _.a > 1", "then": {"evaluate": {"b": "big"}}}]`, `{"a": 0}`, `{"a":0}`},
		{"switch", `[{"switch": [{"case": "$ _.a = 1", "then": {"log": "one"}}, {"case": "_", "then": {"log": "other"}}]}]`, `{"a": 2}`, `"other"`},
		{"foreach", `[{"foreach": {"in": "$ _.xs", "do": {"evaluate": {"d": "$ _ * 2"}}}}]`, `{"xs": [1, 2]}`, `[{"d":2},{"d":4}]`},
		{"map reduce", `[{"over": "$ _.xs", "map": {"evaluate": {"d": "$ _ * 2"}}, "reduce": "$ results + _.d", "initial": 0, "parallelism": 2}]`, `{"xs": [1, 2, 3]}`, `12`},
		{"parallel", `[{"parallel": [{"evaluate": {"a": "$ _.x"}}, {"log": "b"}]}]`, `{"x": 1}`, `[{"a":1},"b"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := run(t, map[string][]any{"main": steps(tc.steps)}, tc.input)
			if d.Status != "SUCCEEDED" || d.Output != tc.want {
				t.Errorf("%s %s %s %s; want %s", d.Status, d.Output, d.Error, d.Cause, tc.want)
			}
		})
	}
}

func TestErrorStep(t *testing.T) {
	d := run(t, map[string][]any{"main": steps(`[{"log": "a"}, {"error": "it broke"}]`)}, `{}`)
	if d.Status != "FAILED" || d.Error != StepErrorName || d.Cause != "it broke" {
		t.Errorf("%s %s %s", d.Status, d.Error, d.Cause)
	}
}

func TestRefused(t *testing.T) {
	for _, tc := range []struct{ steps, path string }{
		{`[{"nope": 1}]`, "main[0]"},
		{`[{"evaluate": {"a": 1}, "bogus": 2}]`, "main[0].bogus"},
		{`[{"workflow": "other"}]`, "main[0].workflow"},
		{`[{"if": "$ 1", "then": {"sleep": {"seconds": 0}}}]`, "main[0].then.sleep"},
		{`[{"error": 3}]`, "main[0].error"},
	} {
		_, err := Compile(map[string][]any{"main": steps(tc.steps)}, Options{Expr: testExpr})
		e, ok := err.(*Error)
		if !ok || e.Path != tc.path {
			t.Errorf("%s: %v, want an error at %s", tc.steps, err, tc.path)
		}
	}
}
