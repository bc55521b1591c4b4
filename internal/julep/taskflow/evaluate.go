package taskflow

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Evaluator runs, in a Lambda, the expressions of a step that do not compile to JSONata.
type Evaluator struct {
	// Function is the Lambda function (name or ARN) that evaluates them (the prepare function's
	// evaluate action).
	Function string
	// Evaluable reports whether an expression the ExprCompiler refused can be evaluated there
	// (pyexpr.Classify's NeedsEval): any other is refused with the compiler's error.
	Evaluable func(src string, names map[string]string) bool
	// Names gives the Julep names an expression reads (pyexpr.Names): only those are sent.
	Names func(src string) ([]string, error)
}

// EvalMark ends the Comment of the Task that evaluates a step's expressions before it.
const EvalMark = "[evaluates expressions]"

// evalSuffix names that Task: "w.n.eval" runs before "w.n", whose name stays the step's.
const evalSuffix = ".eval"

// evalBatch gathers the expressions of one step that need the evaluator. The Task that evaluates
// them assigns their values to a variable of its own (unique in the machine, so an iteration of a
// Map or a branch of a Parallel may assign it), which the step's JSONata reads.
type evalBatch struct {
	variable string
	exprs    map[string]string // key → field value as written
	names    map[string]bool
}

// evaluable: src, which did not compile, runs in the evaluator for this step. Only expressions
// over the step's own input do (not a reduce's, which runs once per result).
func (c *compiler) evaluable(src string, n map[string]string) bool {
	e := c.o.Eval
	return e != nil && e.Function != "" && e.Evaluable != nil && c.batch != nil &&
		n["_"] == "$states.input" && n["results"] == "" && e.Evaluable(src, n)
}

// deferToEvaluator adds src to the step's batch and gives the JSONata that reads its value.
func (c *compiler) deferToEvaluator(src string) (string, error) {
	b := c.batch
	if b.variable == "" {
		c.evals++
		b.variable = "julep_eval" + strconv.Itoa(c.evals)
		b.exprs, b.names = map[string]string{}, map[string]bool{}
	}
	if c.o.Eval.Names != nil {
		ns, err := c.o.Eval.Names(src)
		if err != nil {
			return "", err
		}
		for _, n := range ns {
			b.names[n] = true
		}
	}
	key := "e" + strconv.Itoa(len(b.exprs))
	b.exprs[key] = src
	return "$lookup($" + b.variable + ".values, " + quote(key) + ")", nil
}

// evalStates are the Task that evaluates b's expressions over the step's input (name) and the
// Choice after it, which goes on to the step (next) with the input unchanged, so the step reads the
// same `_`; an expression that raised fails the step there, Julep.StepError with the evaluator's
// message (the expression and Python's exception).
func (c *compiler) evalStates(s *Step, b *evalBatch, name, next string) map[string]map[string]any {
	exprs := make([]string, 0, len(b.exprs))
	for _, k := range slices.Sorted(maps.Keys(b.exprs)) {
		exprs = append(exprs, quote(k)+": "+quote(b.exprs[k]))
	}
	n := names("$states.input")
	env := make([]string, 0, len(b.names))
	for _, used := range slices.Sorted(maps.Keys(b.names)) {
		if js, ok := n[used]; ok {
			env = append(env, quote(used)+": "+js)
		}
	}
	payload := "{'evaluate': {'expressions': {" + strings.Join(exprs, ", ") + "}, 'env': {" + strings.Join(env, ", ") + "}}}"
	v := "$" + b.variable
	return map[string]map[string]any{
		name: {
			"Type": "Task", "Comment": label(s) + " " + EvalMark, "Resource": "arn:aws:states:::lambda:invoke",
			"Arguments": map[string]any{"FunctionName": c.o.Eval.Function, "Payload": "{% " + payload + " %}"},
			"Retry":     lambdaRetry,
			"Assign":    map[string]any{b.variable: "{% $states.result.Payload %}"},
			"Output":    "{% $states.input %}", "Next": name + ".check",
		},
		name + ".check": {
			"Type": "Choice", "Comment": label(s) + ": an expression that raised fails the step",
			"Choices": []any{map[string]any{"Condition": "{% $exists(" + v + ".error) and " + v + ".error != null %}", "Next": name + ".failed"}},
			"Default": next,
		},
		name + ".failed": {"Type": "Fail", "Comment": label(s) + ": " + StepErrorName, "Error": StepErrorName, "Cause": "{% " + v + ".error %}"},
	}
}

// lambdaRetry retries the evaluator's invocation on Lambda's own transient errors, as AWS advises
// for lambda:invoke (https://docs.aws.amazon.com/step-functions/latest/dg/bp-lambda-serviceexception.html).
var lambdaRetry = []any{map[string]any{
	"ErrorEquals":     []any{"Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException", "Lambda.TooManyRequestsException"},
	"IntervalSeconds": 1, "BackoffRate": 2, "MaxAttempts": 3, "JitterStrategy": "FULL",
}}

// redirect points every transition to a state in to at its replacement (a step's evaluator Task,
// which goes on to the step), in states and the Map and Parallel states nested in them; the
// evaluator's own states (named after its Task) keep theirs.
func redirect(states map[string]any, to map[string]string) {
	for name, v := range states {
		st, _ := v.(map[string]any)
		for _, k := range []string{"Next", "Default"} {
			if n, ok := st[k].(string); ok && to[n] != "" && !ownState(name, to[n]) {
				st[k] = to[n]
			}
		}
		if cs, ok := st["Choices"].([]any); ok {
			for _, ch := range cs {
				m := ch.(map[string]any)
				if n, ok := m["Next"].(string); ok && to[n] != "" && !ownState(name, to[n]) {
					m["Next"] = to[n]
				}
			}
		}
		if p, ok := st["ItemProcessor"].(map[string]any); ok {
			redirectScope(p, to)
		}
		if bs, ok := st["Branches"].([]any); ok {
			for _, b := range bs {
				redirectScope(b.(map[string]any), to)
			}
		}
	}
}

// ownState: name is the evaluator's Task task or one of the states after it (task.check, ...).
func ownState(name, task string) bool { return name == task || strings.HasPrefix(name, task+".") }

func redirectScope(scope map[string]any, to map[string]string) {
	if s, ok := scope["StartAt"].(string); ok && to[s] != "" {
		scope["StartAt"] = to[s]
	}
	redirect(scope["States"].(map[string]any), to)
}
