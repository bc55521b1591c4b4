package pyexpr

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLiteralsAndForms(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"plain text", `"plain text"`},
		{"  padded  ", `"padded"`},
		{`say "hi"`, `"say \"hi\""`},
		{`a\nb`, `"a\nb"`}, // Julep reads every other string as an f'''...''' body, escapes and all
		{"$5 off", `"$5 off"`},
		{"$_.x", `"$_.x"`}, // "$" without its space is text
		{"", `""`},
	} {
		got, err := Compile(c.src, testNames)
		if err != nil || got != c.want {
			t.Errorf("Compile(%q) = %s, %v; want %s", c.src, got, err, c.want)
		}
	}
}

// TestPEP701 checks f-strings whose fields hold the string's own quotes (Python 3.12, which Julep
// runs; the python3 of the cross-check may be older, so these are checked here).
func TestPEP701(t *testing.T) {
	env := loadEnv(t)
	for _, c := range []struct {
		src  string
		want any
	}{
		{`$ f"{_["topic"]}!"`, "AI agents!"},
		{`$ f'{_['user']['name']} / {", ".join(_['words'][:2])}'`, "Ada / delta, alpha"},
		{`$ f"""{_["n"] + 1}"""`, "8"},
	} {
		js, err := Compile(c.src, testNames)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		got, err := evalJSONata(context.Background(), js, env)
		if err != nil || !sameJSON(got, c.want) {
			t.Errorf("%s: JSONata %v, %v; want %v", c.src, got, err, c.want)
		}
		ev, err := Eval(context.Background(), c.src, env)
		if err != nil || !sameJSON(ev, c.want) {
			t.Errorf("%s: Eval %v, %v; want %v", c.src, ev, err, c.want)
		}
	}
}

// TestRefusals: what is refused says the expression, the construct and why.
func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		src   string
		class Class
		words []string // in the message
	}{
		{"$ open('x')", Refused, []string{`"open('x')"`, "the name 'open'", "not one of Julep's names"}},
		{"$ sorted(_.nums)", Refused, []string{"the name 'sorted'"}},
		{"$ _.__class__", Refused, []string{"__class__", "start with _"}},
		{"$ _.items", Refused, []string{".items", "write x['items']"}},
		{"$ [i for i in _.items]", Refused, []string{"dict method items"}},
		{"$ _ is _", Refused, []string{"'is' operator", "compare with =="}},
		{"$ {{'a': 1}}", Refused, []string{"unhashable"}},
		{"$ markdown_to_html(_.s)", NeedsEval, []string{"markdown_to_html()", "Eval runs it"}},
		{"$ humanize_text_alpha(_.s)", Refused, []string{"Google Translate", "prompt step"}},
		{"$ nlp(_.s)", Refused, []string{"spaCy's Doc"}},
		{"$ datetime.now()", Refused, []string{"datetime has no member now"}},
		{"$ (x := 3)", Refused, []string{"walrus"}},
		{"$ list(map(lambda x: x * 2, _.nums))", Refused, []string{"a lambda", "use a comprehension"}},
		{"$ 'Hi {}'.format(_.topic)", Refused, []string{".format()", "use an f-string"}},
		{"$ {x for x in _.nums}", Refused, []string{"set comprehension"}},
		{"$ 1 +", Refused, []string{"syntax error", "offset 3"}},
		{"$ f'{_.n'", Refused, []string{"syntax error"}},
		{"$ _.topic[", Refused, []string{"syntax error"}},
		{"$ 6 & 3", NeedsEval, []string{"operator &"}},
		{"$ re.sub('a', 'b', _.s)", NeedsEval, []string{"re.sub()", "Eval runs it"}},
		{"$ '%s!' % _.s", NeedsEval, []string{"printf-style"}},
		{"$ _.s.title()", NeedsEval, []string{".title()"}},
		{"$ f'{_.n:^9}'", NeedsEval, []string{"centred"}},
		{"$ _.x", ToJSONata, nil},
	} {
		class, err := Classify(c.src, testNames)
		if class != c.class {
			t.Errorf("Classify(%q) = %s (%v); want %s", c.src, class, err, c.class)
			continue
		}
		if c.class == ToJSONata {
			continue
		}
		var u *Unsupported
		var s *SyntaxError
		if !errors.As(err, &u) && !errors.As(err, &s) {
			t.Errorf("Classify(%q): error %T %v is neither *Unsupported nor *SyntaxError", c.src, err, err)
			continue
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Classify(%q): %q lacks %q", c.src, err.Error(), w)
			}
		}
		if _, cerr := Compile(c.src, testNames); cerr == nil {
			t.Errorf("Compile(%q) succeeded though Classify says %s", c.src, class)
		}
	}
}

// TestEvalErrors: what raises in Python fails in Eval, with the expression in the message.
func TestEvalErrors(t *testing.T) {
	env := loadEnv(t)
	for _, src := range []string{
		"$ _.nums[100]", "$ _.missing", "$ _.topic + 1", "$ 1 / 0", "$ int('x')", "$ load_json('{')",
		"$ min([])", "$ _.user['nope']", "$ reduce(max, [])", "$ re.search('(', 'x')",
	} {
		_, err := Eval(context.Background(), src, env)
		var ee *EvalError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), strings.TrimPrefix(src, "$ ")) {
			t.Errorf("Eval(%q) = %v; want an *EvalError naming the expression", src, err)
		}
	}
}

func TestEvalIsBounded(t *testing.T) {
	_, err := Eval(context.Background(), "$ sum([x * y for x in range(100000) for y in range(100000)])", nil)
	if err == nil || !strings.Contains(err.Error(), "too many steps") {
		t.Errorf("unbounded loop: %v; want the step bound", err)
	}
	for _, src := range []string{"$ list(range(100000000))", "$ [1] * 100000000", "$ 'x' * 100000000", "$ 'ab' * 1500000 + 'cd' * 1500000",
		"$ [_ * 2000000 for x in range(100)]", "$ [_.replace('', '-' * 100000) for x in range(1000)]"} {
		if _, err := Eval(context.Background(), src, map[string]any{"_": "xy"}); err == nil || !strings.Contains(err.Error(), "exceeds") && !strings.Contains(err.Error(), "more than") {
			t.Errorf("Eval(%q) = %v; want Julep's size bound", src, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = Eval(ctx, "$ [x for x in range(1000000) if str(x) in str(x * 7)]", nil)
	if err == nil {
		t.Error("an evaluation outlived its context")
	}
}

func TestEvalOnlyJulepNames(t *testing.T) {
	// Starlark's own universe (print, getattr, dir, fail, ...) is out of reach.
	for _, src := range []string{"$ print('x')", "$ getattr(_, 'x')", "$ dir()", "$ fail('x')", "$ type(1)", "$ hasattr(_, 'x')"} {
		_, err := Eval(context.Background(), src, map[string]any{"_": map[string]any{"x": 1.0}})
		var u *Unsupported
		if !errors.As(err, &u) {
			t.Errorf("Eval(%q) = %v; want *Unsupported", src, err)
		}
	}
}

// TestNamesMapExpressions: a name may map to any JSONata expression.
func TestNamesMapExpressions(t *testing.T) {
	names := map[string]string{"_": `$states.input.items[0]`, "state": `$merge([{"a": 1}, $states.input.extra])`}
	js, err := Compile("$ f'{_.name}: {state.a + state.b}'", names)
	if err != nil {
		t.Fatal(err)
	}
	got, err := evalJSONata(context.Background(), js, map[string]any{
		"items": []any{map[string]any{"name": "first"}}, "extra": map[string]any{"b": 2.0},
	})
	if err != nil || got != "first: 3" {
		t.Errorf("%s = %v, %v", js, got, err)
	}
}

func TestNames(t *testing.T) {
	got, err := Names("$ [f'{x}: {steps[0].output}' for x in _.items() if x not in state] + [len(inputs), NEWLINE, json.dumps(true)]")
	want := []string{"_", "inputs", "state", "steps"}
	if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Names = %v, %v; want %v", got, err, want)
	}
	if got, _ := Names("plain"); len(got) != 0 {
		t.Errorf("Names of a literal = %v", got)
	}
}

func TestEvalTypedGoValues(t *testing.T) {
	v, err := Eval(context.Background(), "$ len(_.tags) + _.n", map[string]any{"_": struct {
		Tags []string `json:"tags"`
		N    int      `json:"n"`
	}{[]string{"a", "b"}, 3}})
	if err != nil || v != int64(5) {
		t.Errorf("Eval over a struct = %#v, %v; want 5", v, err)
	}
}
