package taskflow

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ExprCompiler turns a Julep field value ("$ python", a "{{ }}" template, or a literal) into a
// JSONata expression, with Julep's names bound by names (package pyexpr's Compile).
type ExprCompiler func(src string, names map[string]string) (string, error)

// Options are what a compiled machine refers to besides its steps.
type Options struct {
	ToolCallARN  string // the tool_call state machine: tool_call and wait_for_input steps
	AgentLoopARN string // the agent_loop state machine: prompt steps
	SelfARN      string // this task's own machine: workflow steps
	Expr         ExprCompiler
	// FunctionTools names the task's own function tools with their timeout in seconds: a
	// tool_call of one waits on a call recorded on the task's execution (PUT /executions/{id}).
	FunctionTools map[string]int64
	// Eval evaluates in a Lambda what Expr does not compile; nil refuses it at creation.
	Eval *Evaluator
	// Tools are the tools a prompt step's list may reference ({"ref": {"id"}} or {"ref": {"name"}}):
	// the task's own, then, with inherit_tools, its agent's.
	Tools []ToolRef
}

// ToolRef is a tool a prompt step may name: its id and its name.
type ToolRef struct{ ID, Name string }

// DefaultWorkflow is the workflow an execution runs unless told.
const DefaultWorkflow = "main"

// StepErrorName is the error a Julep error step (and a tool's error result) fails the execution with.
const StepErrorName = "Julep.StepError"

type compiler struct {
	o      Options
	wfs    map[string][]any
	states map[string]any
	batch  *evalBatch        // the step being compiled's expressions for the evaluator
	evals  int               // batches so far, which name their variables
	evalAt map[string]string // a step's state → the evaluator Task that runs before it
}

// Compile compiles a task's workflows (name → list of steps) into an ASL definition.
func Compile(workflows map[string][]any, o Options) ([]byte, error) {
	if _, ok := workflows[DefaultWorkflow]; !ok {
		return nil, errAt(DefaultWorkflow, "a task needs a main workflow: a list of steps")
	}
	if o.Expr == nil {
		return nil, fmt.Errorf("taskflow: no expression compiler")
	}
	c := &compiler{o: o, wfs: workflows, states: map[string]any{}, evalAt: map[string]string{}}
	names := make([]string, 0, len(workflows))
	for n := range workflows {
		names = append(names, n)
	}
	sort.Strings(names)
	var choices []any
	for _, n := range names {
		steps := workflows[n]
		if len(steps) == 0 {
			return nil, errAt(n, "a workflow needs at least one step")
		}
		if err := c.sequence(n, steps, "Done"); err != nil {
			return nil, err
		}
		choices = append(choices, map[string]any{"Condition": "{% $states.input.workflow = " + quote(n) + " %}", "Next": stateName(n, 0)})
	}
	c.states["Start"] = map[string]any{
		"Type": "Choice", "Comment": "Routes to the first step of the named workflow and sets the variables every step reads.",
		"Choices": choices, "Default": stateName(DefaultWorkflow, 0),
		"Assign": map[string]any{
			"input0": "{% $states.input.input %}", "outputs": []any{}, "state": map[string]any{},
			"ctx": "{% {'developer_id': $states.input.developer_id, 'agent_id': $states.input.agent_id, 'task_id': $states.input.task_id} %}",
		},
		"Output": "{% $states.input.input %}",
	}
	c.states["Done"] = map[string]any{"Type": "Succeed", "Comment": "The workflow's output: its last step's, or what a return step gave."}
	redirect(c.states, c.evalAt)
	prune("Start", c.states)
	def := map[string]any{
		"Comment":       "sinew task: a Julep task's workflows compiled to states (package taskflow)",
		"QueryLanguage": "JSONata", "StartAt": "Start", "States": c.states,
	}
	return json.MarshalIndent(def, "", "  ")
}

func stateName(wf string, i int) string { return wf + "." + strconv.Itoa(i) }

// sequence compiles a workflow's steps one after another, the last going to end.
func (c *compiler) sequence(wf string, steps []any, end string) error {
	for i, raw := range steps {
		path := wf + "[" + strconv.Itoa(i) + "]"
		s, err := ParseStep(path, raw)
		if err != nil {
			return err
		}
		next := end
		if i+1 < len(steps) {
			next = stateName(wf, i+1)
		}
		if err := c.step(scope{path: path, name: stateName(wf, i), next: next, record: true}, s); err != nil {
			return err
		}
	}
	return nil
}

// scope is where a step is compiled: its path (for errors), its state's name, the state after it,
// and whether it records its output in $outputs (not inside a Map or Parallel, whose iterations
// cannot assign the outer variables: the Map records its whole result).
type scope struct {
	path, name, next string
	record           bool
	states           map[string]any // nil: the machine's own
	maps             []*mapLevel    // the Map iterations the step runs in, outermost first
}

// mapLevel is a Map whose iterations hold their index in the variable v (iterN, N its depth:
// inner states read outer variables, and a nested scope may not assign an outer one's name), for
// the names of the children its steps start. used tells that some step reads it.
type mapLevel struct {
	v    string
	used bool
}

func (c *compiler) put(sc scope, name string, st map[string]any) {
	if sc.states != nil {
		sc.states[name] = st
		return
	}
	c.states[name] = st
}

// finish gives a step's last state its output and, when it records, the assignment of it.
func finish(sc scope, st map[string]any, out string) map[string]any {
	st["Output"] = "{% " + out + " %}"
	if sc.record {
		st["Assign"] = map[string]any{"outputs": "{% " + push("$outputs", out) + " %}"}
	}
	if sc.next == "" {
		st["End"] = true
	} else {
		st["Next"] = sc.next
	}
	return st
}

// push appends v to the array arr as one element, even when v is an array (JSONata's array
// constructor would splice it) or undefined (null, so indexes stay the steps').
func push(arr, v string) string {
	return "($v := (" + v + "); $append(" + arr + ", $type($v) = 'array' ? [[$v]] : [$exists($v) ? $v : null]))"
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// names binds Julep's names to the JSONata that holds them in a step's state. inputs and steps are
// built so that they stay lists whatever their items (JSONata's array constructor would splice a
// workflow input that is a list, and $map of one output is that one object).
func names(item string) map[string]string {
	return map[string]string{
		"_":       item,
		"outputs": "$outputs",
		"inputs":  "$append(" + push("[]", "$input0") + ", $outputs)",
		"steps":   "$reduce($outputs, function($acc, $o, $i) {$append($acc, [{'input': $i = 0 ? $input0 : $outputs[$i - 1], 'output': $o}])}, [])",
		"state":   "$state",
	}
}

// expr compiles a field value at path: a string through the expression compiler; an object or a
// list, each of its values; any other JSON value as itself.
func (c *compiler) expr(path string, v any, n map[string]string) (string, error) {
	switch t := v.(type) {
	case string:
		e, err := c.o.Expr(t, n)
		if err != nil && c.evaluable(t, n) {
			e, err = c.deferToEvaluator(t)
		}
		if err != nil {
			return "", errAt(path, "the expression %q: %v", t, err)
		}
		return "(" + e + ")", nil
	case map[string]any:
		ks := keys(t)
		parts := make([]string, 0, len(ks))
		for _, k := range ks {
			e, err := c.expr(path+"."+k, t[k], n)
			if err != nil {
				return "", err
			}
			parts = append(parts, quote(k)+": "+e)
		}
		return "{" + strings.Join(parts, ", ") + "}", nil
	case []any:
		out := "[]"
		for i, item := range t {
			e, err := c.expr(path+"["+strconv.Itoa(i)+"]", item, n)
			if err != nil {
				return "", err
			}
			out = push(out, e)
		}
		return out, nil
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return "", errAt(path, "not JSON: %v", err)
		}
		return string(b), nil
	}
}
