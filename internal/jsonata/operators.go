package jsonata

import (
	"cmp"
	"math"
)

func (ev *evaluator) evalBinary(expr *node, input any, env *frame) (any, error) {
	lhs, err := ev.evaluate(expr.lhs, input, env)
	if err != nil {
		return nil, err
	}
	op := expr.value.(string)
	if op == "and" || op == "or" {
		l := truthy(lhs)
		if op == "and" && !l {
			return false, nil
		}
		if op == "or" && l {
			return true, nil
		}
		rhs, err := ev.evaluate(expr.rhs, input, env)
		if err != nil {
			return nil, err
		}
		return truthy(rhs), nil
	}
	rhs, err := ev.evaluate(expr.rhs, input, env)
	if err != nil {
		return nil, err
	}
	var result any
	switch op {
	case "+", "-", "*", "/", "%":
		result, err = numericOp(lhs, rhs, op)
	case "=":
		result = lhs != nil && rhs != nil && deepEqual(lhs, rhs)
	case "!=":
		result = lhs != nil && rhs != nil && !deepEqual(lhs, rhs)
	case "<", "<=", ">", ">=":
		result, err = compareOp(lhs, rhs, op)
	case "&":
		result, err = ev.concat(lhs, rhs)
	case "..":
		result, err = ev.rangeOp(lhs, rhs)
	case "in":
		result = includes(lhs, rhs)
	}
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Position, e.Token = expr.position, op
		}
		return nil, err
	}
	return result, nil
}

func numericOp(lhs, rhs any, op string) (any, error) {
	if lhs != nil && !isNum(lhs) {
		if _, err := isNumeric(lhs); err != nil {
			return nil, err
		}
		return nil, &Error{Code: "T2001", Value: lhs}
	}
	if rhs != nil && !isNum(rhs) {
		if _, err := isNumeric(rhs); err != nil {
			return nil, err
		}
		return nil, &Error{Code: "T2002", Value: rhs}
	}
	if lhs == nil || rhs == nil {
		return nil, nil
	}
	l, r := lhs.(float64), rhs.(float64)
	switch op {
	case "+":
		return l + r, nil
	case "-":
		return l - r, nil
	case "*":
		return l * r, nil
	case "/":
		return l / r, nil
	}
	return math.Mod(l, r), nil
}

func compareOp(lhs, rhs any, op string) (any, error) {
	comparable := func(v any) bool {
		switch v.(type) {
		case nil, string, float64:
			return true
		}
		return false
	}
	if !comparable(lhs) || !comparable(rhs) {
		v := rhs
		if _, ok := lhs.(string); !ok {
			if _, ok := lhs.(float64); !ok {
				v = lhs
			}
		}
		return nil, &Error{Code: "T2010", Value: v}
	}
	if lhs == nil || rhs == nil {
		return nil, nil
	}
	switch l := lhs.(type) {
	case float64:
		if r, ok := rhs.(float64); ok {
			return compare(l, r, op), nil
		}
	case string:
		if r, ok := rhs.(string); ok {
			return compare(l, r, op), nil
		}
	}
	return nil, &Error{Code: "T2009", Value: lhs, Value2: rhs}
}

func compare[T float64 | string](l, r T, op string) bool {
	switch op {
	case "<":
		return l < r
	case "<=":
		return l <= r
	case ">":
		return l > r
	}
	return l >= r
}

func includes(lhs, rhs any) bool {
	if lhs == nil || rhs == nil {
		return false
	}
	if a, ok := rhs.(*Array); ok {
		for _, it := range a.Items {
			if strictEqual(it, lhs) {
				return true
			}
		}
		return false
	}
	return strictEqual(rhs, lhs)
}

func (ev *evaluator) concat(lhs, rhs any) (any, error) {
	l, r := "", ""
	var err error
	if lhs != nil {
		if l, err = toJSString(lhs); err != nil {
			return nil, err
		}
	}
	if rhs != nil {
		if r, err = toJSString(rhs); err != nil {
			return nil, err
		}
	}
	if err := ev.grow((len(l) + len(r)) / 64); err != nil {
		return nil, err
	}
	return l + r, nil
}

func isInteger(v any) bool {
	f, ok := v.(float64)
	return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
}

func (ev *evaluator) rangeOp(lhs, rhs any) (any, error) {
	if lhs != nil && !isInteger(lhs) {
		return nil, &Error{Code: "T2003", Value: lhs}
	}
	if rhs != nil && !isInteger(rhs) {
		return nil, &Error{Code: "T2004", Value: rhs}
	}
	if lhs == nil || rhs == nil {
		return nil, nil
	}
	l, r := lhs.(float64), rhs.(float64)
	if l > r {
		return nil, nil
	}
	size := r - l + 1
	if size > 1e7 {
		return nil, &Error{Code: "D2014", Value: size}
	}
	if err := ev.grow(int(size)); err != nil {
		return nil, err
	}
	out := &Array{seq: true, Items: make([]any, 0, int(size))}
	for v := l; v <= r; v++ {
		out.Items = append(out.Items, v)
	}
	return out, nil
}

func (ev *evaluator) evalUnary(expr *node, input any, env *frame) (any, error) {
	switch expr.value {
	case "-":
		v, err := ev.evaluate(expr.expression, input, env)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, nil
		}
		ok, err := isNumeric(v)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &Error{Code: "D1002", Position: expr.position, Token: "-", Value: v}
		}
		return -v.(float64), nil
	case "[":
		out := &Array{Items: make([]any, 0, len(expr.expressions))}
		for _, item := range expr.expressions {
			v, err := ev.evaluate(item, input, env)
			if err != nil {
				return nil, err
			}
			if v == nil {
				continue
			}
			if item.value == "[" {
				out.Items = append(out.Items, v)
			} else if a, ok := v.(*Array); ok {
				out.Items = append(out.Items, a.Items...)
			} else {
				out.Items = append(out.Items, v)
			}
		}
		if err := ev.grow(len(out.Items)); err != nil {
			return nil, err
		}
		if expr.consarray {
			out.cons = true
		}
		return out, nil
	case "{":
		return ev.evalGroup(expr, input, env)
	}
	return nil, nil
}

type groupEntry struct {
	data      any
	exprIndex int
}

func (ev *evaluator) evalGroup(expr *node, input any, env *frame) (any, error) {
	in, ok := input.(*Array)
	reduce := ok && in.tupleStream
	if !ok {
		in = newSeq(input)
	}
	items := in.Items
	if len(items) == 0 {
		items = []any{nil}
	}
	groups := map[string]*groupEntry{}
	var order []string
	for _, item := range items {
		if err := ev.tick(); err != nil {
			return nil, err
		}
		ienv, ctx := env, item
		if reduce {
			t := item.(tuple)
			ienv, ctx = frameFromTuple(env, t), t["@"]
		}
		for pi, pair := range expr.x.pairs {
			k, err := ev.evaluate(pair[0], ctx, ienv)
			if err != nil {
				return nil, err
			}
			if k == nil {
				continue
			}
			key, ok := k.(string)
			if !ok {
				return nil, &Error{Code: "T1003", Position: expr.position, Value: k}
			}
			if g, ok := groups[key]; ok {
				if g.exprIndex != pi {
					return nil, &Error{Code: "D1009", Position: expr.position, Value: key}
				}
				g.data = appendValues(g.data, item)
			} else {
				groups[key] = &groupEntry{data: item, exprIndex: pi}
				order = append(order, key)
			}
		}
	}
	result := NewObject(len(order))
	for _, key := range order {
		g := groups[key]
		ctx, genv := g.data, env
		if reduce {
			t := reduceTupleStream(g.data)
			ctx = t["@"]
			delete(t, "@")
			genv = frameFromTuple(env, t)
		}
		v, err := ev.evaluate(expr.x.pairs[g.exprIndex][1], ctx, genv)
		if err != nil {
			return nil, err
		}
		if v != nil {
			result.Set(key, v)
		}
	}
	return result, nil
}

func reduceTupleStream(v any) tuple {
	a, ok := v.(*Array)
	if !ok {
		t := v.(tuple)
		out := make(tuple, len(t))
		for k, x := range t {
			out[k] = x
		}
		return out
	}
	out := tuple{}
	for k, x := range a.Items[0].(tuple) {
		out[k] = x
	}
	for _, it := range a.Items[1:] {
		for k, x := range it.(tuple) {
			out[k] = appendValues(out[k], x)
		}
	}
	return out
}

// appendValues is $append: a sequence of both sides, flattening arrays one level.
func appendValues(a, b any) any {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := &Array{seq: true}
	if aa, ok := a.(*Array); ok {
		out.seq = aa.seq
		out.Items = append(out.Items, aa.Items...)
	} else {
		out.Items = append(out.Items, a)
	}
	if ba, ok := b.(*Array); ok {
		out.Items = append(out.Items, ba.Items...)
	} else {
		out.Items = append(out.Items, b)
	}
	return out
}

func (ev *evaluator) evalSort(expr *node, input *Array, env *frame) (*Array, error) {
	isTuple := input.tupleStream
	keyOf := func(item any, term sortTerm) (any, error) {
		ctx, fenv := item, env
		if isTuple {
			t := item.(tuple)
			ctx, fenv = t["@"], frameFromTuple(env, t)
		}
		return ev.evaluate(term.expression, ctx, fenv)
	}
	comp := func(a, b any) (bool, error) {
		comp := 0
		for _, term := range expr.x.terms {
			aa, err := keyOf(a, term)
			if err != nil {
				return false, err
			}
			bb, err := keyOf(b, term)
			if err != nil {
				return false, err
			}
			if aa == nil {
				if bb == nil {
					continue
				}
				comp = 1
				break
			}
			if bb == nil {
				comp = -1
				break
			}
			if c, err := compareSortKeys(aa, bb, expr.position); err != nil {
				return false, err
			} else if c != 0 {
				comp = c
				if term.descending {
					comp = -comp
				}
				break
			}
		}
		return comp == 1, nil
	}
	sorted, err := mergeSort(input.Items, comp)
	if err != nil {
		return nil, err
	}
	out := &Array{Items: sorted, seq: true, tupleStream: input.tupleStream}
	return out, nil
}

func compareSortKeys(a, b any, pos int) (int, error) {
	sortable := func(v any) bool {
		switch v.(type) {
		case string, float64:
			return true
		}
		return false
	}
	if !sortable(a) || !sortable(b) {
		v := b
		if !sortable(a) {
			v = a
		}
		return 0, &Error{Code: "T2008", Position: pos, Value: v}
	}
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok {
			return cmp.Compare(x, y), nil
		}
	case string:
		if y, ok := b.(string); ok {
			return cmp.Compare(x, y), nil
		}
	}
	return 0, &Error{Code: "T2007", Position: pos, Value: a, Value2: b}
}

// mergeSort is a stable sort where swap(a, b) tells that a must come after b.
func mergeSort(items []any, swap func(a, b any) (bool, error)) ([]any, error) {
	if len(items) <= 1 {
		return items, nil
	}
	mid := len(items) / 2
	left, err := mergeSort(items[:mid:mid], swap)
	if err != nil {
		return nil, err
	}
	right, err := mergeSort(items[mid:], swap)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items))
	i, j := 0, 0
	for i < len(left) && j < len(right) {
		s, err := swap(left[i], right[j])
		if err != nil {
			return nil, err
		}
		if s {
			out = append(out, right[j])
			j++
		} else {
			out = append(out, left[i])
			i++
		}
	}
	out = append(out, left[i:]...)
	return append(out, right[j:]...), nil
}
