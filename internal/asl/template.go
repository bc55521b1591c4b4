package asl

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"sinew/internal/asl/jsonpath"
	"sinew/internal/jsonout"
)

// template is a payload template (Parameters, ResultSelector, ItemSelector, Assign): in JSONPath
// mode keys ending in ".$" are evaluated as a path, a context path, a variable or an intrinsic call,
// the rest copied; in JSONata mode every "{% %}" string is evaluated.
type template struct {
	root    tnode
	jsonata *jsonataValue

	boundOnce sync.Once
	fixed     int // the JSON length of the template but its paths
	refs      int // how many definite paths on `$` it has
	bounded   bool

	withinOnce sync.Once
	within     string // the one member of `$` the template's paths read ("": none found)
}

// readsOnly reports whether the template's paths on `$` read only within its member name (paths
// on the context object and variables aside), so that the template's value over {name: x} is its
// value over any object whose member name is x.
func (t *template) readsOnly(name string) bool {
	t.withinOnce.Do(func() {
		if t.jsonata == nil && t.root.readsOnly(name) {
			t.within = name
		}
	})
	return t.within == name
}

func (n *tnode) readsOnly(name string) bool {
	switch {
	case n.intrinsic != nil:
		return false
	case n.path != nil:
		p, ok := n.path.(jsPath)
		return ok && p.p.Within(name)
	}
	for i := range n.obj {
		if !n.obj[i].node.readsOnly(name) {
			return false
		}
	}
	for i := range n.arr {
		if !n.arr[i].readsOnly(name) {
			return false
		}
	}
	return true
}

// sizeBound is an upper bound of the JSON length of the template's value over an input whose JSON
// is at most in bytes: every definite path on `$` gives a part of the input. 0 when there is none
// (in unknown, or a path reads the context object or a variable, or an intrinsic is called).
func (t *template) sizeBound(in int) int {
	t.boundOnce.Do(func() { t.fixed, t.refs, t.bounded = t.root.bound() })
	if !t.bounded || in <= 0 {
		return 0
	}
	return t.fixed + t.refs*in
}

// bound gives the node's fixed JSON length and its number of definite `$` paths; false if it has
// a path or intrinsic elsewhere.
func (n *tnode) bound() (fixed, refs int, ok bool) {
	switch {
	case n.intrinsic != nil:
		return 0, 0, false
	case n.path != nil:
		s := n.path.String()
		onInput := s == "$" || strings.HasPrefix(s, "$.") || strings.HasPrefix(s, "$[")
		return 0, 1, onInput && n.path.Definite()
	case n.isLit:
		size, ok := jsonSize(n.literal, math.MaxInt)
		return size, 0, ok
	case n.isObj:
		fixed = 1 + max(len(n.obj), 1)
		for i := range n.obj {
			f, r, ok := n.obj[i].node.bound()
			if !ok {
				return 0, 0, false
			}
			fixed, refs = fixed+f+jsonout.StringLen(n.obj[i].key, jsonout.GoJSON)+1, refs+r
		}
		return fixed, refs, true
	case n.isArr:
		fixed = 1 + max(len(n.arr), 1)
		for i := range n.arr {
			f, r, ok := n.arr[i].bound()
			if !ok {
				return 0, 0, false
			}
			fixed, refs = fixed+f, refs+r
		}
		return fixed, refs, true
	}
	return 4, 0, true // null
}

type tnode struct {
	literal   any
	isLit     bool
	obj       []tentry
	arr       []tnode
	isObj     bool
	isArr     bool
	path      compiledPath
	intrinsic compiledIntrinsic
	src       string // the expression, for messages
}

type tentry struct {
	key   string // output key, ".$" stripped
	field string // key as written, for messages
	node  tnode
}

func (p *parser) template(v any, loc string) *template {
	return &template{root: p.tnode(v, loc)}
}

func (p *parser) tnode(v any, loc string) tnode {
	switch x := v.(type) {
	case map[string]any:
		n := tnode{isObj: true}
		for _, k := range sortedKeys(x) {
			e := x[k]
			if strings.HasSuffix(k, ".$") {
				s, ok := e.(string)
				en := tnode{src: s}
				switch {
				case !ok:
					p.schema(loc, "The value for the field '%s' must be a valid JSONPath or a valid intrinsic function call", k)
				case isIntrinsic(s):
					in, err := parseIntrinsic(s)
					if err != nil {
						p.schema(loc, "The value for the field '%s' must be a valid JSONPath or a valid intrinsic function call", k)
					}
					en.intrinsic = in
				default:
					cp, err := parsePath(s)
					if err != nil {
						p.schema(loc, "The value for the field '%s' must be a valid JSONPath or a valid intrinsic function call", k)
					}
					en.path = cp
				}
				n.obj = append(n.obj, tentry{key: strings.TrimSuffix(k, ".$"), field: k, node: en})
				continue
			}
			n.obj = append(n.obj, tentry{key: k, field: k, node: p.tnode(e, loc)})
		}
		return n
	case []any:
		n := tnode{isArr: true}
		for _, e := range x {
			n.arr = append(n.arr, p.tnode(e, loc))
		}
		return n
	default:
		return tnode{literal: v, isLit: true}
	}
}

// evalTemplate evaluates a JSONPath-mode template. A missing path is States.Runtime with AWS's
// message; a failing intrinsic is States.IntrinsicFailure... as recorded, also reported via Runtime.
func (n *tnode) eval(env pathEnv) (any, error) {
	switch {
	case n.isLit:
		return n.literal, nil
	case n.isObj:
		m := make(map[string]any, len(n.obj))
		for i := range n.obj {
			e := &n.obj[i]
			if e.node.path != nil || e.node.intrinsic != nil {
				v, err := e.node.evalExpr(env, e.field)
				if err != nil {
					return nil, err
				}
				m[e.key] = v
				continue
			}
			v, err := e.node.eval(env)
			if err != nil {
				return nil, err
			}
			m[e.key] = v
		}
		return m, nil
	case n.isArr:
		a := make([]any, len(n.arr))
		for i := range n.arr {
			v, err := n.arr[i].eval(env)
			if err != nil {
				return nil, err
			}
			a[i] = v
		}
		return a, nil
	}
	return nil, nil
}

// taskArgs are a lambda:invoke task's Parameters, an object template evaluated field by field
// but not made into a map: the integration reads the fields it takes, and the map is built only
// for the TaskScheduled event when the history is read (its JSON is the same: keys sort).
type taskArgs struct {
	n      *tnode
	vals   [4]any       // of n.obj, in order
	result lambdaResult // room for the call's result
}

// evalArgs is eval of an object node into a's fields: the same values, in the same order, with
// the same errors.
func (n *tnode) evalArgs(env pathEnv, a *taskArgs) error {
	a.n = n
	for i := range n.obj {
		e := &n.obj[i]
		var v any
		var err error
		if e.node.path != nil || e.node.intrinsic != nil {
			v, err = e.node.evalExpr(env, e.field)
		} else {
			v, err = e.node.eval(env)
		}
		if err != nil {
			return err
		}
		a.vals[i] = v
	}
	return nil
}

// field gives the value of the field name (the last of that name, as in the map).
func (a *taskArgs) field(name string) (any, bool) {
	for i := len(a.n.obj) - 1; i >= 0; i-- {
		if a.n.obj[i].key == name {
			return a.vals[i], true
		}
	}
	return nil, false
}

func (a *taskArgs) unsupported() (string, bool) {
	for i := range a.n.obj {
		if k := a.n.obj[i].key; !lambdaInvokeParams[k] {
			return k, true
		}
	}
	return "", false
}

// object is the Parameters' value as eval gives it.
func (a *taskArgs) object() map[string]any {
	m := make(map[string]any, len(a.n.obj))
	for i := range a.n.obj {
		m[a.n.obj[i].key] = a.vals[i]
	}
	return m
}

// plainParams gives a task's parameters as a JSON value.
func plainParams(v any) any {
	if a, ok := v.(*taskArgs); ok {
		return a.object()
	}
	return v
}

// templateError is a failure to evaluate a template field; the interpreter adds the state prefix.
type templateError struct {
	name  string
	cause string
}

func (e *templateError) Error() string { return e.name + ": " + e.cause }

func (n *tnode) evalExpr(env pathEnv, field string) (any, error) {
	if n.intrinsic != nil {
		v, err := n.intrinsic.Eval(env)
		if err != nil {
			return nil, intrinsicFailure(err, field)
		}
		return v, nil
	}
	v, err := n.path.Eval(env)
	if err != nil {
		src := env.Input
		if strings.HasPrefix(n.src, "$$") {
			src = jsonpath.Env(env).ContextObject()
		}
		return nil, &templateError{name: ErrRuntime, cause: fmt.Sprintf("The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'", n.src, field, mustJSON(src))}
	}
	return v, nil
}

func (t *template) evalJSONPath(env pathEnv) (any, error) { return t.root.eval(env) }

// assignment is a state's or catcher's Assign.
type assignment struct {
	tmpl    *template
	jsonata *jsonataValue
}

func (p *parser) assign(v any, loc, lang string) *assignment {
	if _, ok := v.(map[string]any); !ok {
		p.schema(loc, "The field 'Assign' must be an object")
		return nil
	}
	for k := range v.(map[string]any) {
		name := strings.TrimSuffix(k, ".$")
		if name == "states" || !validVarName(name) {
			p.schema(loc, "The variable name '%s' is not valid", name)
		}
	}
	if lang == JSONata {
		return &assignment{jsonata: p.jsonataTemplate(v, loc)}
	}
	return &assignment{tmpl: p.template(v, loc)}
}

func validVarName(s string) bool {
	if s == "" || len(s) > 80 {
		return false
	}
	for i, r := range s {
		ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') || r > 127
		if !ok {
			return false
		}
	}
	return true
}

// evalAssign gives the variables an Assign sets.
func (a *assignment) eval(ctx context.Context, env pathEnv, jenv *jsonataEnv) (map[string]any, error) {
	var v any
	var err error
	if a.jsonata != nil {
		v, err = a.jsonata.eval(ctx, jenv, "Assign")
	} else {
		v, err = a.tmpl.evalJSONPath(env)
	}
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	return m, nil
}
