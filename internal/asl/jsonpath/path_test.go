package jsonpath

import (
	"errors"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

func mustJSON(t testing.TB, s string) any {
	t.Helper()
	v, err := jsonv.DecodeString(s)
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

// The AWS docs' paths page example, extended with the Jayway forms.
const doc = `{
  "foo": 123,
  "bar": ["a", "b", "c"],
  "car": {"cdr": true},
  "jar": [{"a": 1}, {"a": 5}, {"a": 2}, {"a": 7}, {"a": 3}],
  "users": [{"year": 1997, "status": 0, "name": "ann"}, {"year": 1998, "status": 1, "name": "bob", "tag": null}],
  "nums": [0, 1, 2, 3, 4, 5],
  "odd key": {"x.y": "dotted"},
  "Test\\\"\"Name\"": "escaped",
  "deep": {"a": {"name": "n1", "b": {"name": "n2"}}, "list": [{"name": "n3"}]},
  "n": null,
  "s": "text"
}`

func TestEval(t *testing.T) {
	in := mustJSON(t, doc)
	tests := []struct {
		path     string
		want     string
		definite bool
	}{
		// AWS docs: reference paths
		{"$.foo", `123`, true},
		{"$.bar", `["a","b","c"]`, true},
		{"$.car.cdr", `true`, true},
		{"$", doc, true},
		// AWS docs: filter example
		{"$.jar[?(@.a >= 5)]", `[{"a":5},{"a":7}]`, false},
		// indexes, lists, slices
		{"$.bar[0]", `"a"`, true},
		{"$['bar'][2]", `"c"`, true},
		{"$.nums[1,3]", `[1,3]`, false},
		{"$.nums[2:4]", `[2,3]`, false},
		{"$.nums[4:]", `[4,5]`, false},
		{"$.nums[-2:]", `[4,5]`, false},
		{"$.nums[:2]", `[0,1]`, false},
		{"$.nums[:-4]", `[0,1]`, false},
		{"$.nums[(@.length-1)]", `5`, true},
		{"$.nums[9:]", `[]`, false},
		// wildcards and scans
		{"$.bar[*]", `["a","b","c"]`, false},
		{"$.car.*", `[true]`, false},
		{"$.users[*].name", `["ann","bob"]`, false},
		{"$.deep..name", `["n1","n2","n3"]`, false},
		{"$..cdr", `[true]`, false},
		// names
		{"$['odd key']['x.y']", `"dotted"`, true},
		{"$.users[0]['name','year']", `{"name":"ann","year":1997}`, true},
		{`$['Test\""Name"']`, `"escaped"`, true}, // recorded: names are taken verbatim
		{"$.n", `null`, true},
		// filters
		{"$.users[?(@.status == 0)]", `[{"name":"ann","status":0,"year":1997}]`, false},
		{"$.users[?(@.year <= 1997)].name", `["ann"]`, false},
		{"$.users[?(@.name == 'bob')].year", `[1998]`, false},
		{"$.users[?(@.name != 'bob')].year", `[1997]`, false},
		{"$.users[?(@.name =~ /B.*/i)].name", `["bob"]`, false},
		{"$.users[?(@.status)].name", `["ann","bob"]`, false},
		{"$.users[?(@.tag)].name", `[]`, false}, // Jayway 2.0: an explicit null does not exist
		{"$.users[?(!@.tag)].name", `["ann","bob"]`, false},
		{"$.users[?(@.year > 1996 && @.status == 1)].name", `["bob"]`, false},
		{"$.users[?(@.status == 1 || @.name == 'ann')].name", `["ann","bob"]`, false},
		{"$.users[?(@.year == $.users[1].year)].name", `["bob"]`, false},
		{"$.users[?(@.status == '0')].name", `["ann"]`, false}, // literals compare to numbers as decimals
		{"$.users[?(@.missing > 1)]", `[]`, false},
		{"$.[?(@.year < 1998)].name", `[]`, false}, // a filter on an object tests the object itself
		// indefinite paths that find nothing give [] (recorded, v2/base test_base)
		{"$.items[*]", `[]`, false},
		{"$.item.items[1:5].itemValue", `[]`, false},
		{"$.s[*]", `[]`, false},
		{"$.s[1:]", `[]`, false},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			p, err := Parse(tc.path)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if p.Definite() != tc.definite {
				t.Errorf("Definite() = %v, want %v", p.Definite(), tc.definite)
			}
			got, err := p.Eval(Env{Input: in})
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			if want := mustJSON(t, tc.want); !jsonv.Equal(got, want) {
				t.Errorf("got %s, want %s", jsonv.EncodeString(got), tc.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	in := mustJSON(t, doc)
	tests := []struct{ path, msg string }{
		// recorded: v2/base test_base and v2/scenarios test_catch_states_runtime
		{"$.NoSuchInputPath", "Invalid path '$.NoSuchInputPath' : No results for path: $['NoSuchInputPath']"},
		{"$.no.such.result.path", "Invalid path '$.no.such.result.path' : Missing property in path $['no']"},
		// Jayway's other texts
		{"$.car.missing", "Invalid path '$.car.missing' : No results for path: $['car']['missing']"},
		{"$.bar[7]", "Invalid path '$.bar[7]' : Index out of bounds when evaluating path $['bar'][7]"},
		{"$.foo.x", "Invalid path '$.foo.x' : Property ['x'] not found in path $['foo']"},
		{"$.n[0]", "Invalid path '$.n[0]' : The path $['n'] is null"},
		{"$.car[0].x", `Invalid path '$.car[0].x' : Filter: [0]['x'] can only be applied to arrays. Current context is: {"cdr":true}`},
		{"$.nums.sum()", "Invalid path '$.nums.sum()' : Property ['sum()'] not found in path $['nums']"}, // AWS has no path functions
		{"$.bar.length()", "Invalid path '$.bar.length()' : Property ['length()'] not found in path $['bar']"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			p, err := Parse(tc.path)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			_, err = p.Eval(Env{Input: in})
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != ErrNotFound {
				t.Fatalf("err = %v, want a not-found *Error", err)
			}
			if err.Error() != tc.msg {
				t.Errorf("message\n got %s\nwant %s", err.Error(), tc.msg)
			}
		})
	}
}

func TestRoots(t *testing.T) {
	env := Env{
		Input:   mustJSON(t, `{"a": 1}`),
		Context: mustJSON(t, `{"Execution": {"Name": "exec-1", "Input": {"a": 1}}, "Map": {"Item": {"Index": 3}}}`),
		Var: func(name string) (any, bool) {
			v, ok := map[string]any{"answer": int64(42), "obj": map[string]any{"k": []any{"v"}}}[name]
			return v, ok
		},
	}
	tests := []struct{ path, want string }{
		{"$$.Execution.Name", `"exec-1"`},
		{"$$.Map.Item.Index", `3`},
		{"$$", `{"Execution": {"Name": "exec-1", "Input": {"a": 1}}, "Map": {"Item": {"Index": 3}}}`},
		{"$answer", `42`},
		{"$obj.k[0]", `"v"`},
		{"$obj['k']", `["v"]`},
		{"$.a", `1`},
	}
	for _, tc := range tests {
		p, err := Parse(tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		got, err := p.Eval(env)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if !jsonv.Equal(got, mustJSON(t, tc.want)) {
			t.Errorf("%s = %s, want %s", tc.path, jsonv.EncodeString(got), tc.want)
		}
	}
	p, _ := Parse("$undefinedVar")
	if _, err := p.Eval(env); err == nil || !strings.Contains(err.Error(), "undefinedVar") {
		t.Errorf("undefined variable: err = %v", err)
	}
	if _, err := p.Eval(Env{}); err == nil {
		t.Error("a variable with no Var function must fail")
	}
}

func TestParseErrors(t *testing.T) {
	bad := []string{
		"", "foo", "a.b", "$.", "$..", "$.a..", "$[", "$['a'", "$['a]", "$[?(@.a == 1)", "$[abc]", "$[1:2:3]",
		"$$$", "$a b", "$.a b", "$[?()]", "$[?(@.a.* == 1)]", "$[?(@.a === 1 ==)]x", "$['a','b'].c",
		"$[(@.foo-1)]", "$.a[?(!@.b == 1)]", "$[?(@.a =~ /[/)]",
	}
	for _, s := range bad {
		p, err := Parse(s)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, p.toks)
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != ErrSyntax {
			t.Errorf("Parse(%q): %v is not a syntax *Error", s, err)
		}
		if !fault.Is(err, fault.InvalidInput) {
			t.Errorf("Parse(%q): %v is not a fault.InvalidInput", s, err)
		}
	}
}

func TestParseReference(t *testing.T) {
	for _, s := range []string{"$", "$.a", "$.a.b", "$['a b'][0].c", "$$.Execution.Input", "$var.x"} {
		if _, err := ParseReference(s); err != nil {
			t.Errorf("ParseReference(%q): %v", s, err)
		}
	}
	for _, s := range []string{"$.a[*]", "$..a", "$.a[1:2]", "$.a[0,1]", "$.a[?(@.b)]", "$['a','b']", "$.*", "$.a[-1]", "$.a[(@.length-1)]"} {
		if _, err := ParseReference(s); err == nil {
			t.Errorf("ParseReference(%q) succeeded; a reference path must be definite and simple", s)
		}
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		doc, path, value, want string
	}{
		{`{"a": 1}`, "$", `"r"`, `"r"`},
		{`{"a": 1}`, "$.b", `{"x": 1}`, `{"a": 1, "b": {"x": 1}}`},
		{`{"a": 1}`, "$.a", `2`, `{"a": 2}`},
		{`{"a": 1}`, "$.new.deep.path", `true`, `{"a": 1, "new": {"deep": {"path": true}}}`},
		{`{"detail": {"shipped": [1]}}`, "$.detail.shipped_output", `[2]`, `{"detail": {"shipped": [1], "shipped_output": [2]}}`},
		{`{"list": [{"a": 1}, {"a": 2}]}`, "$.list[1].b", `3`, `{"list": [{"a": 1}, {"a": 2, "b": 3}]}`},
		{`{"a": null}`, "$.a.b", `1`, `{"a": {"b": 1}}`},
		{`[1, 2]`, "$[0]", `9`, `[9, 2]`},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			d := mustJSON(t, tc.doc)
			before := jsonv.EncodeString(d)
			p, err := ParseReference(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Set(d, mustJSON(t, tc.value))
			if err != nil {
				t.Fatal(err)
			}
			if !jsonv.Equal(got, mustJSON(t, tc.want)) {
				t.Errorf("got %s, want %s", jsonv.EncodeString(got), tc.want)
			}
			if after := jsonv.EncodeString(d); after != before {
				t.Errorf("Set mutated its input: %s became %s", before, after)
			}
		})
	}
	for _, tc := range []struct{ doc, path string }{
		{`{"a": "text"}`, "$.a.b"},
		{`{"a": [1]}`, "$.a[3]"},
		{`{"a": {"b": 1}}`, "$.a[0]"},
		{`{}`, "$$.Execution"},
		{`{}`, "$v.a"},
	} {
		p, err := Parse(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Set(mustJSON(t, tc.doc), int64(1))
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != ErrResultPath {
			t.Errorf("Set(%s, %s): err = %v, want a result-path *Error", tc.doc, tc.path, err)
		}
	}
	p, _ := Parse("$.a[*]")
	if _, err := p.Set(map[string]any{}, 1); err == nil {
		t.Error("Set on an indefinite path must fail")
	}
}

func TestEvalDoesNotMutate(t *testing.T) {
	in := mustJSON(t, doc)
	before := jsonv.EncodeString(in)
	for _, s := range []string{"$..name", "$.users[?(@.status == 0)]", "$.users[0]['name','year']", "$.nums[1:3]"} {
		p, _ := Parse(s)
		out, err := p.Eval(Env{Input: in})
		if err != nil {
			t.Fatal(err)
		}
		if arr, ok := out.([]any); ok && len(arr) > 0 {
			arr[0] = "changed"
		}
	}
	if after := jsonv.EncodeString(in); after != before {
		t.Errorf("Eval results alias the input: %s became %s", before, after)
	}
}

func TestString(t *testing.T) {
	for _, s := range []string{"$.a", "$$.Execution.Name", "$x", " $.a "} {
		p, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if p.String() != s {
			t.Errorf("String() = %q, want %q", p.String(), s)
		}
	}
}

func TestEvalBudget(t *testing.T) {
	// 40 nested "a" objects and eight scans: C(40, 8) chains, far over the budget.
	var doc any = map[string]any{}
	for range 40 {
		doc = map[string]any{"a": doc}
	}
	p, err := Parse("$..a..a..a..a..a..a..a..a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Eval(Env{Input: doc})
	if err == nil || !strings.Contains(err.Error(), "exceeded") {
		t.Fatalf("err = %v, want the step budget error", err)
	}
}
