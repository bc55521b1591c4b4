package jsonata

import (
	"math"
	"math/rand/v2"
)

type nativeFn = func(ev *evaluator, c *call, args []any) (any, error)

// builtins are JSONata's functions, bound at the root of every evaluation. It is read only.
var builtins = map[string]any{}

func define(name, sig string, arity int, fn nativeFn) {
	n := &Native{name: name, arity: arity, fn: fn}
	if sig != "" {
		n.sig = mustSignature(sig)
	}
	builtins[name] = n
}

func init() {
	defineAggregates()
	defineStrings()
	defineNumbers()
	defineBooleans()
	defineHigherOrder()
	defineObjects()
	defineArrays()
	defineEncoding()
	defineDateTime()
	define("eval", "<sx?:x>", 2, fnEval)
	define("clone", "<(oa)-:o>", 1, func(_ *evaluator, _ *call, a []any) (any, error) { return clone(a[0]), nil })
}

func arg(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return nil
}

func items(v any) []any {
	if a, ok := v.(*Array); ok {
		return a.Items
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

func defineAggregates() {
	define("sum", "<a<n>:n>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		total := 0.0
		for _, v := range items(a[0]) {
			total += v.(float64)
		}
		return total, nil
	})
	define("count", "<a:n>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		return float64(len(items(a[0]))), nil
	})
	extreme := func(pick func(a, b float64) float64) nativeFn {
		return func(_ *evaluator, _ *call, a []any) (any, error) {
			xs := items(a[0])
			if len(xs) == 0 {
				return nil, nil
			}
			m := xs[0].(float64)
			for _, v := range xs[1:] {
				m = pick(m, v.(float64))
			}
			return m, nil
		}
	}
	define("max", "<a<n>:n>", 1, extreme(math.Max))
	define("min", "<a<n>:n>", 1, extreme(math.Min))
	define("average", "<a<n>:n>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		xs := items(a[0])
		if len(xs) == 0 {
			return nil, nil
		}
		total := 0.0
		for _, v := range xs {
			total += v.(float64)
		}
		return total / float64(len(xs)), nil
	})
}

// toBoolean is $boolean: ok is false for undefined.
func toBoolean(v any) (b, ok bool) {
	switch x := v.(type) {
	case nil:
		return false, false
	case *Array:
		if len(x.Items) == 1 {
			b, _ := toBoolean(x.Items[0])
			return b, true
		}
		for _, it := range x.Items {
			if b, _ := toBoolean(it); b {
				return true, true
			}
		}
		return false, true
	case string:
		return x != "", true
	case float64:
		return x != 0 && !math.IsNaN(x), true
	case *Object:
		return x.Len() > 0, true
	case bool:
		return x, true
	}
	return false, true
}

func defineBooleans() {
	define("boolean", "<x-:b>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		if b, ok := toBoolean(a[0]); ok {
			return b, nil
		}
		return nil, nil
	})
	define("not", "<x-:b>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		if b, ok := toBoolean(a[0]); ok {
			return !b, nil
		}
		return nil, nil
	})
	define("exists", "<x:b>", 1, func(_ *evaluator, _ *call, a []any) (any, error) { return a[0] != nil, nil })
	define("type", "<x:s>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		switch a[0].(type) {
		case nil:
			return nil, nil
		case nullT:
			return "null", nil
		case float64:
			return "number", nil
		case string:
			return "string", nil
		case bool:
			return "boolean", nil
		case *Array:
			return "array", nil
		case *Lambda, *Native, *partialNative:
			return "function", nil
		}
		return "object", nil
	})
	define("error", "<s?:x>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		msg, _ := arg(a, 0).(string)
		if msg == "" {
			msg = "$error() function evaluated"
		}
		return nil, &Error{Code: "D3137", Msg: msg}
	})
	define("assert", "<bs?:x>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		if c, _ := a[0].(bool); !c {
			msg, _ := arg(a, 1).(string)
			if msg == "" {
				msg = "$assert() statement failed"
			}
			return nil, &Error{Code: "D3141", Msg: msg}
		}
		return nil, nil
	})
}

// hofArgs gives a callback the item, and its index and the whole array when it takes them.
func hofArgs(f any, v any, i any, whole any) []any {
	n := arity(f)
	out := []any{v}
	if n >= 2 {
		out = append(out, i)
	}
	if n >= 3 {
		out = append(out, whole)
	}
	return out
}

func defineHigherOrder() {
	define("map", "<af>", 2, func(ev *evaluator, c *call, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		out := newSeq()
		for i, v := range items(a[0]) {
			r, err := ev.apply(a[1], hofArgs(a[1], v, float64(i), a[0]), nil, c.env)
			if err != nil {
				return nil, err
			}
			if r != nil {
				out.Items = append(out.Items, r)
			}
		}
		return out, nil
	})
	define("filter", "<af>", 2, func(ev *evaluator, c *call, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		out := newSeq()
		for i, v := range items(a[0]) {
			r, err := ev.apply(a[1], hofArgs(a[1], v, float64(i), a[0]), nil, c.env)
			if err != nil {
				return nil, err
			}
			if truthy(r) {
				out.Items = append(out.Items, v)
			}
		}
		return out, nil
	})
	define("single", "<af?>", 2, fnSingle)
	define("reduce", "<afj?:j>", 3, fnReduce)
	define("sift", "<o-f?:o>", 2, func(ev *evaluator, c *call, a []any) (any, error) {
		o, _ := a[0].(*Object)
		out := NewObject(0)
		if o != nil {
			for _, k := range o.Keys() {
				v := o.vals[k]
				r, err := ev.apply(a[1], hofArgs(a[1], v, k, o), nil, c.env)
				if err != nil {
					return nil, err
				}
				if truthy(r) {
					out.Set(k, v)
				}
			}
		}
		if out.Len() == 0 {
			return nil, nil
		}
		return out, nil
	})
	define("each", "<o-f:a>", 2, func(ev *evaluator, c *call, a []any) (any, error) {
		out := newSeq()
		o, _ := a[0].(*Object)
		if o == nil {
			return out, nil
		}
		for _, k := range o.Keys() {
			r, err := ev.apply(a[1], hofArgs(a[1], o.vals[k], k, o), nil, c.env)
			if err != nil {
				return nil, err
			}
			if r != nil {
				out.Items = append(out.Items, r)
			}
		}
		return out, nil
	})
	define("zip", "<a+>", 0, func(_ *evaluator, _ *call, a []any) (any, error) {
		out := &Array{Items: []any{}}
		if len(a) == 0 {
			return out, nil
		}
		n := math.MaxInt
		for _, x := range a {
			n = min(n, len(items(x)))
		}
		if _, ok := a[0].(*Array); !ok {
			n = 0
		}
		for i := 0; i < n; i++ {
			t := &Array{}
			for _, x := range a {
				t.Items = append(t.Items, items(x)[i])
			}
			out.Items = append(out.Items, t)
		}
		return out, nil
	})
}

func fnSingle(ev *evaluator, c *call, a []any) (any, error) {
	if a[0] == nil {
		return nil, nil
	}
	found := false
	var result any
	for i, v := range items(a[0]) {
		ok := true
		if f := arg(a, 1); f != nil {
			r, err := ev.apply(f, hofArgs(f, v, float64(i), a[0]), nil, c.env)
			if err != nil {
				return nil, err
			}
			ok = truthy(r)
		}
		if ok {
			if found {
				return nil, &Error{Code: "D3138", Index: i}
			}
			result, found = v, true
		}
	}
	if !found {
		return nil, &Error{Code: "D3139"}
	}
	return result, nil
}

func fnReduce(ev *evaluator, c *call, a []any) (any, error) {
	if a[0] == nil {
		return nil, nil
	}
	f := a[1]
	n := arity(f)
	if n < 2 {
		return nil, &Error{Code: "D3050", Index: 1}
	}
	xs := items(a[0])
	var result any
	i := 0
	if init := arg(a, 2); init == nil && len(xs) > 0 {
		result, i = xs[0], 1
	} else {
		result = init
	}
	for ; i < len(xs); i++ {
		args := []any{result, xs[i]}
		if n >= 3 {
			args = append(args, float64(i))
		}
		if n >= 4 {
			args = append(args, a[0])
		}
		var err error
		if result, err = ev.apply(f, args, nil, c.env); err != nil {
			return nil, err
		}
	}
	return result, nil
}

func defineObjects() {
	define("keys", "<x-:a<s>>", 1, func(_ *evaluator, _ *call, a []any) (any, error) { return keysOf(a[0]), nil })
	define("lookup", "<x-s:x>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		return lookupField(a[0], a[1].(string)), nil
	})
	define("spread", "<x-:a<o>>", 1, func(_ *evaluator, _ *call, a []any) (any, error) { return spread(a[0]), nil })
	define("merge", "<a<o>:o>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		out := NewObject(0)
		for _, it := range items(a[0]) {
			if o, ok := it.(*Object); ok {
				for _, k := range o.Keys() {
					out.Set(k, o.vals[k])
				}
			}
		}
		return out, nil
	})
}

func keysOf(v any) *Array {
	out := newSeq()
	switch x := v.(type) {
	case *Array:
		seen := map[string]bool{}
		for _, it := range x.Items {
			for _, k := range keysOf(it).Items {
				if !seen[k.(string)] {
					seen[k.(string)] = true
					out.Items = append(out.Items, k)
				}
			}
		}
	case *Object:
		for _, k := range x.Keys() {
			out.Items = append(out.Items, k)
		}
	}
	return out
}

func spread(v any) any {
	switch x := v.(type) {
	case *Array:
		var out any = newSeq()
		for _, it := range x.Items {
			out = appendValues(out, spread(it))
		}
		return out
	case *Object:
		out := newSeq()
		for _, k := range x.Keys() {
			o := NewObject(1)
			o.Set(k, x.vals[k])
			out.Items = append(out.Items, o)
		}
		return out
	}
	return v
}

func defineArrays() {
	define("append", "<xx:a>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		return appendValues(a[0], a[1]), nil
	})
	define("reverse", "<a:a>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		arr, _ := a[0].(*Array)
		if arr == nil || len(arr.Items) <= 1 {
			return a[0], nil
		}
		out := &Array{Items: make([]any, len(arr.Items))}
		for i, v := range arr.Items {
			out.Items[len(arr.Items)-1-i] = v
		}
		return out, nil
	})
	define("sort", "<af?:a>", 2, fnSort)
	define("shuffle", "<a:a>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		arr, _ := a[0].(*Array)
		if arr == nil || len(arr.Items) <= 1 {
			return a[0], nil
		}
		out := &Array{Items: append([]any(nil), arr.Items...)}
		rand.Shuffle(len(out.Items), func(i, j int) { out.Items[i], out.Items[j] = out.Items[j], out.Items[i] })
		return out, nil
	})
	define("distinct", "<x:x>", 1, fnDistinct)
}

// fnDistinct is $distinct: scalars are found again through a set, arrays and objects by
// comparing them with those kept so far.
func fnDistinct(ev *evaluator, _ *call, a []any) (any, error) {
	arr, ok := a[0].(*Array)
	if !ok || len(arr.Items) <= 1 {
		return a[0], nil
	}
	out := &Array{seq: arr.seq}
	seen := map[any]bool{}
	var composite []any
	for _, v := range arr.Items {
		switch v.(type) {
		case *Array, *Object:
			dup := false
			for _, w := range composite {
				if err := ev.tick(); err != nil {
					return nil, err
				}
				if deepEqual(v, w) {
					dup = true
					break
				}
			}
			if !dup {
				composite = append(composite, v)
				out.Items = append(out.Items, v)
			}
		default:
			if !seen[v] {
				seen[v] = true
				out.Items = append(out.Items, v)
			}
		}
	}
	return out, nil
}

func fnSort(ev *evaluator, c *call, a []any) (any, error) {
	arr, _ := a[0].(*Array)
	if arr == nil {
		return nil, nil
	}
	if len(arr.Items) <= 1 {
		return arr, nil
	}
	var swap func(x, y any) (bool, error)
	if f := arg(a, 1); f != nil {
		swap = func(x, y any) (bool, error) {
			r, err := ev.apply(f, []any{x, y}, nil, c.env)
			if err != nil {
				return false, err
			}
			return truthy(r), nil
		}
	} else {
		if !isArrayOfNumbers(arr) && !isArrayOfStrings(arr) {
			return nil, &Error{Code: "D3070", Index: 1}
		}
		swap = func(x, y any) (bool, error) {
			if err := ev.tick(); err != nil {
				return false, err
			}
			if xs, ok := x.(string); ok {
				return xs > y.(string), nil
			}
			return x.(float64) > y.(float64), nil
		}
	}
	sorted, err := mergeSort(arr.Items, swap)
	if err != nil {
		return nil, err
	}
	return &Array{Items: sorted}, nil
}

// clone is a deep copy through JSON, as $clone is in JSONata (numbers keep 15 significant digits).
func clone(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case *Array:
		out := &Array{Items: make([]any, len(x.Items))}
		for i, it := range x.Items {
			c := clone(it)
			if c == nil {
				c = Null
			}
			out.Items[i] = c
		}
		return out
	case *Object:
		out := NewObject(x.Len())
		for _, k := range x.Keys() {
			if c := clone(x.vals[k]); c != nil {
				out.Set(k, c)
			}
		}
		return out
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Null
		}
		return toPrecision15(x)
	case *Lambda, *Native, *partialNative:
		return ""
	}
	return v
}

func fnEval(ev *evaluator, c *call, a []any) (any, error) {
	src, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	input := c.input
	if len(a) > 1 && a[1] != nil {
		input = a[1]
		if arr, ok := input.(*Array); ok && !arr.seq {
			input = &Array{Items: []any{arr}, seq: true, outerWrapper: true}
		}
	}
	ast, err := parse(src)
	if err != nil {
		return nil, &Error{Code: "D3120", Value: errMessage(err)}
	}
	r, err := ev.evaluate(ast, input, c.env)
	if err != nil {
		return nil, &Error{Code: "D3121", Value: errMessage(err)}
	}
	return r, nil
}

func errMessage(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Message()
	}
	return err.Error()
}
