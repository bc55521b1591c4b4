// Package jsonata binds JSONata to the engine as asl.JSONataCompiler.
//
// It is the QueryLanguage "JSONata" of Step Functions over sinew's own evaluator,
// sinew/internal/jsonata (imported under the same name, as html/template imports text/template):
// JSONata 2.0.6, the version Step Functions implements ("Step Functions implements JSONata based
// on the 2.0.6 specification", https://docs.aws.amazon.com/step-functions/latest/dg/transforming-data.html),
// pure Go, bounded in time, depth and memory. This package applies what Step Functions changes:
//
//   - The functions AWS adds: $partition, $range, $hash, $random([seed]), $uuid and $parse
//     (same page, "JSONata functions provided by Step Functions").
//   - $eval is refused (T1006), at CreateStateMachine when called by name and at run time when
//     reached another way: "$eval is not available—use $parse instead" (same page).
//   - JSONata 2.1's `??` and `?:` are refused, as the 2.0.6 parser refuses them (S0211); AWS
//     refuses them too (https://repost.aws/questions/QUjbMZmvsUSP-L54CZCpycFg/which-version-of-jsonata-does-aws-stepfunctions-support).
//   - A bare top-level field reference (`phone`, not `$states.input.phone`) is refused with
//     UNSUPPORTED_JSONATA_EXPRESSION, as CreateStateMachine answers it (measured on AWS; no AWS
//     page words it).
//   - Errors read "<code>: <JSONata's message>", which the engine quotes in
//     States.QueryEvaluationError as AWS does (recorded: "T1006: Attempted to invoke a
//     non-function"); a function result is a Function, which the engine reports as "an
//     unsupported result type" (recorded).
//   - Integral numbers come back as int64 (AWS prints 3, not 3.0).
package jsonata

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"sinew/internal/asl"
	"sinew/internal/jsonata"
)

// Compiler compiles JSONata for the engine. The zero value is ready to use.
type Compiler struct{}

// New gives a Compiler.
func New() *Compiler { return &Compiler{} }

var (
	// AWS refuses $eval (floci-io/floci#2737, measured on AWS).
	evalRE = regexp.MustCompile(`\$eval\s*\(`)
	// Bare top-level references (a path not starting with $) are refused by CreateStateMachine.
	bareRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.|$)`)
)

// Compile checks the expression's syntax and AWS's own restrictions.
func (c *Compiler) Compile(src string) (asl.JSONataExpr, error) {
	if evalRE.MatchString(src) {
		return nil, &Error{Msg: "T1006: Attempted to invoke a non-function. $eval is not supported"}
	}
	if t := strings.TrimSpace(src); bareRE.MatchString(t) && !isKeyword(t) {
		name := bareRE.FindString(t)
		return nil, &Error{Msg: fmt.Sprintf("UNSUPPORTED_JSONATA_EXPRESSION: Reference to '%s' at the top level is not supported", strings.TrimSuffix(name, "."))}
	}
	x, err := jsonata.Compile(src)
	if err != nil {
		return nil, typed(err)
	}
	return &expr{x: x}, nil
}

// Error is a failure to compile or evaluate an expression. Its message is "<code>: <message>" as
// JSONata words it, which the engine quotes in States.QueryEvaluationError.
type Error struct {
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func typed(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Msg: err.Error(), Err: err}
}

// MaxEvalTime bounds one evaluation; the evaluator checks it (and the context) as it runs and
// stops itself.
var MaxEvalTime = 10 * time.Second

// MaxDepth bounds nested evaluation steps (JavaScript's stack ends deep recursion on AWS too).
const MaxDepth = 5000

// MaxItems bounds the values one evaluation allocates (AWS fails `[1..900000] ~> $count()` for
// memory; payloads are at most 256 KiB, so real expressions stay far below).
const MaxItems = 10_000_000

func isKeyword(s string) bool {
	for _, k := range []string{"true", "false", "null", "function", "and", "or", "in"} {
		if s == k || strings.HasPrefix(s, k+" ") || strings.HasPrefix(s, k+"(") {
			return true
		}
	}
	return false
}

type expr struct {
	x *jsonata.Expr
}

// Eval runs the expression with vars bound as $name.
func (e *expr) Eval(ctx context.Context, vars map[string]any) (any, bool, error) {
	v, defined, err := e.x.EvalUndefined(ctx, jsonata.Options{
		Bindings:  vars,
		Functions: awsFunctions,
		Timeout:   MaxEvalTime,
		MaxDepth:  MaxDepth,
		MaxItems:  MaxItems,
	})
	if err != nil {
		return nil, false, typed(err)
	}
	if !defined {
		return nil, false, nil
	}
	out, err := toEngine(v)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// Function is the result of an expression that evaluates to a function: no JSON type, so the
// engine reports it as AWS does ("returned an unsupported result type", recorded for Map Items
// in test_map_state_items_eval_jsonata_fail[function]). It encodes as "", as JSONata's $string
// writes a function.
type Function struct{}

// MarshalJSON writes a function as "".
func (Function) MarshalJSON() ([]byte, error) { return []byte(`""`), nil }

// toEngine gives a result as the engine's JSON values: integral numbers as int64, a function as
// Function (inside an array or object, as "").
func toEngine(v any) (any, error) {
	if jsonata.IsFunction(v) {
		return Function{}, nil
	}
	if err := checkJSON(v); err != nil {
		return nil, err
	}
	return jsonata.ToGo(v, true), nil
}

// checkJSON refuses a number JSON cannot carry (1/0), which JSONata reports as D1001.
func checkJSON(v any) error {
	switch x := v.(type) {
	case *jsonata.Array:
		for _, it := range x.Items {
			if err := checkJSON(it); err != nil {
				return err
			}
		}
	case *jsonata.Object:
		for _, k := range x.Keys() {
			it, _ := x.Get(k)
			if err := checkJSON(it); err != nil {
				return err
			}
		}
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return typed(&jsonata.Error{Code: "D1001", Value: x})
		}
	}
	return nil
}
