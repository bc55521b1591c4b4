package jsonata

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"sinew/internal/jsonv"
)

// FuzzEval: any expression over any input compiles or fails with an *Error, and evaluates to a JSON
// value, to undefined, or to an *Error; never a panic, and never an evaluation without end (the
// context bounds each one).
func FuzzEval(f *testing.F) {
	input := `{"a": 2, "list": [1, 2, 3], "s": "hello world", "o": {"k": [1, {"b": null}]}, "n": 3.5}`
	for _, expr := range []string{
		// From TestEval and the recorded AWS executions (internal/asl/conformance).
		"$states.input.a + 1", "$states.input.a / 4", "$partition([1,2,3], 2)", "$range(0, 10, 3)",
		"$range(1, 9, 9)", "$hash('Hash this string', 'SHA-256')", `$parse('{"x":[1,true]}')`,
		"$random(7) = $random(7)", "$length($uuid())", "$states.input.list[$ > 1]",
		"$states.input.list ~> $map(function($v, $i) { $v * $i })", "$sum($states.input.list)",
		"$states.input.o.k[1].b", "$string($states.input)", "$keys($states.input)",
		`{"total": $count($states.input.list), "first": $states.input.list[0]}`,
		"$states.input.s ~> $uppercase() ~> $split(' ')", "$states.context.Execution.Name",
		"($f := function($n) { $n <= 1 ? 1 : $n * $f($n - 1) }; $f(10))",
		"$sort($states.input.list, function($a, $b) { $a < $b })", "$x", "1 +", "$eval('1')", "phone",
		"$partition([1], 0)", "$range(1, 2, 0)", "$hash(1, 'SHA-3')", "$parse('{')", "function($x){$x}",
		"$formatNumber(12345.6, '#,###.00')", "$toMillis('2024-01-01T00:00:00Z')",
	} {
		f.Add(expr, input)
	}
	f.Add("$states.input", `[1, "x", null, {"a": [true]}]`)
	f.Add("$states.input.a.b.c", `"not an object"`)
	f.Add("$states.input", `not json`)
	c := New()
	f.Fuzz(func(t *testing.T, expr, input string) {
		e, err := c.Compile(expr)
		if err != nil {
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("Compile(%q): untyped error %T %v", expr, err, err)
			}
			return
		}
		in, err := jsonv.DecodeString(input)
		if err != nil {
			in = input // a string input is as valid a state input as any
		}
		vars := map[string]any{
			"states": map[string]any{"input": in, "context": map[string]any{"Execution": map[string]any{"Name": "x"}}},
			"v":      in,
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		v, defined, err := e.Eval(ctx, vars)
		switch {
		case err != nil:
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("Eval(%q): untyped error %T %v", expr, err, err)
			}
			if v != nil || defined {
				t.Fatalf("Eval(%q) failed but gave %v (defined %v)", expr, v, defined)
			}
		case !defined:
			if v != nil {
				t.Fatalf("Eval(%q) is undefined but gave %v", expr, v)
			}
		default:
			if _, err := jsonv.Encode(v); err != nil {
				t.Fatalf("Eval(%q) gave a value that is not JSON: %T %v", expr, v, err)
			}
		}
	})
}

// TestBounds: endless recursion ends in an error (U1001) instead of the runtime's fatal stack
// overflow or an evaluation without end (found by reasoning about FuzzEval's property, kept in
// testdata/fuzz/FuzzEval), while recursion within the bound, higher-order functions, signatures
// and strings that look like lambdas behave as JSONata says.
func TestBounds(t *testing.T) {
	cases := []struct{ expr, want string }{ // want: JSON, or "error: <fragment>"
		{"($f := function($x){$f($x)}; $f(1))", "error: U1001"},              // a tail call: runs until stopped
		{"($g := function($h){$h($h)}; $g($g))", "error: U1001"},             // likewise
		{"($f := function($x){1 + $f($x)}; $f(1))", "error: Stack overflow"}, // not a tail call: too deep
		{"$formatNumber(0, '0e0')", `"0e0"`},                                 // jsonata-js never returns
		{"($f := function($n) { $n <= 1 ? 1 : $n * $f($n - 1) }; $f(10))", "3628800"},
		{"($f := function($n) { $n = 0 ? 0 : 1 + $f($n - 1) }; $f(1500))", "1500"},
		{"$map([1, 2, 3], function($v) { {'v': $v} })", `[{"v":1},{"v":2},{"v":3}]`},
		{"λ($x)<n:n>{ $x * 2 }(21)", "42"},
		{"(function($a, $b){ $a & $b })('function(){', '}')", `"function(){}"`},
		{"$filter([1, 2, 3], function($v){ $v > 1 }) ~> $sum()", "5"},
		{"$replace('a/b{c}', /[{}]/, '')", `"a/bc"`},
		{"(function(){ $undefinedThing })()", "undefined"},
		{"(function($x){ $x.a })({'a': [1, 2]})", "[1,2]"},
		{"$sort([3, 1, 2], function($l, $r){ $l > $r })", "[1,2,3]"},
		{"$states.input.list ~> $map(function($v, $i, $a) { $count($a) })", "[3,3,3]"},
	}
	vars := map[string]any{"states": map[string]any{"input": map[string]any{"list": []any{int64(1), int64(2), int64(3)}}}}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := New().Compile(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			v, defined, err := e.Eval(ctx, vars)
			if frag, ok := strings.CutPrefix(tc.want, "error: "); ok {
				var je *Error
				if err == nil || !errors.As(err, &je) || !strings.Contains(err.Error(), frag) {
					t.Fatalf("got %v, %v, want an *Error containing %q", v, err, frag)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := "undefined"
			if defined {
				got = jsonv.EncodeString(v)
			}
			if got != tc.want {
				t.Fatalf("= %s, want %s", got, tc.want)
			}
		})
	}
}
