package pyexpr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	asljsonata "sinew/internal/asl/jsonata"
)

var update = flag.Bool("update", false, "rewrite testdata/python-values.json from python3")

// testNames binds Julep's names where a compiled state would find them.
var testNames = map[string]string{
	"_": "$states.input.`_`", "inputs": "$states.input.inputs", "outputs": "$states.input.outputs",
	"state": "$states.input.state", "steps": "$states.input.steps",
}

func loadEnv(t testing.TB) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/env.json")
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]any
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	return env
}

type pyResult struct {
	Value any    `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

// runPython evaluates srcs with python3 as Julep does (testdata/python_eval.py).
func runPython(t testing.TB, env map[string]any, srcs []string) []pyResult {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed to check the expected values against Python (install python3): %v", err)
	}
	in, _ := json.Marshal(map[string]any{"env": env, "cases": srcs})
	cmd := exec.Command(py, "testdata/python_eval.py")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 testdata/python_eval.py: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(srcs) {
		t.Fatalf("python3 gave %d results for %d cases", len(lines), len(srcs))
	}
	res := make([]pyResult, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &res[i]); err != nil {
			t.Fatalf("python3 line %d: %v", i, err)
		}
	}
	return res
}

func loadPythonValues(t testing.TB) map[string]pyResult {
	t.Helper()
	b, err := os.ReadFile("testdata/python-values.json")
	if err != nil {
		t.Fatalf("%v (write it with go test -run TestPythonValues -update)", err)
	}
	var m map[string]pyResult
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPythonValues checks the stored Python answers against python3 itself.
func TestPythonValues(t *testing.T) {
	env := loadEnv(t)
	got := runPython(t, env, cases)
	m := map[string]pyResult{}
	for i, src := range cases {
		m[src] = got[i]
	}
	if *update {
		b, _ := json.MarshalIndent(m, "", " ")
		if err := os.WriteFile("testdata/python-values.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stored := loadPythonValues(t)
	for _, src := range cases {
		if !sameJSON(stored[src], m[src]) {
			t.Errorf("%s: stored %v, python3 says %v", src, stored[src], m[src])
		}
	}
}

// sameJSON compares two values by their JSON forms (numbers by value: 3 and 3.0 are one).
func sameJSON(a, b any) bool {
	return reflect.DeepEqual(normJSON(a), normJSON(b))
}

func normJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func evalJSONata(ctx context.Context, js string, env map[string]any) (any, error) {
	x, err := asljsonata.New().Compile(js)
	if err != nil {
		return nil, err
	}
	v, _, err := x.Eval(ctx, map[string]any{"states": map[string]any{"input": env}})
	return v, err
}

// jsonataDiffers lists where the compiled JSONata knowingly gives another value than Python;
// README.md explains each.
var jsonataDiffers = map[string]string{
	"$ f'{0.1 + 0.2}'":  "JSONata writes numbers with 15 significant digits; Python's repr with up to 17",
	"$ f'{1e20}'":       "JSONata's $formatNumber writes powers of ten in exponent form as 10e19; Python 1e+20",
	"$ round(2.675, 2)": "JSONata's $round rounds the decimal form (2.675 up); Python rounds the binary value (2.67499...)",
}

func TestCompiledMatchesPython(t *testing.T) {
	env := loadEnv(t)
	want := loadPythonValues(t)
	ctx := context.Background()
	compiled := 0
	for _, src := range cases {
		w := want[src]
		class, err := Classify(src, testNames)
		if class == Refused {
			t.Errorf("%s: refused: %v", src, err)
			continue
		}
		if class != ToJSONata {
			continue
		}
		compiled++
		js, err := Compile(src, testNames)
		if err != nil {
			t.Errorf("%s: Classify says jsonata, Compile says %v", src, err)
			continue
		}
		got, err := evalJSONata(ctx, js, env)
		_, known := jsonataDiffers[src]
		switch {
		case w.Error != "" && err == nil && !known:
			t.Errorf("%s: Python raises %s; JSONata gives %v\n  %s", src, w.Error, got, js)
		case w.Error == "" && err != nil:
			t.Errorf("%s: JSONata fails: %v\n  %s", src, err, js)
		case w.Error == "" && !sameJSON(got, w.Value) && !known:
			t.Errorf("%s: JSONata gives %s, Python %s\n  %s", src, jsonOf(got), jsonOf(w.Value), js)
		case known && w.Error == "" && sameJSON(got, w.Value):
			t.Errorf("%s: listed in jsonataDiffers but gives Python's value; drop it from the list", src)
		}
	}
	t.Logf("%d of %d cases compile to JSONata", compiled, len(cases))
}

func TestEvalMatchesPython(t *testing.T) {
	env := loadEnv(t)
	want := loadPythonValues(t)
	for _, src := range cases {
		w := want[src]
		got, err := Eval(context.Background(), src, env)
		switch {
		case w.Error != "" && err == nil:
			t.Errorf("%s: Python raises %s; Eval gives %v", src, w.Error, got)
		case w.Error == "" && err != nil:
			t.Errorf("%s: Eval fails: %v", src, err)
		case w.Error == "" && !sameJSON(got, w.Value):
			t.Errorf("%s: Eval gives %s, Python %s", src, jsonOf(got), jsonOf(w.Value))
		}
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var _ = errors.As
