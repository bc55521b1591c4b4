package asl

import (
	"context"
	"errors"
	"fmt"
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
	// Where the frame is: the Map or Parallel visit that runs it (nil for an execution's own) and
	// its iteration's or branch's index; steps counts its state visits so far. Together they name
	// a visit by its place, the same when a replay after a restart runs it again (position).
	up     *stateRun
	branch int
	steps  int
}

// mapItem is $$.Map.Item, or nil outside a Map iteration.
func (f *frame) mapItem() map[string]any {
	if !f.inMap {
		return nil
	}
	return map[string]any{"Index": int64(f.mapIndex), "Value": f.mapValue}
}

// itemFrame is a frame inside Map iteration i of item v.
func itemFrame(up *stateRun, m *Machine, i int, v any) *frame {
	c := &struct {
		f frame
		r stateRun
	}{f: frame{x: up.f.x, m: m, inMap: true, mapIndex: i, mapValue: v, up: up, branch: i}}
	parent := up.f.scope
	f := &c.f
	f.own.parent = parent
	f.scope = &f.own
	f.first = &c.r // most iterations visit one state
	return f
}

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
	step       int   // the visit's ordinal in its frame (1 for the first)
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
	if tr := f.x.eng.cfg.Transition; tr != nil {
		if err := tr(ctx); err != nil {
			return step{}, stopped(ctx)
		}
		at = time.Time{} // entered when the transition went through
	}
	now := at
	if now.IsZero() {
		now = f.x.eng.clock.Now()
	}
	// Field by field into the zeroed visit: copying a whole struct literal in costs a write
	// barrier over every pointer slot while the GC runs.
	r := f.newRun()
	r.f, r.st, r.raw, r.before, r.rawBound = f, st, raw, f.x.hist.lastOf(f.chain), inBound
	f.steps++
	r.step = f.steps
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
