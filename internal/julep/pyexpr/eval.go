package pyexpr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// MaxSteps bounds one Eval in Starlark's execution steps (Julep bounds its evaluator at 1 s).
const MaxSteps = 2_000_000

// evalFunctions are the allowed functions Eval provides (the rest need Python libraries).
var evalFunctions = map[string]bool{
	"abs": true, "all": true, "any": true, "bool": true, "dict": true, "enumerate": true,
	"float": true, "int": true, "len": true, "list": true, "map": true, "max": true, "min": true,
	"round": true, "set": true, "str": true, "sum": true, "tuple": true, "zip": true, "reduce": true,
	"range": true, "load_json": true, "dump_json": true, "extract_json": true, "load_yaml": true,
	"search_regex": true, "match_regex": true,
}

// toStarlark writes the parsed field as Starlark source.
func toStarlark(f *field, env map[string]bool) (string, error) {
	w := &starWriter{env: env, b: &strings.Builder{}}
	if err := w.write(f.tree); err != nil {
		return "", named(err, f.expr)
	}
	return w.b.String(), nil
}

// Eval evaluates src (a "$ ..." expression, a template, or a literal) in Go with env as its
// bound names (JSON-shaped Go values: nil, bool, numbers, string, []any, map[string]any), for what
// Compile cannot translate. Only Julep's names and allowed functions are reachable; the
// evaluation is bounded by MaxSteps and ends when ctx does. The result is JSON-shaped: ints as
// int64, floats as float64, tuples and sets as []any.
func Eval(ctx context.Context, src string, env map[string]any) (any, error) {
	f, err := parse(src)
	if err != nil {
		return nil, err
	}
	if f.form == Literal {
		return f.lit, nil
	}
	bound := map[string]bool{}
	for k := range env {
		bound[k] = true
	}
	code, err := toStarlark(f, bound)
	if err != nil {
		return nil, err
	}
	globals := starlark.StringDict{}
	for k, v := range builtins {
		globals[k] = v
	}
	for k, v := range env {
		sv, err := toStar(v, 0)
		if err != nil {
			return nil, &EvalError{Expr: f.expr, Msg: fmt.Sprintf("the value of %s: %v", k, err)}
		}
		globals[k] = sv
	}
	thread := &starlark.Thread{Name: "julep-expression"}
	thread.SetMaxExecutionSteps(MaxSteps)
	thread.SetLocal("budget", &budget{})
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			thread.Cancel(ctx.Err().Error())
		case <-done:
		}
	}()
	v, err := starlark.EvalOptions(&syntax.FileOptions{Set: true}, thread, "expression", code, globals)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("expression %q: %w", f.expr, ctx.Err())
		}
		var ee *starlark.EvalError
		if errors.As(err, &ee) {
			return nil, &EvalError{Expr: f.expr, Msg: ee.Msg}
		}
		return nil, &EvalError{Expr: f.expr, Msg: err.Error()}
	}
	out, err := fromStar(v, 0)
	if err != nil {
		return nil, &EvalError{Expr: f.expr, Msg: err.Error()}
	}
	return out, nil
}

const maxDepth = 100

// toStar converts a JSON-shaped Go value. An integral float64 becomes an int: JSON decoders
// in Go give float64 for every number, where Python's json gives int for "3".
func toStar(v any, depth int) (starlark.Value, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deeply")
	}
	switch x := v.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(x), nil
	case string:
		return starlark.String(x), nil
	case int:
		return starlark.MakeInt(x), nil
	case int64:
		return starlark.MakeInt64(x), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return starlark.MakeInt64(int64(x)), nil
		}
		return starlark.Float(x), nil
	case interface{ Int64() (int64, error) }: // json.Number
		if i, err := x.Int64(); err == nil {
			return starlark.MakeInt64(i), nil
		}
		f, err := x.(interface{ Float64() (float64, error) }).Float64()
		return starlark.Float(f), err
	case []any:
		l := make([]starlark.Value, len(x))
		for i, e := range x {
			sv, err := toStar(e, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = sv
		}
		return starlark.NewList(l), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := starlark.NewDict(len(x))
		for _, k := range keys {
			sv, err := toStar(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			_ = d.SetKey(starlark.String(k), sv)
		}
		return d, nil
	}
	// Other Go values (typed slices and maps, structs) go through their JSON form.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%T is not a JSON value: %v", v, err)
	}
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, err
	}
	return toStar(g, depth+1)
}

// fromStar converts a result back to JSON-shaped Go; dict keys are written as Python's str.
func fromStar(v starlark.Value, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("result nested too deeply")
	}
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.String:
		return string(x), nil
	case starlark.Int:
		if i, ok := x.Int64(); ok {
			return i, nil
		}
		f, _ := new(big.Float).SetInt(x.BigInt()).Float64()
		return f, nil
	case starlark.Float:
		return float64(x), nil
	case starlark.Iterable:
		if d, ok := x.(*starlark.Dict); ok {
			out := make(map[string]any, d.Len())
			for _, it := range d.Items() {
				k, ok := starlark.AsString(it[0])
				if !ok {
					k = pyStr(it[0])
				}
				e, err := fromStar(it[1], depth+1)
				if err != nil {
					return nil, err
				}
				out[k] = e
			}
			return out, nil
		}
		out := []any{}
		it := x.Iterate()
		defer it.Done()
		var e starlark.Value
		for it.Next(&e) {
			g, err := fromStar(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	}
	return nil, fmt.Errorf("the result is a %s, which has no JSON form", v.Type())
}
