package asl

import (
	"context"
	"fmt"
	"strings"
)

// JSONataCompiler compiles JSONata expressions; internal/asl/jsonata provides one. The engine knows
// JSONata only through this interface, so the library behind it can be swapped.
type JSONataCompiler interface {
	Compile(expr string) (JSONataExpr, error)
}

// JSONataExpr is a compiled expression. Eval gets the variables by name (without '$'), including
// "states"; defined is false when the expression yields JSONata's undefined.
type JSONataExpr interface {
	Eval(ctx context.Context, vars map[string]any) (v any, defined bool, err error)
}

// jsonataValue is a field of a JSONata-mode state: any JSON value in which every "{% ... %}" string
// is an expression.
type jsonataValue struct {
	literal any
	isLit   bool
	expr    JSONataExpr
	src     string
	obj     []jentry
	arr     []*jsonataValue
	isObj   bool
	isArr   bool
}

type jentry struct {
	key string
	val *jsonataValue
}

// jsonataEnv is what JSONata expressions see: $states and the variables in scope.
type jsonataEnv struct {
	states map[string]any
	vars   func() map[string]any
}

// isJSONataString: the string must begin with "{%" and end with "%}" exactly; " {% x %} " is a
// literal (recorded in outputdecl BASE_LITERALS).
func isJSONataString(s string) bool {
	return strings.HasPrefix(s, "{%") && strings.HasSuffix(s, "%}") && len(s) >= 4
}

func (p *parser) jsonataField(obj map[string]any, field, loc string) *jsonataValue {
	v, ok := obj[field]
	if !ok {
		return nil
	}
	return p.jsonataTemplate(v, loc+"/"+field)
}

// jsonataString compiles v when it is a "{% %}" string, for fields that are otherwise literals.
func (p *parser) jsonataString(v any, loc, lang string) *jsonataValue {
	s, ok := v.(string)
	if !ok || lang != JSONata || !isJSONataString(s) {
		return nil
	}
	return p.jsonataTemplate(v, loc)
}

func (p *parser) jsonataTemplate(v any, loc string) *jsonataValue {
	switch x := v.(type) {
	case string:
		if !isJSONataString(x) {
			return &jsonataValue{literal: x, isLit: true}
		}
		src := strings.TrimSpace(x[2 : len(x)-2])
		if p.opts.JSONata == nil {
			p.schema(loc, "JSONata expressions need a JSONata evaluator, and none is configured")
			return &jsonataValue{literal: nil, isLit: true}
		}
		e, err := p.opts.JSONata.Compile(src)
		if err != nil {
			p.fail("INVALID_JSONATA_EXPRESSION", loc, "The JSONata expression '%s' is not valid: %v", src, err)
			return &jsonataValue{literal: nil, isLit: true}
		}
		return &jsonataValue{expr: e, src: src}
	case map[string]any:
		n := &jsonataValue{isObj: true}
		for _, k := range sortedKeys(x) {
			n.obj = append(n.obj, jentry{key: k, val: p.jsonataTemplate(x[k], loc)})
		}
		return n
	case []any:
		n := &jsonataValue{isArr: true}
		for _, e := range x {
			n.arr = append(n.arr, p.jsonataTemplate(e, loc))
		}
		return n
	default:
		return &jsonataValue{literal: v, isLit: true}
	}
}

// queryError is a JSONata evaluation failure (States.QueryEvaluationError); location is the field,
// e.g. "Output/error".
type queryError struct {
	location string
	cause    string
}

func (e *queryError) Error() string { return e.cause }

func (j *jsonataValue) eval(ctx context.Context, env *jsonataEnv, location string) (any, error) {
	switch {
	case j == nil:
		return nil, nil
	case j.isLit:
		return j.literal, nil
	case j.expr != nil:
		vars := map[string]any{}
		if env.vars != nil {
			for k, v := range env.vars() {
				vars[k] = v
			}
		}
		vars["states"] = env.states
		v, defined, err := j.expr.Eval(ctx, vars)
		if err != nil {
			return nil, &queryError{location: location, cause: fmt.Sprintf("The JSONata expression '%s' specified for the field '%s' threw an error during evaluation. %v", j.src, location, err)}
		}
		if !defined {
			return nil, &queryError{location: location, cause: fmt.Sprintf("The JSONata expression '%s' specified for the field '%s' returned nothing (undefined).", j.src, location)}
		}
		return v, nil
	case j.isObj:
		m := make(map[string]any, len(j.obj))
		for _, e := range j.obj {
			v, err := e.val.eval(ctx, env, location+"/"+e.key)
			if err != nil {
				return nil, err
			}
			m[e.key] = v
		}
		return m, nil
	case j.isArr:
		a := make([]any, len(j.arr))
		for i, e := range j.arr {
			v, err := e.eval(ctx, env, location)
			if err != nil {
				return nil, err
			}
			a[i] = v
		}
		return a, nil
	}
	return nil, nil
}
