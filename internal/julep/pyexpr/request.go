package pyexpr

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// Request is what a task's state sends the evaluator (package taskflow's evaluator Task): the
// field values of one step that did not compile to JSONata, by key, and the Julep names they read
// with their values (the step's `_`, inputs, outputs, steps, state).
type Request struct {
	Expressions map[string]string `json:"expressions"`
	Env         map[string]any    `json:"env"`
}

// Response is the evaluator's answer: every value by its key, or the first failure as Julep words
// it (the Python exception's message, with the expression), which fails the step.
type Response struct {
	Values map[string]any `json:"values"`
	Error  *string        `json:"error"`
}

// MaxExpressions bounds one request: a step has a handful of fields.
const MaxExpressions = 1000

// Evaluate evaluates each of r's expressions with Eval. An expression's failure is the answer's
// Error, not the call's: it is the task's, and fails its step. The call fails only when ctx ends.
func Evaluate(ctx context.Context, r Request) (Response, error) {
	if len(r.Expressions) > MaxExpressions {
		return failed(fmt.Sprintf("a step's evaluator request holds at most %d expressions, not %d", MaxExpressions, len(r.Expressions))), nil
	}
	out := make(map[string]any, len(r.Expressions))
	for _, k := range slices.Sorted(maps.Keys(r.Expressions)) {
		v, err := Eval(ctx, r.Expressions[k], r.Env)
		if err != nil {
			if ctx.Err() != nil {
				return Response{}, fmt.Errorf("evaluate %s: %w", k, ctx.Err())
			}
			return failed(err.Error()), nil
		}
		out[k] = v
	}
	return Response{Values: out}, nil
}

func failed(msg string) Response { return Response{Error: &msg} }
