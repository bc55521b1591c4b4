package jsonata

import (
	"context"
	"math"
	"time"
)

// evaluator is the state of one evaluation: its bounds and counters. Nothing in it is shared with
// another evaluation, so evaluations run in parallel without locks.
type evaluator struct {
	ctx      context.Context
	deadline time.Time
	maxDepth int
	maxItems int
	depth    int
	steps    int
	items    int
	now      time.Time
}

// checkEvery is how many evaluation steps pass between checks of the context and the deadline.
const checkEvery = 256

func (ev *evaluator) enter() error {
	ev.depth++
	if ev.maxDepth > 0 && ev.depth > ev.maxDepth {
		return &Error{Code: "U1001", Msg: "Stack overflow error: Check for non-terminating recursive function.  Consider rewriting as tail-recursive."}
	}
	ev.steps++
	if ev.steps%checkEvery == 0 {
		return ev.check()
	}
	return nil
}

// tick counts one step of a built-in function's own loop, checking the bounds as enter does.
func (ev *evaluator) tick() error {
	ev.steps++
	if ev.steps%checkEvery == 0 {
		return ev.check()
	}
	return nil
}

func (ev *evaluator) check() error {
	if ev.ctx != nil {
		if err := ev.ctx.Err(); err != nil {
			return &Error{Code: "U1001", Msg: "Expression evaluation stopped: " + err.Error()}
		}
	}
	if !ev.deadline.IsZero() && time.Now().After(ev.deadline) {
		return &Error{Code: "U1001", Msg: "Expression evaluation timeout: Check for infinite loop"}
	}
	return nil
}

// grow counts n more items allocated by the evaluation against its bound.
func (ev *evaluator) grow(n int) error {
	ev.items += n
	if ev.maxItems > 0 && ev.items > ev.maxItems {
		return &Error{Code: "U1001", Msg: "Expression evaluation exceeded its memory bound: more than " + itoa(ev.maxItems) + " values"}
	}
	return nil
}

func (ev *evaluator) evaluate(expr *node, input any, env *frame) (any, error) {
	if err := ev.enter(); err != nil {
		return nil, err
	}
	result, err := ev.evalNode(expr, input, env)
	ev.depth--
	if err != nil {
		return nil, err
	}
	for _, p := range expr.predicate {
		if result, err = ev.evalFilter(p.expr, result, env); err != nil {
			return nil, err
		}
	}
	if expr.typ != "path" && expr.group != nil {
		if result, err = ev.evalGroup(expr.group, result, env); err != nil {
			return nil, err
		}
	}
	if a, ok := result.(*Array); ok && a.seq && !a.tupleStream {
		if expr.keepArray {
			a.keepSingleton = true
		}
		switch len(a.Items) {
		case 0:
			return nil, nil
		case 1:
			if !a.keepSingleton {
				return a.Items[0], nil
			}
		}
	}
	return result, nil
}

func (ev *evaluator) evalNode(expr *node, input any, env *frame) (any, error) {
	switch expr.typ {
	case "path":
		return ev.evalPath(expr, input, env)
	case "binary":
		return ev.evalBinary(expr, input, env)
	case "unary":
		return ev.evalUnary(expr, input, env)
	case "name":
		return lookupField(input, expr.value.(string)), nil
	case "string", "number", "value":
		return expr.value, nil
	case "wildcard":
		return evalWildcard(input), nil
	case "descendant":
		return evalDescendants(input), nil
	case "parent":
		return env.lookup(expr.slot.label), nil
	case "condition":
		c, err := ev.evaluate(expr.x.condition, input, env)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return ev.evaluate(expr.x.then, input, env)
		}
		if expr.x.els != nil {
			return ev.evaluate(expr.x.els, input, env)
		}
		return nil, nil
	case "block":
		var result any
		f := newFrame(env)
		for _, e := range expr.expressions {
			var err error
			if result, err = ev.evaluate(e, input, f); err != nil {
				return nil, err
			}
		}
		return result, nil
	case "bind":
		v, err := ev.evaluate(expr.rhs, input, env)
		if err != nil {
			return nil, err
		}
		env.bind(expr.lhs.value.(string), v)
		return v, nil
	case "regex":
		return regexMatcher(expr.value.(*regexSpec), expr.position), nil
	case "function":
		return ev.evalFunction(expr, input, env, nil, false)
	case "variable":
		name := expr.value.(string)
		if name == "" {
			if a, ok := input.(*Array); ok && a.outerWrapper && len(a.Items) > 0 {
				return a.Items[0], nil
			}
			return input, nil
		}
		return env.lookup(name), nil
	case "lambda":
		return &Lambda{params: expr.arguments, body: expr.body, sig: expr.x.signature, thunk: expr.x.thunk, input: input, env: env}, nil
	case "partial":
		return ev.evalPartial(expr, input, env)
	case "apply":
		return ev.evalApply(expr, input, env)
	case "transform":
		return ev.transformer(expr, env), nil
	case "sort":
		a, ok := input.(*Array)
		if !ok {
			a = newSeq(input)
		}
		return ev.evalSort(expr, a, env)
	}
	return nil, nil
}

func truthy(v any) bool {
	b, _ := toBoolean(v)
	return b
}

func lookupField(input any, key string) any {
	switch x := input.(type) {
	case *Array:
		out := newSeq()
		for _, it := range x.Items {
			r := lookupField(it, key)
			if r == nil {
				continue
			}
			if ra, ok := r.(*Array); ok {
				out.Items = append(out.Items, ra.Items...)
			} else {
				out.Items = append(out.Items, r)
			}
		}
		return out
	case *Object:
		v, _ := x.Get(key)
		return v
	}
	return nil
}

func evalWildcard(input any) any {
	out := newSeq()
	if a, ok := input.(*Array); ok && a.outerWrapper && len(a.Items) > 0 {
		input = a.Items[0]
	}
	var vals []any
	switch x := input.(type) {
	case *Object:
		for _, k := range x.Keys() {
			vals = append(vals, x.vals[k])
		}
	case *Array:
		vals = x.Items
	}
	{
		for _, v := range vals {
			if a, ok := v.(*Array); ok {
				out.Items = append(out.Items, flatten(a, nil)...)
			} else {
				out.Items = append(out.Items, v)
			}
		}
	}
	return out
}

func flatten(v any, acc []any) []any {
	if a, ok := v.(*Array); ok {
		for _, it := range a.Items {
			acc = flatten(it, acc)
		}
		return acc
	}
	return append(acc, v)
}

func evalDescendants(input any) any {
	if input == nil {
		return nil
	}
	out := newSeq()
	recurseDescendants(input, out)
	if len(out.Items) == 1 {
		return out.Items[0]
	}
	return out
}

func recurseDescendants(input any, out *Array) {
	switch x := input.(type) {
	case *Array:
		for _, it := range x.Items {
			recurseDescendants(it, out)
		}
	case *Object:
		out.Items = append(out.Items, x)
		for _, k := range x.Keys() {
			recurseDescendants(x.vals[k], out)
		}
	default:
		out.Items = append(out.Items, x)
	}
}

func (ev *evaluator) evalPath(expr *node, input any, env *frame) (any, error) {
	var inSeq *Array
	if a, ok := input.(*Array); ok && expr.steps[0].typ != "variable" {
		inSeq = a
	} else {
		inSeq = newSeq(input)
	}
	var result any
	var tuples *Array
	isTuple := false
	last := len(expr.steps) - 1
	for i, step := range expr.steps {
		if step.tuple {
			isTuple = true
		}
		var err error
		switch {
		case i == 0 && step.consarray:
			result, err = ev.evaluate(step, inSeq, env)
		case isTuple:
			tuples, err = ev.evalTupleStep(step, inSeq, tuples, env)
		default:
			var r *Array
			r, err = ev.evalStep(step, inSeq, env, i == last)
			result = r
		}
		if err != nil {
			return nil, err
		}
		if !isTuple {
			if result == nil {
				break
			}
			if ra, ok := result.(*Array); ok && len(ra.Items) == 0 {
				break
			}
		}
		if !step.hasFocus {
			if ra, ok := result.(*Array); ok {
				inSeq = ra
			} else if result != nil {
				inSeq = newSeq(result)
			} else {
				inSeq = newSeq()
			}
		}
	}
	if isTuple {
		if expr.tuple {
			result = tuples
		} else {
			out := newSeq()
			if tuples != nil {
				out.Items = make([]any, 0, len(tuples.Items))
				for _, t := range tuples.Items {
					out.Items = append(out.Items, t.(tuple)["@"])
				}
			}
			result = out
		}
	}
	if expr.keepSingleton {
		if ra, ok := result.(*Array); ok {
			if ra.cons && !ra.seq {
				ra = newSeq(ra)
				result = ra
			}
			if ra.seq {
				ra.keepSingleton = true
			}
		}
	}
	if expr.group != nil {
		grpIn := result
		if isTuple {
			grpIn = tuples
		}
		return ev.evalGroup(expr.group, grpIn, env)
	}
	return result, nil
}

func (ev *evaluator) evalStep(expr *node, input *Array, env *frame, lastStep bool) (*Array, error) {
	if expr.typ == "sort" {
		r, err := ev.evalSort(expr, input, env)
		if err != nil {
			return nil, err
		}
		if expr.stages != nil {
			return ev.evalStages(expr.stages, r, env)
		}
		return r, nil
	}
	out := &Array{seq: true}
	var first any // the first result, kept whole until a second one comes
	n := 0
	for _, item := range input.Items {
		res, err := ev.evaluate(expr, item, env)
		if err != nil {
			return nil, err
		}
		for _, st := range expr.stages {
			if res, err = ev.evalFilter(st.expr, res, env); err != nil {
				return nil, err
			}
		}
		if res == nil {
			continue
		}
		if n++; n == 1 {
			first = res
			continue
		}
		if n == 2 {
			out.Items = appendFlat(out.Items, first)
		}
		out.Items = appendFlat(out.Items, res)
	}
	if n == 1 {
		if a, ok := first.(*Array); ok && lastStep && !a.seq {
			return a, nil
		}
		out.Items = appendFlat(out.Items, first)
	}
	if err := ev.grow(len(out.Items)); err != nil {
		return nil, err
	}
	return out, nil
}

// appendFlat adds a step's result to the path's sequence: an array's items (one level), unless it
// was built by an array constructor.
func appendFlat(items []any, r any) []any {
	if a, ok := r.(*Array); ok && !a.cons {
		return append(items, a.Items...)
	}
	return append(items, r)
}

func (ev *evaluator) evalStages(stages []stage, input *Array, env *frame) (*Array, error) {
	result := input
	for _, st := range stages {
		switch st.typ {
		case "filter":
			r, err := ev.evalFilter(st.expr, result, env)
			if err != nil {
				return nil, err
			}
			result = r
		case "index":
			for i, t := range result.Items {
				if tt, ok := t.(tuple); ok {
					tt[st.value] = float64(i)
				}
			}
		}
	}
	return result, nil
}

func (ev *evaluator) evalTupleStep(expr *node, input *Array, tuples *Array, env *frame) (*Array, error) {
	if expr.typ == "sort" {
		var result *Array
		if tuples != nil {
			r, err := ev.evalSort(expr, tuples, env)
			if err != nil {
				return nil, err
			}
			result = r
		} else {
			sorted, err := ev.evalSort(expr, input, env)
			if err != nil {
				return nil, err
			}
			result = &Array{seq: true, tupleStream: true}
			for i, s := range sorted.Items {
				t := tuple{"@": s}
				if expr.hasIndex {
					t[expr.index] = float64(i)
				}
				result.Items = append(result.Items, t)
			}
		}
		if expr.stages != nil {
			return ev.evalStages(expr.stages, result, env)
		}
		return result, nil
	}
	result := &Array{seq: true, tupleStream: true}
	if tuples == nil {
		tuples = &Array{seq: true, tupleStream: true, Items: make([]any, len(input.Items))}
		for i, it := range input.Items {
			tuples.Items[i] = tuple{"@": it}
		}
	}
	for _, tt := range tuples.Items {
		t := tt.(tuple)
		stepEnv := frameFromTuple(env, t)
		res, err := ev.evaluate(expr, t["@"], stepEnv)
		if err != nil {
			return nil, err
		}
		if res == nil {
			continue
		}
		ra, ok := res.(*Array)
		if !ok {
			ra = &Array{Items: []any{res}}
		}
		for bb, r := range ra.Items {
			nt := make(tuple, len(t)+2)
			for k, v := range t {
				nt[k] = v
			}
			if ra.tupleStream {
				for k, v := range r.(tuple) {
					nt[k] = v
				}
			} else {
				if expr.hasFocus {
					nt[expr.focus] = r
					nt["@"] = t["@"]
				} else {
					nt["@"] = r
				}
				if expr.hasIndex {
					nt[expr.index] = float64(bb)
				}
				if expr.ancestor != nil {
					nt[expr.ancestor.label] = t["@"]
				}
			}
			result.Items = append(result.Items, nt)
		}
		if err := ev.grow(len(ra.Items)); err != nil {
			return nil, err
		}
	}
	if expr.stages != nil {
		return ev.evalStages(expr.stages, result, env)
	}
	return result, nil
}

func (ev *evaluator) evalFilter(pred *node, input any, env *frame) (*Array, error) {
	results := newSeq()
	in, ok := input.(*Array)
	if ok && in.tupleStream {
		results.tupleStream = true
	}
	if !ok {
		in = &Array{Items: []any{input}, seq: true}
	}
	if pred.typ == "number" {
		idx := int(math.Floor(pred.value.(float64)))
		if idx < 0 {
			idx += len(in.Items)
		}
		if idx >= 0 && idx < len(in.Items) {
			item := in.Items[idx]
			if a, ok := item.(*Array); ok {
				return a, nil
			}
			if item != nil {
				results.Items = append(results.Items, item)
			}
		}
		return results, nil
	}
	for i, item := range in.Items {
		context, fenv := item, env
		if in.tupleStream {
			t := item.(tuple)
			context, fenv = t["@"], frameFromTuple(env, t)
		}
		res, err := ev.evaluate(pred, context, fenv)
		if err != nil {
			return nil, err
		}
		num, err := isNumeric(res)
		if err != nil {
			return nil, err
		}
		if num {
			if ii := int(math.Floor(res.(float64))); ii == i || (ii < 0 && ii+len(in.Items) == i) {
				results.Items = append(results.Items, item)
			}
		} else if isArrayOfNumbers(res) {
			for _, n := range res.(*Array).Items {
				ii := int(math.Floor(n.(float64)))
				if ii < 0 {
					ii += len(in.Items)
				}
				if ii == i {
					results.Items = append(results.Items, item)
				}
			}
		} else if truthy(res) {
			results.Items = append(results.Items, item)
		}
	}
	return results, nil
}
