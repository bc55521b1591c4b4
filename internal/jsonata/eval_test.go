package jsonata

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func evalString(t *testing.T, expr string, input any, opts Options) (string, error) {
	t.Helper()
	e, err := Compile(expr)
	if err != nil {
		return "", err
	}
	v, defined, err := e.Eval(context.Background(), input, opts)
	if err != nil {
		return "", err
	}
	if !defined {
		return "undefined", nil
	}
	b, err := MarshalJSON(v)
	return string(b), err
}

// TestBehaviour: what the issue found wrong in the 1.5 library, against JSONata 2.0.6's answers.
func TestBehaviour(t *testing.T) {
	input := map[string]any{"a": map[string]any{"b": []any{int64(1), int64(2)}}, "s": "x"}
	cases := []struct{ expr, want string }{
		{"$string(22/7)", `"3.14285714285714"`},
		{"22/7", "3.142857142857143"},
		{"$string({'a': 1.5e300, 'b': [1, 'x']}, true)", `"{\n  \"a\": 1.5e+300,\n  \"b\": [\n    1,\n    \"x\"\n  ]\n}"`},
		{"$formatInteger(1234, 'w')", `"one thousand, two hundred and thirty-four"`},
		{"$parseInteger('twelve', 'w')", "12"},
		{"$fromMillis(1510067557121, '[Y0001]-[M01]-[D01] [H01]:[m01]')", `"2017-11-07 15:12"`},
		{"$toMillis('2017-11-07', '[Y0001]-[M01]-[D01]')", "1510012800000"},
		{"a.b.{'v': $, 'p': %.b}", `[{"v":1,"p":[1,2]},{"v":2,"p":[1,2]}]`},
		{"a.b@$x#$i.($x * $i)", "[0,2]"},
		{"/* a comment */ a.`b`[1]", "2"},
		{"a.'b'[0]", "1"},
		{"false and $error('not evaluated')", "false"},
		{"true or $error('not evaluated')", "true"},
		{"nothing.here", "undefined"},
		{"$assert(false, 'no')", "error D3141"},
		{"$formatNumber(0, '0e0')", `"0e0"`},
		{"$formatNumber(1234.5678, '#,##0.00')", `"1,234.57"`},
		{"$formatBase(255, 16)", `"ff"`},
		{"$match('ab12cd34', /[0-9]+/).match", `["12","34"]`},
		{"$replace('hello', /l+/, function($m){ $uppercase($m.match) })", `"heLLo"`},
		{"$eval('1 + $x', {'x': 1})", "undefined"},
		{"($f := $substring(?, 1, 2); $f('abcd'))", `"bc"`},
		{"$reduce([1,2,3], function($a, $b){ $a + $b })", "6"},
		{"1e21", "1e+21"},
		{"0.000001", "0.000001"},
		{"1e-7", "1e-7"},
		{`$keys({"b": 1, "10": 2, "a": 3, "2": 4})`, `["2","10","b","a"]`},
		{`$string({"b": 1, "01": 2, "1": 3})`, `"{\"1\":3,\"b\":1,\"01\":2}"`},
	}
	for _, tc := range cases {
		got, err := evalString(t, tc.expr, input, Options{})
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				got = "error " + e.Code
			} else {
				got = "error " + err.Error()
			}
		}
		if got != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, got, tc.want)
		}
	}
}

func wantCode(t *testing.T, err error, code, fragment string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code || !strings.Contains(e.Message(), fragment) {
		t.Fatalf("got %v, want %s containing %q", err, code, fragment)
	}
}

// TestBounds: each bound ends an evaluation from inside, with U1001, and leaves no goroutine.
func TestBounds(t *testing.T) {
	before := runtime.NumGoroutine()
	loop := "($f := function($n){ $f($n + 1) }; $f(0))" // a tail call: no stack, no end
	_, err := evalString(t, loop, nil, Options{Timeout: 50 * time.Millisecond})
	wantCode(t, err, "U1001", "timeout")

	e, err := Compile(loop)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, _, err = e.Eval(ctx, nil, Options{})
	wantCode(t, err, "U1001", "context canceled")

	_, err = evalString(t, "($f := function($n){ 1 + $f($n + 1) }; $f(0))", nil, Options{MaxDepth: 300})
	wantCode(t, err, "U1001", "Stack overflow")

	_, err = evalString(t, "[1..1000000].[1, 2, 3]", nil, Options{MaxItems: 100000})
	wantCode(t, err, "U1001", "memory bound")

	_, err = evalString(t, "$pad('x', 100000000)", nil, Options{})
	wantCode(t, err, "U1001", "memory bound")

	// built-in functions' own loops check the bounds too
	_, err = evalString(t, "$distinct([1..30000].[$])", nil, Options{Timeout: 50 * time.Millisecond})
	wantCode(t, err, "U1001", "timeout")
	_, err = evalString(t, "[1..100000]{$string($ % 7): $}", nil, Options{Timeout: time.Nanosecond})
	wantCode(t, err, "U1001", "timeout")
	_, err = evalString(t, "$formatInteger(1e300, 'I')", nil, Options{})
	wantCode(t, err, "U1001", "roman")
	_, err = evalString(t, "$string([1..9000000])", nil, Options{})
	wantCode(t, err, "U1001", "memory bound")

	got, err := evalString(t, "($f := function($n){ $n = 0 ? 'done' : $f($n - 1) }; $f(100000))", nil, Options{MaxDepth: 500})
	if err != nil || got != `"done"` {
		t.Fatalf("tail recursion within bounds: %s, %v", got, err)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines before, %d after: an evaluation outlived its call", before, after)
	}
}

// TestConcurrentEvaluations: one compiled expression, many evaluations at once, each with its own
// bindings and context; -race checks that they share nothing writable.
func TestConcurrentEvaluations(t *testing.T) {
	e, err := Compile(`{"n": $n, "up": items.$uppercase(), "sorted": $sort(items)}`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				in := map[string]any{"items": []any{fmt.Sprintf("w%d", w), "a"}}
				v, _, err := e.Eval(context.Background(), in, Options{Bindings: map[string]any{"n": w}})
				if err != nil {
					errs <- err
					return
				}
				got, _ := MarshalJSON(v)
				want := fmt.Sprintf(`{"n":%d,"up":["W%d","A"],"sorted":["a","w%d"]}`, w, w, w)
				if string(got) != want {
					errs <- fmt.Errorf("got %s, want %s", got, want)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// BenchmarkConcurrent evaluates one expression over the same input serially and from every core
// (b.RunParallel): with nothing shared between evaluations, ns/op falls with the cores.
func BenchmarkConcurrent(b *testing.B) {
	e, err := Compile(`Account.Order.Product[Price > 30].{"name": $."Product Name", "total": Price * Quantity} ^(>total)`)
	if err != nil {
		b.Fatal(err)
	}
	data := loadDatasets(b).datasets["dataset5"]
	b.Run("serial", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, _, err := e.evalAny(context.Background(), data, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, _, err := e.evalAny(context.Background(), data, Options{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
