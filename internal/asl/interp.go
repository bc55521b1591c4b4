package asl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// frame runs one machine: the execution's, a Parallel branch or a Map iteration. Its chain links its
// history events; its scope holds its variables.
type frame struct {
	top   bool // the execution's own frame: a task waiting on a token here parks
	x     *Execution
	m     *Machine
	chain *chain
	scope *scope
	// Inside a Map iteration: its item, $$.Map.Item {"Index", "Value"}, built when read.
	inMap    bool
	mapIndex int
	mapValue any
	own      scope     // the iteration's or branch's scope, allocated with the frame
	ownChain chain     // likewise its chain of events
	inBound  int       // at least the JSON length of the input runMachine is given (0: unknown)
	first    *stateRun // a branch's or iteration's first visit, allocated with it (nil once taken)
}

// mapItem is $$.Map.Item, or nil outside a Map iteration.
func (f *frame) mapItem() map[string]any {
	if !f.inMap {
		return nil
	}
	return map[string]any{"Index": int64(f.mapIndex), "Value": f.mapValue}
}

// itemFrame is a frame inside Map iteration i of item v.
func itemFrame(x *Execution, m *Machine, parent *scope, i int, v any) *frame {
	c := &struct {
		f frame
		r stateRun
	}{f: frame{x: x, m: m, inMap: true, mapIndex: i, mapValue: v}}
	f := &c.f
	f.own.parent = parent
	f.scope = &f.own
	f.first = &c.r // most iterations visit one state
	return f
}

// abortable are the state types with a <Type>StateAborted history event.
var abortable = map[string]bool{TypeTask: true, TypeMap: true, TypeParallel: true, TypeWait: true}

// stateEvents are each state type's entered and exited event types, built once.
var stateEvents = func() map[string][2]string {
	m := map[string][2]string{}
	for _, t := range []string{TypeTask, TypePass, TypeChoice, TypeWait, TypeSucceed, TypeFail, TypeParallel, TypeMap} {
		m[t] = [2]string{t + "StateEntered", t + "StateExited"}
	}
	return m
}()

// errCancelled marks a branch or iteration stopped because a sibling failed.
var errCancelled = errors.New("cancelled by a failing sibling")

// errParked is returned up the stack when a top-level task waits on its token: the execution
// releases its goroutine and resumes when the token is answered (or times out, or is stopped).
var errParked = &StatesError{Name: "sinew.parked"}

func (f *frame) emit(ctx context.Context, e Event) int64 {
	return f.emitDetails(e.Type, e.details())
}

// emitDetails records an event of type typ with details d (a *...Details, a deferred or nil).
func (f *frame) emitDetails(typ string, d any) int64 { return f.emitAt(typ, d, f.x.eng.clock.Now()) }

// emitAt is emitDetails of an event that happened at the time at.
func (f *frame) emitAt(typ string, d any, at time.Time) int64 {
	id, ok := f.x.hist.addDetails(f.chain, at, typ, d)
	if !ok {
		f.x.abort(&abortCause{status: StatusFailed, err: newErr(ErrRuntime, fmt.Sprintf("The execution reached the maximum number of history events (%d).", MaxHistoryEvents))})
	}
	return id
}

// stopped reports why ctx ended, as the error the frame returns.
func stopped(ctx context.Context) *StatesError {
	if ac := abortOf(ctx); ac != nil {
		return ac.err
	}
	return &StatesError{Name: "", Cause: errCancelled.Error()}
}

// runMachine runs the machine on input; inputJSON is input as JSON text when the caller has it
// ("" otherwise), so each value is encoded once for the history.
func (f *frame) runMachine(ctx context.Context, input any, inputJSON string) (any, string, *StatesError) {
	return f.runFrom(ctx, f.m.StartAt, input, inputJSON)
}

// runFrom runs the machine from the state name.
func (f *frame) runFrom(ctx context.Context, name string, input any, inputJSON string) (any, string, *StatesError) {
	var at time.Time
	bound := len(inputJSON) // 0 when unknown
	if bound == 0 && name == f.m.StartAt {
		bound = f.inBound
	}
	for {
		if ctx.Err() != nil {
			return nil, "", stopped(ctx)
		}
		st := f.m.States[name]
		s, err := f.runState(ctx, st, input, inputJSON, at, bound)
		if err != nil {
			return nil, "", err
		}
		if s.next == "" {
			return s.out, s.outJSON, nil
		}
		name, input, inputJSON, at, bound = s.next, s.out, s.outJSON, s.at, s.bound
	}
}

// stateRun is one visit of a state.
type stateRun struct {
	f          *frame
	st         *State
	raw        any // the state's input as it arrived
	entered    int64
	enteredAt  time.Time
	before     int64 // the frame's last event before this state was entered
	retryCount int
	token      string
	ctxObj     map[string]any // cached context object; nil after retryCount or token change

	// The details of its entered and exited events, allocated with the visit.
	enteredEv enteredLater
	exitedEv  exitedLater

	// Upper bounds of JSON lengths (0: unknown): the input's, the task result's (or other result
	// given to finishJSONPath), and the output's as the state's data flow gives it.
	rawBound, resultBound, outBound int

	// Task state only: the effective input, retry counters and the attempt waiting on its token.
	eff     any
	counts  []int
	tv      *taskVisit // the room of the visit's first attempt
	waiting *waiting
	pwait   *parkedWait // a Wait state this execution is parked in
}

// step is what one visit of a state gives: its output, the output as JSON text when it is at hand
// (else ""), the state to go to next ("" when the machine ends) and the variables it assigns,
// which take effect as it exits.
type step struct {
	out      any
	outJSON  string
	next     string
	assigned map[string]any
	at       time.Time // when the state exited: the next one is entered at the same time
	bound    int       // at least out's JSON length (0: unknown), so the payload check can skip it
}

// runState visits st, entered at the time at (the previous state's exit), or now when zero; raw's
// JSON is at most inBound bytes long (0: unknown).
func (f *frame) runState(ctx context.Context, st *State, raw any, rawJSON string, at time.Time, inBound int) (step, *StatesError) {
	now := at
	if now.IsZero() {
		now = f.x.eng.clock.Now()
	}
	// Field by field into the zeroed visit: copying a whole struct literal in costs a write
	// barrier over every pointer slot while the GC runs.
	r := f.newRun()
	r.f, r.st, r.raw, r.before, r.rawBound = f, st, raw, f.x.hist.lastOf(f.chain), inBound
	r.enteredEv.name, r.enteredEv.input, r.enteredEv.inputJSON = st.Name, raw, rawJSON // allocated with the visit
	r.entered = f.emitAt(st.events[0], &r.enteredEv, now)
	if f.x.hist.stamp != nil && r.entered > 0 {
		// $$.State.EnteredTime is the event's time, which a replayed execution keeps.
		now = f.x.hist.timeOf(r.entered)
	}
	r.enteredAt = now
	s, err := r.run(ctx)
	return f.complete(ctx, r, s, err)
}

// newRun gives room for a state visit. The execution's own frame visits its states one at a time,
// so its visits come from a slab sized by the machine's last execution; a branch's or an
// iteration's each get their own.
func (f *frame) newRun() *stateRun {
	if !f.top {
		if r := f.first; r != nil {
			f.first = nil
			return r
		}
		return new(stateRun)
	}
	x := f.x
	if len(x.runs) == 0 {
		x.runs = make([]stateRun, min(max(int(x.machine.visitHint.Load())-x.visits, 1), maxRunSlab))
	}
	r := &x.runs[0]
	x.runs = x.runs[1:]
	x.visits++
	return r
}

// maxRunSlab bounds a slab of state visits.
const maxRunSlab = 16

// complete ends a state visit: a failure goes to the first matching catcher (or up), a success to
// the exit event. A parked task passes through untouched.
func (f *frame) complete(ctx context.Context, r *stateRun, s step, err *StatesError) (step, *StatesError) {
	if err == errParked {
		return step{}, err
	}
	st := r.st
	if err != nil {
		if ctx.Err() != nil {
			if abortable[st.Type] {
				f.emit(ctx, Event{Type: st.Type + "StateAborted"})
			}
			return step{}, stopped(ctx)
		}
		if qe, ok := asQueryError(err); ok && !err.query.reported {
			// AWS links EvaluationFailed to the event before the state was entered.
			err.query.reported = true
			f.x.hist.addAfter(f.chain, r.before, f.x.eng.clock.Now(), Event{Type: "EvaluationFailed", EvaluationFailedEventDetails: &EvaluationFailedDetails{
				Error: ErrQueryEvaluation, Cause: err.Cause, Location: qe, State: st.Name}})
		}
		c := r.catcher(err)
		if c == nil {
			if st.Type == TypeTask && !f.top {
				// Recorded: a Task that fails its Parallel branch or Map iteration is reported
				// aborted too.
				f.emit(ctx, Event{Type: "TaskStateAborted"})
			}
			return step{}, err
		}
		out, assigned, cerr := r.caught(ctx, c, err)
		if cerr != nil {
			return step{}, cerr
		}
		return f.exit(ctx, r, step{out: out, next: c.Next, assigned: assigned})
	}
	return f.exit(ctx, r, s)
}

// exit records the state's exit with s's output and assignments (rendered as JSON when the history
// is read).
func (f *frame) exit(ctx context.Context, r *stateRun, s step) (step, *StatesError) {
	// A bound comfortably under the limit spares the walk (the slack covers the "{}" a null
	// InputPath or OutputPath gives).
	if s.bound <= 0 || s.bound+16 > MaxPayloadBytes {
		n, over := jsonLen(s.out, MaxPayloadBytes)
		if over {
			return step{}, errf(ErrDataLimitExceeded, "The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", r.st.Name)
		}
		s.bound = n
	}
	s.at = f.x.eng.clock.Now()
	r.exitedEv.name, r.exitedEv.out, r.exitedEv.assigned = r.st.Name, s.out, s.assigned
	f.emitAt(r.st.events[1], &r.exitedEv, s.at)
	// Assignments take effect after the state's own output is computed (recorded evaluation order).
	f.scope.set(s.assigned)
	return s, nil
}

// queryLocated marks a StatesError raised by a JSONata evaluation; reported once its
// EvaluationFailed event is written (the error may pass up through Map and Parallel states).
type queryLocated struct {
	location string
	reported bool
}

func asQueryError(err *StatesError) (string, bool) {
	if err.query != nil {
		return err.query.location, true
	}
	return "", false
}

// fromEval turns an evaluation error into the state's failure.
func (r *stateRun) fromEval(err error) *StatesError {
	var se *StatesError
	if errors.As(err, &se) {
		return se
	}
	var qe *queryError
	if errors.As(err, &qe) {
		e := r.runtime("%s", qe.cause)
		e.Name = ErrQueryEvaluation
		e.query = &queryLocated{location: qe.location}
		return e
	}
	var te *templateError
	if errors.As(err, &te) {
		e := r.runtime("%s", te.cause)
		e.Name = te.name
		return e
	}
	var pe *pathError
	if errors.As(err, &pe) {
		return r.runtime("%s", pe.Error())
	}
	return r.runtime("%s", err.Error())
}

func (r *stateRun) runtime(format string, args ...any) *StatesError {
	return runtimeErr(r.st.Name, r.entered, format, args...)
}

// contextObject is `$$` / `$states.context` for this visit.
func (r *stateRun) contextObject() map[string]any {
	if r.ctxObj != nil {
		return r.ctxObj
	}
	state := map[string]any{"EnteredTime": formatTime(r.enteredAt), "Name": r.st.Name}
	if r.st.Type == TypeTask || r.st.Type == TypeMap || r.st.Type == TypeParallel {
		state["RetryCount"] = int64(r.retryCount)
	}
	exec, machine := r.f.x.contextParts()
	c := map[string]any{"Execution": exec, "State": state, "StateMachine": machine}
	if r.token != "" {
		c["Task"] = map[string]any{"Token": r.token}
	}
	if item := r.f.mapItem(); item != nil {
		c["Map"] = map[string]any{"Item": item}
	}
	r.ctxObj = c
	return c
}

// ContextObject implements jsonpath.Source.
func (r *stateRun) ContextObject() any { return r.contextObject() }

// Variable implements jsonpath.Source.
func (r *stateRun) Variable(name string) (any, bool) { return r.f.scope.get(name) }

func (r *stateRun) env(input any) pathEnv {
	return pathEnv{Input: input, Source: r}
}

func (r *stateRun) jenv(extra map[string]any) *jsonataEnv {
	states := map[string]any{"input": r.raw, "context": r.contextObject()}
	for k, v := range extra {
		states[k] = v
	}
	return &jsonataEnv{states: states, vars: r.f.scope.all}
}

func (r *stateRun) jsonPath() bool { return r.st.QueryLanguage == JSONPath }

// --- JSONPath data flow ---

func (r *stateRun) inputPath(raw any) (any, *StatesError) {
	p := r.st.InputPath
	switch {
	case !p.Set:
		return raw, nil
	case p.Null:
		return map[string]any{}, nil
	}
	v, err := p.Path.Eval(r.env(raw))
	if err != nil {
		return nil, r.runtime("Invalid path '%s' : %s", p.Path.String(), pathMsg(err))
	}
	return v, nil
}

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

func (r *stateRun) outputPath(v any) (any, *StatesError) {
	p := r.st.OutputPath
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

// --- per type ---

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

func (r *stateRun) pass(ctx context.Context) (any, map[string]any, *StatesError) {
	st := r.st
	if !r.jsonPath() {
		return r.finishJSONata(ctx, st.Output, st.Assign, r.raw, nil)
	}
	eff, err := r.inputPath(r.raw)
	if err != nil {
		return nil, nil, err
	}
	result := eff
	r.resultBound = r.rawBound // InputPath gives a part of the input
	switch {
	case st.HasResult:
		result, r.resultBound = st.Result, 0
	case st.Parameters != nil:
		if result, err = r.applyTemplate(st.Parameters, eff); err != nil {
			return nil, nil, err
		}
		r.resultBound = st.Parameters.sizeBound(r.rawBound)
	}
	return r.finishJSONPath(ctx, result, true)
}

func (r *stateRun) succeed(ctx context.Context) (any, *StatesError) {
	if !r.jsonPath() {
		out, _, err := r.finishJSONata(ctx, r.st.Output, nil, r.raw, nil)
		return out, err
	}
	eff, err := r.inputPath(r.raw)
	if err != nil {
		return nil, err
	}
	return r.outputPath(eff)
}

func (r *stateRun) fail(ctx context.Context) *StatesError {
	se := &StatesError{}
	for i, fld := range []*strField{r.st.Error, r.st.Cause} {
		if fld == nil {
			continue
		}
		name := [2]string{"Error", "Cause"}[i]
		v, err := r.strValue(ctx, fld, name)
		if err != nil {
			return err
		}
		if i == 0 {
			se.Name, se.hasName = v, true
		} else {
			se.Cause, se.hasCause = v, true
		}
	}
	return se
}

func (r *stateRun) strValue(ctx context.Context, fld *strField, name string) (string, *StatesError) {
	var v any
	var err error
	switch {
	case fld.JSONata != nil:
		v, err = fld.JSONata.eval(ctx, r.jenv(nil), name)
	case fld.Intrinsic != nil:
		v, err = fld.Intrinsic.Eval(r.env(r.raw))
		if err != nil {
			return "", r.fromEval(intrinsicFailure(err, name+"Path"))
		}
	case fld.Path != nil:
		v, err = fld.Path.Eval(r.env(r.raw))
		if err != nil {
			return "", r.runtime("The JSONPath '%s' specified for the field '%sPath' could not be found in the input '%s'", fld.Path.String(), name, compactJSON(r.raw))
		}
	default:
		return fld.Value, nil
	}
	if err != nil {
		return "", r.fromEval(err)
	}
	s, ok := v.(string)
	if !ok {
		return "", r.runtime("The value of the field '%s' must be a string, but was %s", name, typeName(v))
	}
	return s, nil
}

func (r *stateRun) choice(ctx context.Context) (any, string, map[string]any, *StatesError) {
	st := r.st
	input := r.raw
	if r.jsonPath() {
		var err *StatesError
		if input, err = r.inputPath(r.raw); err != nil {
			return nil, "", nil, err
		}
	}
	var env pathEnv
	var jenv *jsonataEnv
	if r.jsonPath() {
		env = r.env(input)
	} else {
		jenv = r.jenv(nil)
	}
	var match *ChoiceRule
	for _, rule := range st.Choices {
		ok, err := rule.eval(ctx, env, jenv)
		if err != nil {
			return nil, "", nil, r.fromEval(err)
		}
		if ok {
			match = rule
			break
		}
	}
	next := st.Default
	if match != nil {
		next = match.Next
	}
	if next == "" {
		return nil, "", nil, newErr(ErrNoChoiceMatched, "No Matches!")
	}
	if r.jsonPath() {
		out, err := r.outputPath(input)
		if err != nil {
			return nil, "", nil, err
		}
		r.outBound = r.rawBound // parts of the input
		assigned, err := r.assign(ctx, st.Assign, input, nil)
		if err != nil {
			return nil, "", nil, err
		}
		if match != nil && match.Assign != nil {
			more, err := r.assign(ctx, match.Assign, input, nil)
			if err != nil {
				return nil, "", nil, err
			}
			assigned = merge(assigned, more)
		}
		return out, next, assigned, nil
	}
	outField, assign := st.Output, st.Assign
	if match != nil && match.Output != nil {
		outField = match.Output
	}
	out, assigned, err := r.finishJSONata(ctx, outField, assign, r.raw, nil)
	if err != nil {
		return nil, "", nil, err
	}
	if match != nil && match.Assign != nil {
		more, err := r.assign(ctx, match.Assign, nil, nil)
		if err != nil {
			return nil, "", nil, err
		}
		assigned = merge(assigned, more)
	}
	return out, next, assigned, nil
}

func merge(a, b map[string]any) map[string]any {
	if a == nil {
		return b
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

func (r *stateRun) wait(ctx context.Context) (any, map[string]any, *StatesError) {
	st := r.st
	input := r.raw
	var err *StatesError
	if r.jsonPath() {
		if input, err = r.inputPath(r.raw); err != nil {
			return nil, nil, err
		}
	}
	clock := r.f.x.eng.clock
	var d time.Duration
	switch {
	case st.Seconds != nil:
		if d, err = r.waitSeconds(ctx, input); err != nil {
			return nil, nil, err
		}
	case st.Timestamp != nil:
		t := st.Timestamp.Value
		if st.Timestamp.Path != nil || st.Timestamp.JSONata != nil {
			var v any
			var e error
			if st.Timestamp.Path != nil {
				v, e = st.Timestamp.Path.Eval(r.env(input))
				if e != nil {
					return nil, nil, r.runtime("Invalid path '%s' : %s", st.Timestamp.Path.String(), pathMsg(e))
				}
			} else if v, e = st.Timestamp.JSONata.eval(ctx, r.jenv(nil), "Timestamp"); e != nil {
				return nil, nil, r.fromEval(e)
			}
			s, isStr := v.(string)
			if !isStr {
				s = compactJSON(v)
			}
			var ok bool
			if t, ok = parseTimestamp(s); !ok {
				if st.Timestamp.Path != nil {
					return nil, nil, r.runtime("The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: %s == %s", st.Timestamp.Path.String(), s)
				}
				// Recorded: EvaluationFailed right after WaitStateEntered, then ExecutionFailed.
				return nil, nil, r.queryFailed(ctx, "Timestamp", "The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: %s", s)
			}
		}
		d = t.Sub(clock.Now())
	}
	until := clock.Now().Add(d)
	if d > 0 && st.Seconds != nil {
		// A relative wait ends at the deadline it got when first entered, even after a restart.
		until, d, _ = deadline(ctx, clock, TimerWait, st.Name+mapIndex(r.f), d)
	}
	if d > 0 && r.f.top {
		// Park: the execution holds no goroutine while it waits.
		return nil, nil, r.parkWait(ctx, until, input)
	}
	if d > 0 {
		if clock.Sleep(ctx, d) != nil {
			return nil, nil, stopped(ctx)
		}
	}
	return r.waitFinish(ctx, input)
}

// waitFinish is a Wait state's output and assignments once the time has passed.
func (r *stateRun) waitFinish(ctx context.Context, input any) (any, map[string]any, *StatesError) {
	st := r.st
	if !r.jsonPath() {
		return r.finishJSONata(ctx, st.Output, st.Assign, r.raw, nil)
	}
	out, err := r.outputPath(input)
	if err != nil {
		return nil, nil, err
	}
	assigned, err := r.assign(ctx, st.Assign, input, nil)
	return out, assigned, err
}

// parkedWait is a Wait state the execution is parked in.
type parkedWait struct {
	until   time.Time
	input   any // the effective input
	unwound chan struct{}
	mu      sync.Mutex
	stop    func() bool
	once    sync.Once
	woke    func(aborted bool)
}

func (w *parkedWait) wake(aborted bool) {
	w.once.Do(func() {
		if aborted {
			w.mu.Lock()
			if w.stop != nil {
				w.stop()
			}
			w.mu.Unlock()
		}
		go w.woke(aborted)
	})
}

// parkWait parks the execution until the wait is over (or it is stopped).
func (r *stateRun) parkWait(ctx context.Context, until time.Time, input any) *StatesError {
	x := r.f.x
	w := &parkedWait{until: until, input: input, unwound: make(chan struct{})}
	w.woke = func(aborted bool) { x.resumeWait(r, w, aborted) }
	r.pwait = w
	x.setParked(r)
	// WaitFunc may fire timers at once (a VirtualClock): never hold w.mu across it.
	stop := x.eng.clock.WaitFunc(until.Sub(x.eng.clock.Now()), func() { w.wake(false) })
	w.mu.Lock()
	w.stop = stop
	w.mu.Unlock()
	if ctx.Err() != nil {
		w.wake(true)
	}
	return errParked
}

// intValue resolves a numeric field given literally, by path (against input) or by JSONata.
func (r *stateRun) intValue(ctx context.Context, n *numField, name string, input any) (float64, *StatesError) {
	var v any
	var err error
	switch {
	case n.Path != nil:
		v, err = n.Path.Eval(r.env(input))
		if err != nil {
			return 0, r.runtime("Invalid path '%s' : %s", n.Path.String(), pathMsg(err))
		}
	case n.JSONata != nil:
		v, err = n.JSONata.eval(ctx, r.jenv(nil), name)
		if err != nil {
			return 0, r.fromEval(err)
		}
	default:
		return n.Value, nil
	}
	f, ok := toNumber(v)
	if s, isStr := v.(string); isStr && n.Path != nil {
		// AWS reads a number held in a string for the ...Path fields (recorded: MaxConcurrencyPath
		// on the variable "1").
		if p, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			f, ok = p, true
		}
	}
	if !ok {
		return 0, r.runtime("The value of the field '%s' must be a number, but was %s", name, compactJSON(v))
	}
	return f, nil
}

func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return 0, false
}

// --- Retry and Catch ---

// withRetry runs attempt until it succeeds, no retrier applies, or the matching retrier is spent.
func (r *stateRun) withRetry(ctx context.Context, attempt func(ctx context.Context) (any, *StatesError)) (any, *StatesError) {
	counts := make([]int, len(r.st.Retry))
	for {
		res, err := attempt(ctx)
		if err == nil || err == errParked {
			return res, err
		}
		if again, serr := r.retry(ctx, err, counts); !again {
			return nil, serr
		}
	}
}

// retry decides whether err is retried and, if so, waits the back-off. The first retrier whose
// ErrorEquals matches is the one used, even when exhausted. It returns the error to report when
// there is no retry.
func (r *stateRun) retry(ctx context.Context, err *StatesError, counts []int) (bool, *StatesError) {
	if ctx.Err() != nil {
		return false, stopped(ctx)
	}
	if err.Name == ErrRuntime || err.query != nil {
		return false, err
	}
	i := -1
	for j, rt := range r.st.Retry {
		if errorMatches(rt.ErrorEquals, err) {
			i = j
			break
		}
	}
	if i < 0 || counts[i] >= r.st.Retry[i].MaxAttempts {
		return false, err
	}
	rt := r.st.Retry[i]
	delay := rt.IntervalSeconds * math.Pow(rt.BackoffRate, float64(counts[i]))
	if rt.MaxDelaySeconds > 0 && delay > rt.MaxDelaySeconds {
		delay = rt.MaxDelaySeconds
	}
	if rt.JitterFull {
		delay *= r.f.x.eng.random()
	}
	counts[i]++
	r.retryCount++
	r.ctxObj = nil
	// TODO(persistence): a long back-off holds the goroutine; a durable engine parks here too.
	// The back-off ends at the deadline it got first, even after a restart.
	_, left, _ := deadline(ctx, r.f.x.eng.clock, TimerRetry, r.st.Name+mapIndex(r.f), time.Duration(delay*float64(time.Second)))
	if r.f.x.eng.clock.Sleep(ctx, left) != nil {
		return false, stopped(ctx)
	}
	return true, nil
}

// errorMatches applies ErrorEquals. States.ALL matches everything but States.Runtime (never caught
// or retried); States.TaskFailed matches names outside the States namespace (LocalStack's reading,
// which its recordings pass); States.HeartbeatTimeout matches heartbeat timeouts, which are
// reported as States.Timeout.
func errorMatches(list []string, err *StatesError) bool {
	if err.Name == ErrRuntime {
		return false
	}
	for _, e := range list {
		switch {
		case e == err.Name, e == ErrAll:
			return true
		case e == ErrTaskFailed && !hasStatesPrefix(err.Name):
			return true
		case e == ErrHeartbeatTimeout && err.heartbeat:
			return true
		}
	}
	return false
}

func hasStatesPrefix(s string) bool { return len(s) >= 7 && s[:7] == "States." }

func (r *stateRun) catcher(err *StatesError) *Catcher {
	if err.Name == ErrRuntime && err.query == nil {
		return nil
	}
	for _, c := range r.st.Catch {
		if errorMatches(c.ErrorEquals, err) {
			return c
		}
	}
	return nil
}

// caught builds a catcher's output: {"Error","Cause"} placed by its ResultPath into the raw input
// (JSONPath), or its Output over $states.errorOutput (JSONata).
func (r *stateRun) caught(ctx context.Context, c *Catcher, err *StatesError) (any, map[string]any, *StatesError) {
	errOut := err.errorOutput()
	if r.jsonPath() {
		out, rerr := r.resultPath(c.ResultPath, r.raw, errOut)
		if rerr != nil {
			return nil, nil, rerr
		}
		assigned, aerr := r.assign(ctx, c.Assign, errOut, nil)
		return out, assigned, aerr
	}
	return r.finishJSONata(ctx, c.Output, c.Assign, errOut, map[string]any{"errorOutput": errOut})
}

func cloneValue(v any) any {
	switch v.(type) {
	case map[string]any, []any:
		return deepClone(v)
	}
	return v
}
