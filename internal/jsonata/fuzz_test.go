package jsonata

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzEval: any expression over any input compiles or fails with an *Error, and evaluates to a
// value, to undefined or to an *Error, within its bounds; never a panic (Eval turns one into
// U1001 "the evaluation failed", which this target reports as the bug it is).
func FuzzEval(f *testing.F) {
	for _, expr := range []string{
		"Account.Order.Product[Price > 30].{'name': $.`Product Name`, 'total': Price * Quantity} ^(>total)",
		"a.b@$x#$i.($x * $i)", "a.b.{'v': $, 'p': %.b}", "$formatNumber(1234.5, '#,##0.00;(#)')",
		"$fromMillis(1510067557121, '[Y0001]-[M01]-[D01] [h]:[m] [P] [z]')", "$toMillis('4/4/2018 11:30 pm', '[D1]/[M1]/[Y0001] [h]:[m] [P]')",
		"$formatInteger(1234, 'w;o')", "$parseInteger('MCMLXXXIV', 'I')", "$replace('abc', /(b)/, '[$1]')",
		"$split('a,b,,c', /,/, 2)", "$match('x1y22', /[0-9]+/)", "| a | {'b': 1}, ['c'] |",
		"($f := function($n){ $n < 2 ? $n : $f($n-1) + $f($n-2) }; $f(10))", "$sort(*, function($a,$b){$a > $b})",
		"$eval('$sum($)', [1,2])", "$zip([1,2],[3])", "$single([1,2,3], function($v){$v = 2})",
		"$string({'a': [1, 2.5e-7]}, true)", "/* c */ $lookup($, 'a') ~> $type()", "$distinct([[1],[1],{'a':1}])",
	} {
		f.Add(expr, `{"a": {"b": [1, 2]}, "Account": {"Order": [{"Product": [{"Price": 34.45, "Quantity": 2, "Product Name": "Hat"}]}]}}`)
	}
	f.Fuzz(func(t *testing.T, expr, input string) {
		x, err := Compile(expr)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Compile(%q): untyped error %T %v", expr, err, err)
			}
			return
		}
		in, err := ParseJSON([]byte(input))
		if err != nil {
			in = input
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, _, err = x.evalAny(ctx, in, Options{MaxItems: 1_000_000})
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("Eval(%q): untyped error %T %v", expr, err, err)
		}
		if err != nil && strings.Contains(err.Error(), "the evaluation failed") {
			t.Fatalf("Eval(%q) panicked: %v", expr, err)
		}
	})
}
