package intrinsic

import (
	"testing"

	"sinew/internal/asl/jsonpath"
	"sinew/internal/jsonv"
)

// FuzzIntrinsic: no input may panic Parse or Eval, and every failure is a typed error.
func FuzzIntrinsic(f *testing.F) {
	for _, s := range []string{
		"States.Format('{} and {}', $.a, $.s)", "States.ArrayRange(1, 9, 2)", "States.MathRandom(1, 9, 3)",
		"States.JsonMerge($.o, $.o, false)", "States.StringSplit($.s, ' ')", "States.Hash($.s, 'SHA-256')",
		"States.Base64Decode(States.Base64Encode($.s))", "States.ArrayGetItem($.a, 1)", "States.UUID()",
		`States.Format('\{\} \' \\')`, "States.StringToJson('[1, {\"a\": 2}]')", "States.ArrayPartition($.a, 2)",
	} {
		f.Add(s)
	}
	doc, err := jsonv.DecodeString(`{"a": [1, 2, 2, "x", null], "s": "hello world", "o": {"k": [1]}, "n": 3.5}`)
	if err != nil {
		f.Fatal(err)
	}
	env := jsonpath.Env{Input: doc, Context: doc, Var: func(string) (any, bool) { return doc, true }}
	f.Fuzz(func(t *testing.T, s string) {
		_ = IsCall(s)
		e, err := Parse(s)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("Parse(%q): untyped error %T %v", s, err, err)
			}
			return
		}
		if _, err := e.Eval(env); err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Eval(%q): untyped error %T %v", s, err, err)
			}
		}
	})
}
