package jsonata

// Lambda is a function written in JSONata: its parameters, body and the scope it closes over.
type Lambda struct {
	params []*node
	body   *node
	sig    *signature
	thunk  bool // a tail call waiting for the caller's loop to run it
	input  any
	env    *frame
}

// Native is a built-in function (or one the caller registers): fn receives the arguments
// validated against sig (when it has one).
type Native struct {
	name  string
	sig   *signature
	arity int // the arguments a higher-order function passes it (JavaScript's Function.length)
	fn    func(ev *evaluator, c *call, args []any) (any, error)
}

// call is a native function's view of its call: the context item and the caller's scope.
type call struct {
	input any
	env   *frame
}

// partialNative is a built-in function with some arguments bound (`$substring(?, 0, 2)`).
type partialNative struct {
	fn    *Native
	args  []any
	holes []int
}

// placeholder marks an unbound argument of a partial application.
type placeholder struct{}

func arity(f any) int {
	switch x := f.(type) {
	case *Lambda:
		return len(x.params)
	case *Native:
		return x.arity
	case *partialNative:
		return len(x.holes)
	}
	return 0
}

// procedure evaluates what a call or partial application calls, and its name for messages. A
// name without '$' that names a function fails with code ("did you mean $name?").
func (ev *evaluator) procedure(expr *node, input any, env *frame, code string) (any, string, error) {
	proc, err := ev.evaluate(expr.procedure, input, env)
	if err != nil {
		return nil, "", err
	}
	name := ""
	if expr.procedure.typ == "path" {
		name, _ = expr.procedure.steps[0].value.(string)
	} else {
		name, _ = expr.procedure.value.(string)
	}
	if proc == nil && expr.procedure.typ == "path" && env.lookup(name) != nil {
		return nil, "", &Error{Code: code, Position: expr.position, Token: name}
	}
	return proc, name, nil
}

func (ev *evaluator) evalFunction(expr *node, input any, env *frame, applyTo any, hasApplyTo bool) (any, error) {
	proc, procName, err := ev.procedure(expr, input, env, "T1005")
	if err != nil {
		return nil, err
	}
	args := make([]any, 0, len(expr.arguments)+1)
	if hasApplyTo {
		args = append(args, applyTo)
	}
	for _, a := range expr.arguments {
		v, err := ev.evaluate(a, input, env)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	result, err := ev.apply(proc, args, input, env)
	if err != nil {
		if e, ok := err.(*Error); ok {
			if e.Position == 0 {
				e.Position = expr.position
			}
			if e.Token == "" {
				e.Token = procName
			}
		}
		return nil, err
	}
	return result, nil
}

// apply calls proc, running the tail calls it hands back (thunks) in a loop.
func (ev *evaluator) apply(proc any, args []any, input any, env *frame) (any, error) {
	result, err := ev.applyInner(proc, args, input, env)
	if err != nil {
		return nil, err
	}
	for {
		l, ok := result.(*Lambda)
		if !ok || !l.thunk {
			return result, nil
		}
		call := l.body
		next, err := ev.evaluate(call.procedure, l.input, l.env)
		if err != nil {
			return nil, err
		}
		targs := make([]any, 0, len(call.arguments))
		for _, a := range call.arguments {
			v, err := ev.evaluate(a, l.input, l.env)
			if err != nil {
				return nil, err
			}
			targs = append(targs, v)
		}
		if result, err = ev.applyInner(next, targs, input, env); err != nil {
			if e, ok := err.(*Error); ok && e.Token == "" && call.procedure.typ == "variable" {
				e.Token, _ = call.procedure.value.(string)
			}
			return nil, err
		}
		if err := ev.check(); err != nil {
			return nil, err
		}
	}
}

func (ev *evaluator) applyInner(proc any, args []any, input any, env *frame) (any, error) {
	switch f := proc.(type) {
	case *Lambda:
		if f.sig != nil {
			var err error
			if args, err = f.sig.validate(args, input); err != nil {
				return nil, err
			}
		}
		fenv := newFrame(f.env)
		for i, p := range f.params {
			var v any
			if i < len(args) {
				v = args[i]
			}
			fenv.bind(p.value.(string), v)
		}
		return ev.evaluate(f.body, f.input, fenv)
	case *Native:
		if f.sig != nil {
			var err error
			if args, err = f.sig.validate(args, input); err != nil {
				if e, ok := err.(*Error); ok && e.Token == "" {
					e.Token = f.name
				}
				return nil, err
			}
		}
		return f.fn(ev, &call{input: input, env: env}, args)
	case *partialNative:
		full := append([]any(nil), f.args...)
		for i, h := range f.holes {
			if i < len(args) {
				full[h] = args[i]
			} else {
				full[h] = nil
			}
		}
		for len(full) > 0 && full[len(full)-1] == nil {
			full = full[:len(full)-1]
		}
		return ev.applyInner(f.fn, full, input, env)
	}
	return nil, &Error{Code: "T1006"}
}

func (ev *evaluator) evalPartial(expr *node, input any, env *frame) (any, error) {
	args := make([]any, len(expr.arguments))
	for i, a := range expr.arguments {
		if a.typ == "operator" && a.value == "?" {
			args[i] = placeholder{}
			continue
		}
		v, err := ev.evaluate(a, input, env)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	proc, name, err := ev.procedure(expr, input, env, "T1007")
	if err != nil {
		return nil, err
	}
	switch f := proc.(type) {
	case *Lambda:
		fenv := newFrame(f.env)
		var unbound []*node
		for i, p := range f.params {
			var a any
			if i < len(args) {
				a = args[i]
			}
			if _, ok := a.(placeholder); ok {
				unbound = append(unbound, p)
			} else {
				fenv.bind(p.value.(string), a)
			}
		}
		return &Lambda{params: unbound, body: f.body, input: f.input, env: fenv}, nil
	case *partialNative:
		pn := &partialNative{fn: f.fn, args: append([]any(nil), f.args...)}
		for i, h := range f.holes {
			var a any
			if i < len(args) {
				a = args[i]
			}
			if _, ok := a.(placeholder); ok {
				pn.holes = append(pn.holes, h)
			} else {
				pn.args[h] = a
			}
		}
		return pn, nil
	case *Native:
		n := f.arity
		if f.sig != nil && len(f.sig.params) > n {
			n = len(f.sig.params)
		}
		if len(args) > n {
			n = len(args)
		}
		pn := &partialNative{fn: f, args: make([]any, n)}
		for i := range pn.args {
			if i < len(args) {
				if _, ok := args[i].(placeholder); ok {
					pn.holes = append(pn.holes, i)
					continue
				}
				pn.args[i] = args[i]
			}
		}
		return pn, nil
	}
	return nil, &Error{Code: "T1008", Position: expr.position, Token: name}
}

func (ev *evaluator) evalApply(expr *node, input any, env *frame) (any, error) {
	lhs, err := ev.evaluate(expr.lhs, input, env)
	if err != nil {
		return nil, err
	}
	if expr.rhs.typ == "function" {
		return ev.evalFunction(expr.rhs, input, env, lhs, true)
	}
	fn, err := ev.evaluate(expr.rhs, input, env)
	if err != nil {
		return nil, err
	}
	if !isFunction(fn) {
		return nil, &Error{Code: "T2006", Position: expr.position, Value: fn}
	}
	if isFunction(lhs) {
		f, g := lhs, fn
		return &Native{name: "chain", arity: 1, fn: func(ev *evaluator, c *call, args []any) (any, error) {
			var x any
			if len(args) > 0 {
				x = args[0]
			}
			v, err := ev.apply(f, []any{x}, nil, c.env)
			if err != nil {
				return nil, err
			}
			return ev.apply(g, []any{v}, nil, c.env)
		}}, nil
	}
	return ev.apply(fn, []any{lhs}, nil, env)
}

var transformSig = mustSignature("<(oa):o>")

func (ev *evaluator) transformer(expr *node, env *frame) *Native {
	return &Native{name: "transform", sig: transformSig, arity: 1, fn: func(ev *evaluator, c *call, args []any) (any, error) {
		obj := args[0]
		if obj == nil {
			return nil, nil
		}
		cloneFn := env.lookup("clone")
		if !isFunction(cloneFn) {
			return nil, &Error{Code: "T2013", Position: expr.position}
		}
		result, err := ev.apply(cloneFn, []any{obj}, nil, env)
		if err != nil {
			return nil, err
		}
		matches, err := ev.evaluate(expr.x.pattern, result, env)
		if err != nil {
			return nil, err
		}
		if matches == nil {
			return result, nil
		}
		ms, ok := matches.(*Array)
		if !ok {
			ms = &Array{Items: []any{matches}}
		}
		for _, m := range ms.Items {
			if err := ev.transformOne(expr, m, env); err != nil {
				return nil, err
			}
		}
		return result, nil
	}}
}

func (ev *evaluator) transformOne(expr *node, match any, env *frame) error {
	update, err := ev.evaluate(expr.x.update, match, env)
	if err != nil {
		return err
	}
	mo, isObj := match.(*Object)
	if update != nil {
		uo, ok := update.(*Object)
		if !ok {
			return &Error{Code: "T2011", Position: expr.x.update.position, Value: update}
		}
		if isObj {
			for _, k := range uo.Keys() {
				mo.Set(k, uo.vals[k])
			}
		}
	}
	if expr.x.del == nil {
		return nil
	}
	dels, err := ev.evaluate(expr.x.del, match, env)
	if err != nil || dels == nil {
		return err
	}
	da, ok := dels.(*Array)
	if !ok {
		da = &Array{Items: []any{dels}}
	}
	if !isArrayOfStrings(da) {
		return &Error{Code: "T2012", Position: expr.x.del.position, Value: dels}
	}
	if isObj {
		for _, d := range da.Items {
			mo.Delete(d.(string))
		}
	}
	return nil
}
