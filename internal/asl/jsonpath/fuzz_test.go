package jsonpath

import (
	"testing"

	"sinew/internal/jsonv"
)

const fuzzDoc = `{"a": {"b": [1, 2.5, "x", null, {"c": true}], "d": {"e": "f"}}, "arr": [{"k": 1}, {"k": "2"}, [], {}],
 "s": "text", "n": null, "Test\\\"\"Name\"": 1, "x.y": {"z": 0}}`

// FuzzParse: no input may panic Parse, ParseReference, Eval or Set, and an indefinite path always
// evaluates to an array.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"$", "$.a.b[0]", "$..c", "$.arr[?(@.k == 1)]", "$.a.b[1:3]", "$$.a", "$v.a", "$['x.y'].z"} {
		f.Add(s)
	}
	doc, err := jsonv.DecodeString(fuzzDoc)
	if err != nil {
		f.Fatal(err)
	}
	env := Env{Input: doc, Context: doc, Var: func(string) (any, bool) { return doc, true }}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err == nil {
			v, err := p.Eval(env)
			if err == nil && !p.Definite() {
				if _, ok := v.([]any); !ok {
					t.Fatalf("indefinite path %q gave %T", s, v)
				}
			}
			_, _ = p.Set(doc, int64(1))
			_ = p.String()
		}
		if r, err := ParseReference(s); err == nil {
			if !r.Definite() {
				t.Fatalf("reference path %q is not definite", s)
			}
			_, _ = r.Set(doc, "v")
			_, _ = r.Eval(env)
		}
	})
}
