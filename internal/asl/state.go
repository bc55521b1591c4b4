package asl

import (
	"context"
	"fmt"
	"strings"
)

// State types.
const (
	TypeTask     = "Task"
	TypePass     = "Pass"
	TypeChoice   = "Choice"
	TypeWait     = "Wait"
	TypeSucceed  = "Succeed"
	TypeFail     = "Fail"
	TypeParallel = "Parallel"
	TypeMap      = "Map"
)

var stateTypes = []string{TypeTask, TypeWait, TypePass, TypeSucceed, TypeFail, TypeChoice, TypeParallel, TypeMap}

// State is one state of a machine: the fields every type shares, and the spec of its own type.
// Exactly one spec is set (none for Succeed, which has no fields of its own).
type State struct {
	Name          string
	Type          string
	events        [2]string // its entered and exited event types
	Comment       string
	QueryLanguage string // effective: the state's own, or the machine's
	Next          string
	End           bool

	// JSONPath data flow.
	InputPath, OutputPath, ResultPath optPath
	Parameters                        *template // also Map's legacy Parameters
	ResultSelector                    *template

	// JSONata data flow.
	Arguments *jsonataValue
	Output    *jsonataValue

	Assign *assignment // either query language

	// Task, Parallel and Map (retry.go).
	Retry []*Retrier
	Catch []*Catcher

	Pass     *PassSpec     // state_pass.go
	Task     *TaskSpec     // state_task.go
	Choice   *ChoiceSpec   // state_choice.go
	Wait     *WaitSpec     // state_wait.go
	Fail     *FailSpec     // state_succeed_fail.go
	Parallel *ParallelSpec // state_parallel.go
	Map      *MapSpec      // state_map.go, state_map_distributed.go
}

// Fields by state type, in each query language (CreateStateMachine refuses the others). Each
// type's own list is in its file.
var (
	commonFields = []string{"Type", "Comment", "QueryLanguage"}
	flowFields   = []string{"Next", "End"}
	jsonPathIO   = []string{"InputPath", "OutputPath"}
	fieldsByType = map[string]map[string]bool{
		TypePass: passFields, TypeTask: taskFields, TypeChoice: choiceFields, TypeWait: waitFields,
		TypeSucceed: succeedFields, TypeFail: failFields, TypeParallel: parallelFields, TypeMap: mapFields,
	}
	jsonPathOnly = map[string]bool{"InputPath": true, "OutputPath": true, "Parameters": true, "ResultSelector": true, "ResultPath": true, "Result": true, "ItemsPath": true, "ItemSelectorPath": true, "SecondsPath": true, "TimestampPath": true, "TimeoutSecondsPath": true, "HeartbeatSecondsPath": true, "ErrorPath": true, "CausePath": true, "MaxConcurrencyPath": true, "ToleratedFailureCountPath": true, "ToleratedFailurePercentagePath": true, "Iterator": true}
	jsonataOnly  = map[string]bool{"Arguments": true, "Output": true, "Items": true}
)

// fieldSet is the set of the fields in the lists.
func fieldSet(lists ...[]string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lists {
		for _, f := range l {
			m[f] = true
		}
	}
	return m
}

// stateEvents are each state type's entered and exited event types, built once.
var stateEvents = func() map[string][2]string {
	m := map[string][2]string{}
	for _, t := range []string{TypeTask, TypePass, TypeChoice, TypeWait, TypeSucceed, TypeFail, TypeParallel, TypeMap} {
		m[t] = [2]string{t + "StateEntered", t + "StateExited"}
	}
	return m
}()

// abortable are the state types with a <Type>StateAborted history event.
var abortable = map[string]bool{TypeTask: true, TypeMap: true, TypeParallel: true, TypeWait: true}

// state parses one state: the fields all types share here, then its type's in its own file.
func (p *parser) state(name string, obj map[string]any, loc string, machineLang string) *State {
	typ, _ := obj["Type"].(string)
	allowed, ok := fieldsByType[typ]
	if !ok {
		if _, present := obj["Type"]; !present {
			p.schema(loc, "These fields are required: [Type]")
		} else {
			p.schema(loc+"/Type", "The field 'Type' should have one of these values: [%s]", strings.Join(stateTypes, ", "))
		}
		return nil
	}
	st := &State{Name: name, Type: typ, QueryLanguage: machineLang, events: stateEvents[typ]}
	st.Comment, _ = obj["Comment"].(string)
	if v, ok := obj["QueryLanguage"]; ok {
		s, _ := v.(string)
		switch {
		case s != JSONPath && s != JSONata:
			p.schema(loc+"/QueryLanguage", "The field 'QueryLanguage' should have one of these values: [JSONPath, JSONata]")
		case s == JSONPath && p.topLang == JSONata:
			p.schema(loc, "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine")
		default:
			st.QueryLanguage = s
		}
	}
	for _, k := range sortedKeys(obj) {
		switch {
		case !allowed[k]:
			p.schema(loc, "The field '%s' is not supported by Step Functions", k)
		case st.QueryLanguage == JSONata && jsonPathOnly[k]:
			p.schema(loc, "The field '%s' is not supported for the JSONata query language", k)
		case st.QueryLanguage == JSONPath && jsonataOnly[k]:
			p.schema(loc, "The field '%s' is not supported for the JSONPath query language", k)
		}
	}
	if typ != TypeChoice && typ != TypeSucceed && typ != TypeFail {
		p.transition(st, obj, loc)
	}
	p.dataFlow(st, obj, loc)
	switch typ {
	case TypePass:
		p.passState(st, obj)
	case TypeTask:
		p.taskState(st, obj, loc)
	case TypeChoice:
		p.choiceState(st, obj, loc)
	case TypeWait:
		p.waitState(st, obj, loc)
	case TypeFail:
		p.failState(st, obj, loc)
	case TypeParallel:
		p.parallelState(st, obj, loc)
	case TypeMap:
		p.mapState(st, obj, loc)
	}
	if typ == TypeTask || typ == TypeParallel || typ == TypeMap {
		p.errorHandling(st, obj, loc)
	}
	return st
}

// transition reads Next or End.
func (p *parser) transition(st *State, obj map[string]any, loc string) {
	next, hasNext := obj["Next"]
	end, _ := obj["End"].(bool)
	switch {
	case hasNext && end:
		p.schema(loc, "Only one of 'Next' or 'End' may be set")
	case hasNext:
		s, ok := next.(string)
		if !ok || s == "" {
			p.schema(loc+"/Next", "The field 'Next' must be a non-empty string")
		}
		st.Next = s
	case end:
		st.End = true
	default:
		p.schema(loc, "These fields are required: [Next] or [End]")
	}
}

// dataFlow reads the data-flow fields of the state's query language, and Assign.
func (p *parser) dataFlow(st *State, obj map[string]any, loc string) {
	if st.QueryLanguage == JSONPath {
		st.InputPath = p.optPathField(obj, "InputPath", loc, false)
		st.OutputPath = p.optPathField(obj, "OutputPath", loc, false)
		st.ResultPath = p.optPathField(obj, "ResultPath", loc, true)
		if v, ok := obj["Parameters"]; ok {
			st.Parameters = p.template(v, loc+"/Parameters")
		}
		if v, ok := obj["ResultSelector"]; ok {
			st.ResultSelector = p.template(v, loc+"/ResultSelector")
		}
	} else {
		st.Arguments = p.jsonataField(obj, "Arguments", loc)
		st.Output = p.jsonataField(obj, "Output", loc)
	}
	if v, ok := obj["Assign"]; ok {
		st.Assign = p.assign(v, loc+"/Assign", st.QueryLanguage)
	}
}

// edge is a transition out of a state: its target and the field that names it.
type edge struct {
	to, field string
}

// edges are the state's transitions, in the order validation reports them.
func (s *State) edges() []edge {
	var t []edge
	if s.Next != "" {
		t = append(t, edge{s.Next, "Next"})
	}
	if c := s.Choice; c != nil {
		if c.Default != "" {
			t = append(t, edge{c.Default, "Default"})
		}
		for i, r := range c.Choices {
			t = append(t, edge{r.Next, fmt.Sprintf("Choices/%d/Next", i)})
		}
	}
	for i, c := range s.Catch {
		t = append(t, edge{c.Next, fmt.Sprintf("Catch/%d/Next", i)})
	}
	return t
}

// run visits the state by its type.
func (r *stateRun) run(ctx context.Context) (step, *StatesError) {
	st := r.st
	s := step{next: st.Next}
	var err *StatesError
	switch st.Type {
	case TypePass:
		s.out, s.assigned, err = r.pass(ctx)
	case TypeSucceed:
		s.out, err = r.succeed(ctx)
		s.next = ""
	case TypeFail:
		return step{}, r.fail(ctx)
	case TypeChoice:
		s.out, s.next, s.assigned, err = r.choice(ctx)
	case TypeWait:
		s.out, s.assigned, err = r.wait(ctx)
	case TypeTask:
		s.out, s.assigned, err = r.task(ctx)
	case TypeParallel:
		s.out, s.assigned, err = r.parallel(ctx)
	case TypeMap:
		s.out, s.assigned, err = r.mapState(ctx)
	}
	if err != nil {
		return step{}, err
	}
	s.bound = r.outBound
	return s, nil
}

// --- data flow ---

// inputPath applies InputPath to the raw input.
func (r *stateRun) inputPath(raw any) (any, *StatesError) { return r.selectPath(r.st.InputPath, raw) }

// outputPath applies OutputPath.
func (r *stateRun) outputPath(v any) (any, *StatesError) { return r.selectPath(r.st.OutputPath, v) }

// selectPath is InputPath or OutputPath: absent, all of v; null, {}; else the part the path selects.
func (r *stateRun) selectPath(p optPath, v any) (any, *StatesError) {
	switch {
	case !p.Set:
		return v, nil
	case p.Null:
		return map[string]any{}, nil
	}
	out, err := p.Path.Eval(r.env(v))
	if err != nil {
		return nil, r.runtime("Invalid path '%s' : %s", p.Path.String(), pathMsg(err))
	}
	return out, nil
}

// resultPath places result into raw by p (ResultPath, or a catcher's).
func (r *stateRun) resultPath(p optPath, raw, result any) (any, *StatesError) {
	switch {
	case !p.Set:
		return result, nil
	case p.Null:
		return raw, nil
	}
	if p.Path.String() == "$" {
		return result, nil
	}
	// Set copies what it changes, so raw (shared by branches and iterations) stays intact.
	v, err := p.Path.Set(raw, result)
	if err != nil {
		return nil, r.runtime("Invalid path '%s' : %s", p.Path.String(), pathMsg(err))
	}
	return v, nil
}

// applyTemplate evaluates a payload template (Parameters, ResultSelector, ItemSelector) over input;
// without one, the input.
func (r *stateRun) applyTemplate(t *template, input any) (any, *StatesError) {
	if t == nil {
		return input, nil
	}
	v, err := t.evalJSONPath(r.env(input))
	if err != nil {
		return nil, r.fromEval(err)
	}
	return v, nil
}

// arguments is the input JSONata gives a Task's resource or Parallel's branches: Arguments, or the
// state's input without them.
func (r *stateRun) arguments(ctx context.Context) (any, *StatesError) {
	if r.st.Arguments == nil {
		return r.raw, nil
	}
	v, err := r.st.Arguments.eval(ctx, r.jenv(nil), "Arguments")
	if err != nil {
		return nil, r.fromEval(err)
	}
	return v, nil
}

// finishResult is the data flow after a Task's, Parallel's or Map's result: ResultSelector,
// ResultPath, OutputPath and Assign (JSONPath), or Output and Assign seeing $states.result (JSONata).
func (r *stateRun) finishResult(ctx context.Context, result any) (any, map[string]any, *StatesError) {
	if r.jsonPath() {
		return r.finishJSONPath(ctx, result, false)
	}
	return r.finishJSONata(ctx, r.st.Output, r.st.Assign, result, map[string]any{"result": result})
}

// finishJSONPath is ResultSelector → ResultPath → OutputPath, then Assign on the result.
func (r *stateRun) finishJSONPath(ctx context.Context, result any, selected bool) (any, map[string]any, *StatesError) {
	var err *StatesError
	if !selected && r.st.ResultSelector != nil {
		if result, err = r.applyTemplate(r.st.ResultSelector, result); err != nil {
			return nil, nil, err
		}
		r.resultBound = r.st.ResultSelector.sizeBound(r.resultBound)
	}
	r.outBound = r.resultPathBound()
	out, err := r.resultPath(r.st.ResultPath, r.raw, result)
	if err != nil {
		return nil, nil, err
	}
	if out, err = r.outputPath(out); err != nil {
		return nil, nil, err
	}
	assigned, err := r.assign(ctx, r.st.Assign, result, nil)
	if err != nil {
		return nil, nil, err
	}
	return out, assigned, nil
}

// resultPathBound bounds the JSON length of ResultPath's output from those of the input and the
// result (0: unknown). OutputPath then gives a part of it.
func (r *stateRun) resultPathBound() int {
	p := r.st.ResultPath
	switch {
	case p.Null:
		return r.rawBound
	case !p.Set || p.Path.String() == "$":
		return r.resultBound
	case r.rawBound <= 0 || r.resultBound <= 0:
		return 0
	}
	// The result goes in under names and indexes no longer than the path's text.
	return r.rawBound + r.resultBound + 2*len(p.Path.String()) + 16
}

// assign evaluates an Assign: in JSONPath `$` is v; in JSONata $states carries extra.
func (r *stateRun) assign(ctx context.Context, a *assignment, v any, extra map[string]any) (map[string]any, *StatesError) {
	if a == nil {
		return nil, nil
	}
	var m map[string]any
	var err error
	if a.jsonata != nil {
		m, err = a.eval(ctx, pathEnv{}, r.jenv(extra))
	} else {
		m, err = a.eval(ctx, r.env(v), nil)
	}
	if err != nil {
		return nil, r.fromEval(err)
	}
	return m, nil
}

// finishJSONata is Output (default: def) and Assign, both seeing $states with extra.
func (r *stateRun) finishJSONata(ctx context.Context, out *jsonataValue, assign *assignment, def any, extra map[string]any) (any, map[string]any, *StatesError) {
	env := r.jenv(extra)
	res := def
	if out != nil {
		v, err := out.eval(ctx, env, "Output")
		if err != nil {
			return nil, nil, r.fromEval(err)
		}
		res = v
	}
	assigned, err := r.assign(ctx, assign, nil, extra)
	if err != nil {
		return nil, nil, err
	}
	return res, assigned, nil
}
