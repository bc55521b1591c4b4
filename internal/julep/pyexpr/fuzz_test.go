package pyexpr

import (
	"context"
	"errors"
	"testing"
)

// FuzzCompile: any field value gives JSONata, *Unsupported or *SyntaxError, never a panic; and
// Eval over the same value ends with a value or an error of this package.
func FuzzCompile(f *testing.F) {
	for _, c := range cases {
		f.Add(c)
	}
	f.Add("$ f'{'")
	f.Add("$ ((((")
	f.Add(`$ "\x`)
	f.Fuzz(func(t *testing.T, src string) {
		_, err := Compile(src, testNames)
		var u *Unsupported
		var s *SyntaxError
		if err != nil && !errors.As(err, &u) && !errors.As(err, &s) {
			t.Fatalf("Compile(%q): %T %v", src, err, err)
		}
		_, _ = Classify(src, testNames)
		_, _ = Eval(context.Background(), src, map[string]any{"_": map[string]any{"a": []any{1.0, "x"}}})
	})
}
