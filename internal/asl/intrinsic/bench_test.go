package intrinsic

import (
	"testing"

	"sinew/internal/asl/jsonpath"
)

var benchExprs = []struct{ name, expr string }{
	{"format", "States.Format('arn:aws:iam::{}:role/{}', $.account, $.role)"},
	{"nested", "States.ArrayGetItem(States.StringSplit($.arn, ':'), States.MathAdd(States.ArrayLength(States.StringSplit($.arn, ':')), -1))"},
	{"json", "States.JsonToString(States.JsonMerge($.a, $.b, false))"},
	{"hash", "States.Hash($.role, 'SHA-256')"},
}

func benchEnv() jsonpath.Env {
	return jsonpath.Env{Input: map[string]any{
		"account": "111111111111", "role": "sinew-executor", "arn": "arn:aws:states:eu-west-1:111111111111:stateMachine:tool_call",
		"a": map[string]any{"x": int64(1), "y": []any{"p"}}, "b": map[string]any{"y": 2.5},
	}}
}

func BenchmarkParseEval(b *testing.B) {
	env := benchEnv()
	for _, be := range benchExprs {
		b.Run(be.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e, err := Parse(be.expr)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.Eval(env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEval(b *testing.B) {
	env := benchEnv()
	for _, be := range benchExprs {
		e, err := Parse(be.expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(be.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Eval(env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
