package pyexpr

import (
	"context"
	"testing"

	asljsonata "sinew/internal/asl/jsonata"
)

// BenchmarkCompile translates every vendored Julep expression once per op; the baseline beside it
// is the engine's own JSONata compile of the results, which a state machine pays anyway.
func BenchmarkCompile(b *testing.B) {
	exprs := loadVendored(b)
	var compiled []string
	for _, e := range exprs {
		if js, err := Compile(e.Expr, julepNames); err == nil {
			compiled = append(compiled, js)
		}
	}
	b.Run("pyexpr.Compile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range exprs {
				_, _ = Compile(e.Expr, julepNames)
			}
		}
	})
	b.Run("baseline-jsonata.Compile", func(b *testing.B) {
		b.ReportAllocs()
		c := asljsonata.New()
		for b.Loop() {
			for _, js := range compiled {
				_, _ = c.Compile(js)
			}
		}
	})
}

// BenchmarkRun evaluates the test cases that compile, as JSONata (compiled once, as the engine
// does) and through Eval, per pass over all of them.
func BenchmarkRun(b *testing.B) {
	env := loadEnv(b)
	input := map[string]any{"states": map[string]any{"input": env}}
	var srcs []string
	var xs []interface {
		Eval(context.Context, map[string]any) (any, bool, error)
	}
	for _, src := range cases {
		js, err := Compile(src, testNames)
		if err != nil {
			continue
		}
		x, err := asljsonata.New().Compile(js)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, src)
		xs = append(xs, x)
	}
	ctx := context.Background()
	b.Run("jsonata", func(b *testing.B) {
		for b.Loop() {
			for _, x := range xs {
				_, _, _ = x.Eval(ctx, input)
			}
		}
	})
	b.Run("eval", func(b *testing.B) {
		for b.Loop() {
			for _, src := range srcs {
				_, _ = Eval(ctx, src, env)
			}
		}
	})
}
