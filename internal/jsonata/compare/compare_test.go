// Package compare measures internal/jsonata against github.com/blues/jsonata-go v1.5.4,
// the library the engine used before, on the expressions of the official JSONata 2.0.6 test suite.
// It is a module of its own so that blues stays out of sinew's go.mod:
//
//	cd internal/jsonata/compare && go test -v -run TestBluesCount .   # blues' suite count
//	cd internal/jsonata/compare && go test -run '^$' -bench . .        # speed, both
package compare

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	jsonatalib "github.com/blues/jsonata-go"

	"sinew/internal/jsonata"
	"sinew/internal/jsonata/suite"
)

const suiteDir = "../testdata/jsonata-test-suite"

type bluesOutcome struct {
	v   any
	err error
}

// runBlues evaluates a case with blues, giving up after d: blues cannot be stopped, so a case it
// never finishes ($formatNumber(0, '0e0')) leaves its goroutine running until the process ends.
func runBlues(c *suite.Case, input []byte, d time.Duration) (any, error) {
	done := make(chan bluesOutcome, 1)
	go func() {
		var o bluesOutcome
		defer func() {
			if r := recover(); r != nil {
				o = bluesOutcome{err: errors.New("panic")}
			}
			done <- o
		}()
		x, err := jsonatalib.Compile(c.Expr)
		if err != nil {
			o.err = err
			return
		}
		if len(c.Bindings) > 0 {
			var b map[string]any
			if err := json.Unmarshal(c.Bindings, &b); err == nil && len(b) > 0 {
				if err := x.RegisterVars(b); err != nil {
					o.err = err
					return
				}
			}
		}
		var in any
		if input != nil {
			if err := json.Unmarshal(input, &in); err != nil {
				o.err = err
				return
			}
		}
		o.v, o.err = x.Eval(in)
	}()
	select {
	case o := <-done:
		return o.v, o.err
	case <-time.After(d):
		return nil, errors.New("did not return")
	}
}

func bluesPasses(c *suite.Case, input []byte) bool {
	v, err := runBlues(c, input, 2*time.Second)
	switch {
	case c.WantCode() != "":
		return err != nil
	case c.Undefined:
		return errors.Is(err, jsonatalib.ErrUndefined)
	case len(c.Result) > 0:
		if err != nil {
			return false
		}
		var want any
		if json.Unmarshal(c.Result, &want) != nil {
			return false
		}
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		var got any
		return json.Unmarshal(b, &got) == nil && reflect.DeepEqual(got, want)
	}
	return false
}

// TestBluesCount prints how many suite cases blues passes (an error case passes on any error, as
// blues' codes differ), the figure the evaluator replaced. It fails only if the suite cannot be read.
func TestBluesCount(t *testing.T) {
	cases, err := suite.Load(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := suite.Datasets(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	passed := 0
	for _, c := range cases {
		if c.Timelimit > 0 {
			continue // runaway expressions: blues cannot be bounded; counted as failing
		}
		in, err := c.Input(data)
		if err != nil {
			t.Fatal(err)
		}
		if bluesPasses(c, in) {
			passed++
		}
	}
	t.Logf("blues/jsonata-go v1.5.4: %d of %d suite cases pass", passed, len(cases))
}

// cpuTime is the process's CPU time (user and system, every thread, the garbage collector's
// included): on a shared machine it is steadier than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs f b.N times and reports its CPU time per op beside the wall clock's.
func measure(b *testing.B, f func()) {
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		f()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

func decodedInputs(cases []benchCase) []any {
	out := make([]any, len(cases))
	for i, bc := range cases {
		if bc.input != nil {
			_ = json.Unmarshal(bc.input, &out[i])
		}
	}
	return out
}

type benchCase struct {
	c     *suite.Case
	input []byte
	ours  *jsonata.Expr
	in    any
}

// oursPasses reports that the evaluator gives the case's expected result.
func oursPasses(c *suite.Case, x *jsonata.Expr, in any) bool {
	v, defined, err := x.Eval(context.Background(), in, jsonata.Options{Timeout: time.Second})
	switch {
	case err != nil:
		return false
	case c.Undefined:
		return !defined
	case !defined:
		return false
	}
	b, err := jsonata.MarshalJSON(v)
	if err != nil {
		return false
	}
	var got, want any
	return json.Unmarshal(b, &got) == nil && json.Unmarshal(c.Result, &want) == nil && reflect.DeepEqual(got, want)
}

// benchCases are the suite cases with a result (or undefined) that both evaluators get right,
// without a time limit of their own (the runaway-expression cases).
func benchCases(b *testing.B) []benchCase {
	cases, err := suite.Load(suiteDir)
	if err != nil {
		b.Fatal(err)
	}
	data, err := suite.Datasets(suiteDir)
	if err != nil {
		b.Fatal(err)
	}
	var out []benchCase
	for _, c := range cases {
		if c.Timelimit > 0 || c.WantCode() != "" || len(c.Bindings) > 2 { // bindings: blues keeps them on the compiled expression
			continue
		}
		input, err := c.Input(data)
		if err != nil {
			b.Fatal(err)
		}
		x, err := jsonata.Compile(c.Expr)
		if err != nil {
			continue
		}
		var in any
		if input != nil {
			if err := json.Unmarshal(input, &in); err != nil {
				continue
			}
		}
		if !oursPasses(c, x, in) || !bluesPasses(c, input) {
			continue
		}
		out = append(out, benchCase{c: c, input: input, ours: x, in: in})
	}
	b.Logf("%d suite expressions both evaluators get right", len(out))
	return out
}

// BenchmarkSuite: one op is every selected suite expression evaluated once by each evaluator, on
// its input decoded from JSON as the engine hands it over. compile+eval compiles each time (the
// old engine wrapper did, as blues binds variables on the compiled expression); compiled-once reuses the
// compiled expression, as the engine now does.
func BenchmarkSuite(b *testing.B) {
	all := benchCases(b)
	var light []benchCase // without the performance group, whose two cases outweigh all others
	for _, bc := range all {
		if !strings.HasPrefix(bc.c.ID, "performance/") {
			light = append(light, bc)
		}
	}
	b.Run("all", func(b *testing.B) { benchBoth(b, all) })
	b.Run("no-performance-group", func(b *testing.B) { benchBoth(b, light) })
}

func benchBoth(b *testing.B, cases []benchCase) {
	b.Run("sinew/compiled-once", func(b *testing.B) {
		inputs := decodedInputs(cases)
		measure(b, func() {
			for j, bc := range cases {
				_, _, _ = bc.ours.Eval(context.Background(), inputs[j], jsonata.Options{})
			}
		})
	})
	b.Run("blues/compiled-once", func(b *testing.B) {
		inputs := decodedInputs(cases)
		exprs := make([]*jsonatalib.Expr, len(cases))
		for j, bc := range cases {
			x, err := jsonatalib.Compile(bc.c.Expr)
			if err != nil {
				b.Fatal(err)
			}
			exprs[j] = x
		}
		measure(b, func() {
			for j := range cases {
				_, _ = exprs[j].Eval(inputs[j])
			}
		})
	})
	b.Run("sinew/compile+eval", func(b *testing.B) {
		measure(b, func() {
			for _, bc := range cases {
				x, err := jsonata.Compile(bc.c.Expr)
				if err != nil {
					b.Fatal(err)
				}
				var in any
				if bc.input != nil {
					_ = json.Unmarshal(bc.input, &in)
				}
				_, _, _ = x.Eval(context.Background(), in, jsonata.Options{})
			}
		})
	})
	b.Run("blues/compile+eval", func(b *testing.B) {
		measure(b, func() {
			for _, bc := range cases {
				x, err := jsonatalib.Compile(bc.c.Expr)
				if err != nil {
					b.Fatal(err)
				}
				var in any
				if bc.input != nil {
					_ = json.Unmarshal(bc.input, &in)
				}
				_, _ = x.Eval(in)
			}
		})
	})
}
