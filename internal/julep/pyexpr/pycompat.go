package pyexpr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
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
	builtins["range"] = fn("range", rangeFn)
	builtins["__mul"] = fn("__mul", sizedOp(syntax.STAR))
	builtins["__add"] = fn("__add", sizedOp(syntax.PLUS))
	for _, name := range []string{"__fmt", "str", "dump_json"} {
		inner := builtins[name]
		builtins[name] = fn(name, charged(func(t *starlark.Thread, _ *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			return starlark.Call(t, inner, a, kw)
		}))
	}
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

// Julep's bounds: simpleeval.MAX_STRING_LENGTH as Julep sets it (expressions.py) for the results
// of + and * on str and list, and safe_range's MAX_RANGE_SIZE (evaluator.py).
const (
	maxSeqLen   = 2_048_000
	maxRangeLen = 1_000_000
)

func seqLen(v starlark.Value) int {
	if s, ok := v.(starlark.String); ok {
		return len(s)
	}
	if l, ok := v.(starlark.Sequence); ok {
		return l.Len()
	}
	return -1
}

// MaxAllocBytes bounds what one Eval builds through +, *, f-strings, str() and methods (Starlark
// counts steps, not memory): a comprehension may repeat a large concatenation only so often.
const MaxAllocBytes = 64 << 20

type budget struct{ used int }

// charge counts v's size against the evaluation's budget.
func charge(t *starlark.Thread, v starlark.Value) error {
	n := 0
	switch x := v.(type) {
	case starlark.String:
		n = len(x)
	case starlark.Sequence:
		n = 16 * x.Len()
	default:
		return nil
	}
	b, _ := t.Local("budget").(*budget)
	if b == nil {
		return nil
	}
	b.used += n
	if b.used > MaxAllocBytes {
		return fmt.Errorf("MemoryError: the expression built more than %d bytes", MaxAllocBytes)
	}
	return nil
}

// charged wraps a builtin so that its result is charged.
func charged(f builtinFn) builtinFn {
	return func(t *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		v, err := f(t, b, a, kw)
		if err != nil {
			return nil, err
		}
		return v, charge(t, v)
	}
}

func sizedOp(op syntax.Token) builtinFn {
	return func(t *starlark.Thread, _ *starlark.Builtin, a starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		x, y := a[0], a[1]
		if op == syntax.STAR {
			for _, p := range [][2]starlark.Value{{x, y}, {y, x}} {
				if i, ok := p[1].(starlark.Int); ok && seqLen(p[0]) > 0 {
					n, ok := i.Int64()
					if !ok || n*int64(seqLen(p[0])) > maxSeqLen {
						return nil, fmt.Errorf("MemoryError: Sequence length exceeds %d", maxSeqLen)
					}
				}
			}
		} else if lx, ly := seqLen(x), seqLen(y); lx >= 0 && ly >= 0 && lx+ly > maxSeqLen {
			return nil, fmt.Errorf("MemoryError: Sequence length exceeds %d", maxSeqLen)
		}
		v, err := starlark.Binary(op, x, y)
		if err != nil {
			return nil, err
		}
		return v, charge(t, v)
	}
}

func rangeFn(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	r, err := starlark.Call(t, starlark.Universe["range"], args, kw)
	if err != nil {
		return nil, err
	}
	if starlark.Len(r) > maxRangeLen {
		return nil, fmt.Errorf("ValueError: Range size exceeds maximum of %d", maxRangeLen)
	}
	return r, nil
}
