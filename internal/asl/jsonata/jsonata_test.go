package jsonata

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sinew/internal/jsonv"
)

func TestEval(t *testing.T) {
	vars := map[string]any{
		"states": map[string]any{"input": map[string]any{"a": int64(2), "list": []any{int64(1), int64(2), int64(3)}}},
		"answer": "42",
	}
	cases := []struct {
		expr string
		want string // JSON; "undefined" for no value
	}{
		{"$states.input.a + 1", "3"},
		{"$states.input.a / 4", "0.5"},
		{"$answer", `"42"`},
		{"$states.input.nope", "undefined"},
		{"$partition([1,2,3], 2)", "[[1,2],[3]]"},
		{"$partition([0], 1)", "[[0]]"},
		{"$range(0, 10, 3)", "[0,3,6,9]"},
		{"$range(1, 9, 9)", "1"},
		{"$hash('Hash this string', 'SHA-256')", `"1cac63f39fd68d8c531f27b807610fb3d50f0fc3f186995767fb6316e7200a3e"`},
		{"$parse('{\"x\":[1,true]}')", `{"x":[1,true]}`},
		{"$random(7) = $random(7)", "true"},
		{"$length($uuid())", "36"},
		{"$states.input.list[$ > 1]", "[2,3]"},
	}
	c := New()
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := c.Compile(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			v, defined, err := e.Eval(context.Background(), vars)
			if err != nil {
				t.Fatal(err)
			}
			got := "undefined"
			if defined {
				got = jsonv.EncodeString(v)
			}
			if got != tc.want {
				t.Fatalf("%s = %s, want %s", tc.expr, got, tc.want)
			}
		})
	}
}

func TestHashAlgorithms(t *testing.T) {
	// The SHA-256 case above is AWS's recorded digest for States.Hash("Hash this string", ...).
	if _, err := hashFn([]any{"x", "SHA-3"}); err == nil {
		t.Fatal("accepted an unknown algorithm")
	}
}

func TestCompileRefuses(t *testing.T) {
	for expr, want := range map[string]string{
		"$eval('1+1')": "T1006",
		"phone":        "Reference to 'phone' at the top level is not supported",
		"phone.number": "Reference to 'phone' at the top level is not supported",
		"1 +":          "",
		"$x ?: 1":      "", // JSONata 2.1 operators: AWS behaves like 2.0 and refuses them
	} {
		_, err := New().Compile(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", expr, err, want)
		}
	}
	for _, ok := range []string{"true", "null", "function($x){$x}(1)", "$states.input"} {
		if _, err := New().Compile(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

func TestConcurrentEvaluations(t *testing.T) {
	e, err := New().Compile("$n * 2")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for i := 0; i < 8; i++ {
		go func(i int) {
			for j := 0; j < 50; j++ {
				v, _, err := e.Eval(context.Background(), map[string]any{"n": int64(i)})
				if err == nil && v != int64(2*i) {
					err = errString("variables leaked between evaluations")
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}(i)
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestConcurrentContextFunctions: built-in functions that take the evaluation's context (here
// $uppercase() with no argument, and $string()) are shared by the library across expressions;
// concurrent evaluations must each see their own context (go test -race shows the race this guards).
func TestConcurrentContextFunctions(t *testing.T) {
	e, err := New().Compile(`$words.$uppercase() & "|" & $words.$string()`)
	if err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 200
	done := make(chan error, workers)
	for i := 0; i < workers; i++ {
		go func(i int) {
			w := fmt.Sprintf("w%d", i)
			want := strings.ToUpper(w) + "|" + w
			for j := 0; j < rounds; j++ {
				v, _, err := e.Eval(context.Background(), map[string]any{"words": w})
				if err == nil && v != want {
					err = fmt.Errorf("worker %d got %v, want %s: another evaluation's context", i, v, want)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}(i)
	}
	for i := 0; i < workers; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
