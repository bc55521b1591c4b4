package pyexpr

import (
	"encoding/json"
	"errors"
	"os"
	"sort"
	"strings"
	"testing"

	asljsonata "sinew/internal/asl/jsonata"
)

// julepNames are the names Julep binds for a step's expressions (prepare_for_step in
// agents_api/common/protocol/tasks.py: the step context's fields, state, steps, inputs, outputs,
// secrets and _), with the names the task compiler binds; each maps to where a state would hold it.
var julepNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{"_", "inputs", "outputs", "steps", "state", "input", "output", "agent", "task", "session", "user", "execution", "secrets"} {
		m[n] = "$states.input.`" + n + "`"
	}
	return m
}()

type vendored struct {
	Expr  string   `json:"expr"`
	Form  string   `json:"form"`
	Files []string `json:"files"`
}

func loadVendored(t testing.TB) []vendored {
	t.Helper()
	b, err := os.ReadFile("testdata/julep-expressions.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []vendored
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// freeNames gives the names src reads that no comprehension or lambda binds, or ok=false when
// src does not parse.
func freeNames(src string) (names []string, ok bool) {
	f, err := parse(src)
	if err != nil || f.tree == nil {
		return nil, err == nil
	}
	seen := map[string]bool{}
	walk(f.tree, map[string]bool{}, func(id string) { seen[id] = true })
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, true
}

// TestJulepExpressionsCount counts how Julep's own documented expressions fare, and fails when one
// that uses only Julep's names is refused for a reason of sinew's (not because Julep itself
// cannot run it).
func TestJulepExpressionsCount(t *testing.T) {
	exprs := loadVendored(t)
	counts := map[Class]int{}
	outside, julepToo, designed := 0, 0, 0
	for _, e := range exprs {
		class, err := Classify(e.Expr, julepNames)
		counts[class]++
		switch class {
		case ToJSONata:
			js, _ := Compile(e.Expr, julepNames)
			if _, err := asljsonata.New().Compile(js); err != nil {
				t.Errorf("%q compiles to JSONata the engine refuses: %v\n%s", e.Expr, err, js)
			}
			continue
		case NeedsEval:
			t.Logf("eval (%v)", err)
			continue
		}
		names, parsed := freeNames(e.Expr)
		foreign := []string{}
		for _, n := range names {
			if _, ok := julepNames[n]; !ok && !allowedFunctions[n] && !julepModules[n] && julepConstants[n].js == "" {
				foreign = append(foreign, n)
			}
		}
		if len(foreign) > 0 || !parsed {
			outside++
			t.Logf("refused (not Julep's names %v, or no parse): %.70q: %v", foreign, e.Expr, err)
			continue
		}
		if reason, ok := julepCannot(err); ok {
			julepToo++
			t.Logf("refused (%s): %.70q", reason, e.Expr)
			continue
		}
		if f := byDesign(err); f != "" {
			designed++
			t.Logf("refused by design (%s): %.70q", f, e.Expr)
			continue
		}
		t.Errorf("refused though it uses only Julep's names: %q (%s): %v", e.Expr, strings.Join(e.Files, ", "), err)
	}
	t.Logf("count: %d expressions: %d compile to JSONata, %d need the evaluator, %d refused: %d use names Julep does not bind, %d fail in Julep too, %d call a function sinew does not provide by design",
		len(exprs), counts[ToJSONata], counts[NeedsEval], counts[Refused], outside, julepToo, designed)
}

// julepCannot tells a refusal Julep shares (its evaluator fails the same way) from one of sinew's.
func julepCannot(err error) (string, bool) {
	var s *SyntaxError
	if errors.As(err, &s) {
		return "a syntax error in Python too", true
	}
	var u *Unsupported
	if errors.As(err, &u) && strings.Contains(u.Reason, "in Julep") {
		return u.Reason, true
	}
	return "", false
}

// refusedByDesign are Julep's allowed functions sinew does not provide, each for a reason given
// in README.md: humanize_text_alpha calls outside services and is random; nlp returns spaCy's Doc;
// dump_yaml's layout is PyYAML's.
var refusedByDesign = []string{"humanize_text_alpha", "nlp", "dump_yaml"}

func byDesign(err error) string {
	var u *Unsupported
	if !errors.As(err, &u) {
		return ""
	}
	for _, f := range refusedByDesign {
		if strings.Contains(u.Construct, f) {
			return f
		}
	}
	return ""
}
