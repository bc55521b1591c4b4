package pyexpr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

type builtinFn = func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)

func fn(name string, f builtinFn) *starlark.Builtin { return starlark.NewBuiltin(name, f) }

// builtins are Eval's predeclared names: Julep's allowed functions and constants, the modules of
// its stdlib table (as __mod_<name>), and the bridges the Starlark writer uses.
var builtins = starlark.StringDict{}

func init() {
	u := starlark.Universe
	for _, name := range []string{"abs", "all", "any", "bool", "dict", "enumerate", "float", "int", "len", "list", "max", "min", "range", "tuple", "zip", "set"} {
		builtins[name] = u[name]
	}
	for name, f := range map[string]builtinFn{
		"str": pyStrFn, "sum": sumFn, "round": roundFn, "map": mapFn, "reduce": reduceFn,
		"load_json": jsonLoads, "dump_json": jsonDumps, "load_yaml": yamlLoad, "extract_json": extractJSON,
		"search_regex": searchRegex, "match_regex": matchRegex,
		"__fmt": fmtFn, "__pow": powFn, "__attr": attrFn, "__method": methodFn, "__merge": mergeFn,
	} {
		builtins[name] = fn(name, f)
	}
	builtins["true"], builtins["false"], builtins["null"] = starlark.True, starlark.False, starlark.None
	builtins["NEWLINE"] = starlark.String("\n")
	for name, m := range modules() {
		builtins["__mod_"+name] = m
	}
}

func pyStrFn(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value = starlark.String("")
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 0, &x); err != nil {
		return nil, err
	}
	return starlark.String(pyStr(x)), nil
}

// pyStr is Python's str(): Python's spelling of floats, and repr inside containers.
func pyStr(v starlark.Value) string {
	if s, ok := v.(starlark.String); ok {
		return string(s)
	}
	return pyRepr(v)
}

func pyRepr(v starlark.Value) string {
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

func writeRepr(b *strings.Builder, v starlark.Value, depth int) {
	if depth > maxDepth {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case starlark.String:
		b.WriteString(pyQuote(string(x)))
	case starlark.Float:
		b.WriteString(pyFloat(float64(x)))
	case starlark.Bool:
		b.WriteString(map[bool]string{true: "True", false: "False"}[bool(x)])
	case starlark.NoneType:
		b.WriteString("None")
	case *starlark.Dict:
		b.WriteString("{")
		for i, it := range x.Items() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it[0], depth+1)
			b.WriteString(": ")
			writeRepr(b, it[1], depth+1)
		}
		b.WriteString("}")
	case *starlark.List, starlark.Tuple, *starlark.Set:
		open, close := "[", "]"
		if _, ok := x.(starlark.Tuple); ok {
			open, close = "(", ")"
		}
		n := 0
		it := x.(starlark.Iterable).Iterate()
		var e starlark.Value
		if _, ok := x.(*starlark.Set); ok {
			open, close = "{", "}"
		}
		b.WriteString(open)
		for it.Next(&e) {
			if n > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, depth+1)
			n++
		}
		it.Done()
		if _, ok := x.(starlark.Tuple); ok && n == 1 {
			b.WriteString(",")
		}
		b.WriteString(close)
	default:
		b.WriteString(v.String())
	}
}

// pyQuote is Python's repr of a str: single quotes unless the text has ' and no ".
func pyQuote(s string) string {
	q := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = `"`
	}
	var b strings.Builder
	b.WriteString(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case string(r) == q:
			b.WriteString(`\` + q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(q)
	return b.String()
}

// pyFloat is Python's repr of a float: the shortest round-trip digits, positional from 1e-4 to
// 1e16, with ".0" on integral values.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func sumFn(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var xs starlark.Iterable
	var start starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs(b.Name(), args, kw, "iterable", &xs, "start?", &start); err != nil {
		return nil, err
	}
	if _, ok := start.(starlark.String); ok {
		return nil, fmt.Errorf("sum() can't sum strings [use ''.join(seq) instead]")
	}
	acc := start
	it := xs.Iterate()
	defer it.Done()
	var e starlark.Value
	for it.Next(&e) {
		r, err := starlark.Binary(syntax.PLUS, acc, e)
		if err != nil {
			return nil, err
		}
		acc = r
	}
	return acc, nil
}

func roundFn(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var nd starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kw, "number", &x, "ndigits?", &nd); err != nil {
		return nil, err
	}
	if i, ok := x.(starlark.Int); ok {
		return i, nil
	}
	f, ok := starlark.AsFloat(x)
	if !ok {
		return nil, fmt.Errorf("round(): %s is not a number", x.Type())
	}
	if nd == starlark.None {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("cannot convert float %s to integer", pyFloat(f))
		}
		return starlark.NumberToInt(starlark.Float(math.RoundToEven(f)))
	}
	n, err := starlark.AsInt32(nd)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		p := math.Pow(10, float64(-n))
		return starlark.Float(math.RoundToEven(f/p) * p), nil
	}
	// Formatting rounds the exact binary value half-to-even, as Python's round does.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', n, 64), 64)
	return starlark.Float(r), nil
}

func mapFn(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var f starlark.Callable
	var xs starlark.Iterable
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 2, &f, &xs); err != nil {
		return nil, err
	}
	var out []starlark.Value
	it := xs.Iterate()
	defer it.Done()
	var e starlark.Value
	for it.Next(&e) {
		r, err := starlark.Call(t, f, starlark.Tuple{e}, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return starlark.NewList(out), nil
}

func reduceFn(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var f starlark.Callable
	var xs starlark.Iterable
	var acc starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 2, &f, &xs, &acc); err != nil {
		return nil, err
	}
	it := xs.Iterate()
	defer it.Done()
	var e starlark.Value
	for it.Next(&e) {
		if acc == nil {
			acc = e
			continue
		}
		r, err := starlark.Call(t, f, starlark.Tuple{acc, e}, nil)
		if err != nil {
			return nil, err
		}
		acc = r
	}
	if acc == nil {
		return nil, fmt.Errorf("reduce() of empty iterable with no initial value")
	}
	return acc, nil
}

func powFn(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, y := args[0], args[1]
	xi, xInt := x.(starlark.Int)
	yi, yInt := y.(starlark.Int)
	if xInt && yInt && yi.Sign() >= 0 {
		n, ok := yi.Int64()
		if !ok || n > 10000 {
			return nil, fmt.Errorf("exponent %s is too large", yi)
		}
		return starlark.MakeBigInt(new(bigInt).Exp(xi.BigInt(), yi.BigInt(), nil)), nil
	}
	xf, ok1 := starlark.AsFloat(x)
	yf, ok2 := starlark.AsFloat(y)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("unsupported operand type(s) for ** or pow(): '%s' and '%s'", x.Type(), y.Type())
	}
	if xf == 0 && yf < 0 {
		return nil, fmt.Errorf("0.0 cannot be raised to a negative power")
	}
	return starlark.Float(math.Pow(xf, yf)), nil
}

// attrFn is x.name: a dict's key (Box), or a member of a module or value.
func attrFn(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, name := args[0], string(args[1].(starlark.String))
	if d, ok := x.(*starlark.Dict); ok {
		v, found, err := d.Get(starlark.String(name))
		if err != nil {
			return nil, err
		}
		if dictMethods[name] {
			return nil, fmt.Errorf("%s", boxReason(name))
		}
		if found {
			return v, nil
		}
		return nil, fmt.Errorf("'dict' object has no attribute %q (no such key)", name)
	}
	if h, ok := x.(starlark.HasAttrs); ok {
		v, err := h.Attr(name)
		if err == nil && v != nil {
			return v, nil
		}
	}
	return nil, fmt.Errorf("'%s' object has no attribute %q", x.Type(), name)
}

// methodFn is x.name for a call: the value's method, or a Python method Starlark lacks.
func methodFn(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, name := args[0], string(args[1].(starlark.String))
	if name == "copy" {
		return fn("copy", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return x, nil
		}), nil
	}
	if m := pyMethod(x, name); m != nil {
		return m, nil
	}
	if h, ok := x.(starlark.HasAttrs); ok {
		v, err := h.Attr(name)
		if err == nil && v != nil {
			if m, ok := v.(*starlark.Builtin); ok {
				// A method's result (replace, join, ...) counts against the budget.
				return fn(name, charged(func(t *starlark.Thread, _ *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
					return starlark.Call(t, m, a, kw)
				})), nil
			}
			return v, nil
		}
	}
	if d, ok := x.(*starlark.Dict); ok {
		if v, found, _ := d.Get(starlark.String(name)); found {
			return v, nil
		}
	}
	return nil, fmt.Errorf("'%s' object has no attribute %q", x.Type(), name)
}

// mergeFn is {**a, k: v, **b}: the dicts' entries in order, later keys winning.
func mergeFn(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	out := starlark.NewDict(0)
	for _, a := range args {
		d, ok := a.(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("TypeError: '%s' object is not a mapping", a.Type())
		}
		for _, it := range d.Items() {
			if err := out.SetKey(it[0], it[1]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
