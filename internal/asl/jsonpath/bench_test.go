package jsonpath

import (
	"testing"

	"sinew/internal/jsonv"
)

var benchPaths = []struct{ name, path string }{
	{"field", "$.detail.call.id"},
	{"index", "$.detail.items[3].name"},
	{"context", "$$.Execution.Input.agent_id"},
	{"wildcard", "$.detail.items[*].name"},
	{"filter", "$.detail.items[?(@.n >= 5)].name"},
	{"scan", "$..name"},
}

func benchDoc(b *testing.B) Env {
	items := make([]any, 10)
	for i := range items {
		items[i] = map[string]any{"n": int64(i), "name": "item"}
	}
	in := map[string]any{"detail": map[string]any{"call": map[string]any{"id": "call_1"}, "items": items}}
	ctx, _ := jsonv.DecodeString(`{"Execution": {"Input": {"agent_id": "a1"}}}`)
	return Env{Input: in, Context: ctx}
}

// BenchmarkParseEval: a path parsed and evaluated each time (the engine's worst case).
func BenchmarkParseEval(b *testing.B) {
	env := benchDoc(b)
	for _, bp := range benchPaths {
		b.Run(bp.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := Parse(bp.path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Eval(env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEval: a path parsed once, as the engine does per definition.
func BenchmarkEval(b *testing.B) {
	env := benchDoc(b)
	for _, bp := range benchPaths {
		p, err := Parse(bp.path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bp.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Eval(env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSet(b *testing.B) {
	env := benchDoc(b)
	p, _ := ParseReference("$.detail.result")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Set(env.Input, "r"); err != nil {
			b.Fatal(err)
		}
	}
}
