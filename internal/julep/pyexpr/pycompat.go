package pyexpr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
)

// Where Starlark's builtins differ from Python's, Eval's differ from Starlark's: a str is
// iterable (by character), len counts characters, float() strips spaces, and a few methods
// Python has and Starlark lacks are added.

// chars is a str as Python iterates it.
func chars(s string) *starlark.List {
	out := make([]starlark.Value, 0, len(s))
	for _, r := range s {
		out = append(out, starlark.String(string(r)))
	}
	return starlark.NewList(out)
}

// iterable makes a str argument iterable.
func iterable(v starlark.Value) starlark.Value {
	if s, ok := v.(starlark.String); ok {
		return chars(string(s))
	}
	return v
}

// withStrIter wraps a Starlark builtin so that its str arguments iterate as Python's do; only
// says which positional arguments are iterables (nil: all).
func withStrIter(b *starlark.Builtin, only func(n, i int) bool) *starlark.Builtin {
	return starlark.NewBuiltin(b.Name(), func(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		a := make(starlark.Tuple, len(args))
		for i, x := range args {
			a[i] = x
			if only == nil || only(len(args), i) {
				a[i] = iterable(x)
			}
		}
		return starlark.Call(t, b, a, kw)
	})
}

func init() {
	u := starlark.Universe
	first := func(_, i int) bool { return i == 0 }
	single := func(n, i int) bool { return n == 1 }
	for name, only := range map[string]func(int, int) bool{
		"list": first, "tuple": first, "set": first, "enumerate": first, "zip": nil, "any": first, "all": first,
		"min": single, "max": single, "dict": first,
	} {
		builtins[name] = withStrIter(u[name].(*starlark.Builtin), only)
	}
	for name, only := range map[string]func(int, int) bool{
		"map": func(_, i int) bool { return i == 1 }, "reduce": func(_, i int) bool { return i == 1 }, "sum": first,
	} {
		builtins[name] = withStrIter(builtins[name].(*starlark.Builtin), only)
	}
	builtins["len"] = fn("len", lenFn)
	builtins["float"] = fn("float", floatFn)
	builtins["__iter"] = fn("__iter", func(_ *starlark.Thread, _ *starlark.Builtin, a starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		return iterable(a[0]), nil
	})
}

func lenFn(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &x); err != nil {
		return nil, err
	}
	if s, ok := x.(starlark.String); ok {
		return starlark.MakeInt(utf8.RuneCountInString(string(s))), nil
	}
	if n := starlark.Len(x); n >= 0 {
		return starlark.MakeInt(n), nil
	}
	return nil, fmt.Errorf("object of type '%s' has no len()", x.Type())
}

func floatFn(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	if len(args) == 1 {
		if s, ok := args[0].(starlark.String); ok {
			f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(string(s)), "_", ""), 64)
			if err != nil {
				return nil, fmt.Errorf("could not convert string to float: %s", pyQuote(string(s)))
			}
			return starlark.Float(f), nil
		}
	}
	return starlark.Call(t, starlark.Universe["float"], args, kw)
}

// pyMethod gives the Python methods Starlark's values lack.
func pyMethod(x starlark.Value, name string) starlark.Value {
	switch v := x.(type) {
	case *starlark.List:
		if name == "count" {
			return fn("count", func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
				var y starlark.Value
				if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 1, &y); err != nil {
					return nil, err
				}
				n := 0
				for i := 0; i < v.Len(); i++ {
					if eq, err := starlark.Equal(v.Index(i), y); err == nil && eq {
						n++
					}
				}
				return starlark.MakeInt(n), nil
			})
		}
	case starlark.String:
		if name == "zfill" {
			return fn("zfill", func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
				var w int
				if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 1, &w); err != nil {
					return nil, err
				}
				s := string(v)
				n := utf8.RuneCountInString(s)
				if n >= w {
					return v, nil
				}
				sign := ""
				if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
					sign, s = s[:1], s[1:]
				}
				return starlark.String(sign + strings.Repeat("0", w-n) + s), nil
			})
		}
	}
	return nil
}
