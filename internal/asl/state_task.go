package asl

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Task: a call of a resource (an integration "service:api", Lambda, a nested execution), maybe
// waiting on a task token, bounded by TimeoutSeconds and HeartbeatSeconds. The resources
// themselves are in resource.go, lambda.go and startexec.go.
// https://docs.aws.amazon.com/step-functions/latest/dg/state-task.html

var (
	resourceFields = []string{"Resource", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds", "HeartbeatSecondsPath", "Credentials"}
	taskFields     = fieldSet(commonFields, flowFields, jsonPathIO, resourceFields, errorFields, []string{"Parameters", "ResultSelector", "ResultPath", "Assign", "Arguments", "Output"})
)

// TaskSpec is what a Task state has of its own.
type TaskSpec struct {
	Resource         string
	resource         resourceRef
	TimeoutSeconds   *numField
	HeartbeatSeconds *numField
}

// taskState reads Resource, TimeoutSeconds and HeartbeatSeconds.
func (p *parser) taskState(st *State, obj map[string]any, loc string) {
	spec := &TaskSpec{}
	st.Task = spec
	res, ok := obj["Resource"].(string)
	if !ok || res == "" {
		p.schema(loc, "These fields are required: [Resource]")
		return
	}
	spec.Resource = res
	ref, err := parseResource(res)
	if err != nil {
		p.schema(loc+"/Resource", "The resource provided %s is not recognized. The value is not a valid resource ARN, or the resource is not available in this region.", res)
	}
	spec.resource = ref
	jp := st.QueryLanguage == JSONPath
	spec.TimeoutSeconds = p.numFieldOf(obj, "TimeoutSeconds", "TimeoutSecondsPath", loc, jp, 1, 99999999)
	spec.HeartbeatSeconds = p.numFieldOf(obj, "HeartbeatSeconds", "HeartbeatSecondsPath", loc, jp, 1, 99999999)
	if spec.TimeoutSeconds != nil && spec.HeartbeatSeconds != nil && spec.TimeoutSeconds.Path == nil && spec.HeartbeatSeconds.Path == nil &&
		spec.TimeoutSeconds.JSONata == nil && spec.HeartbeatSeconds.JSONata == nil && spec.HeartbeatSeconds.Value >= spec.TimeoutSeconds.Value {
		p.schema(loc+"/HeartbeatSeconds", "HeartbeatSeconds must be smaller than TimeoutSeconds")
	}
}

// argsFit reports whether the task's Parameters are evaluated as taskArgs: a JSONPath
// lambda:invoke request-response task on the engine's own integration, with a small object.
func (r *stateRun) argsFit() bool {
	ref, t := &r.st.Task.resource, r.st.Parameters
	return t != nil && t.root.isObj && len(t.root.obj) <= len(taskArgs{}.vals) && !ref.Legacy && ref.Pattern == "" &&
		ref.Service == "lambda" && ref.API == "invoke" && r.f.x.eng.builtinInvoke
}

var errTaskTimeout = errors.New("task timed out")

// waiting is a task attempt parked on its token: everything needed to finish it later.
type waiting struct {
	p           *pendingTask
	stopTimeout func() bool
	timeoutAt   time.Time // zero without TimeoutSeconds
	hbMu        sync.Mutex
	stopHB      func() bool
	heartbeat   time.Duration // zero without HeartbeatSeconds
	heartbeatAt time.Time
	unwound     chan struct{} // closed once the parking goroutine has returned
}

// armHeartbeat (re)starts the heartbeat timer to fire after d.
func (w *waiting) armHeartbeat(clock Clock, d time.Duration) {
	w.armHeartbeatAt(clock, clock.Now().Add(d), d)
}

// armHeartbeatAt (re)starts the heartbeat timer to fire at deadline at, left from now.
func (w *waiting) armHeartbeatAt(clock Clock, at time.Time, left time.Duration) {
	w.hbMu.Lock()
	defer w.hbMu.Unlock()
	if w.stopHB != nil {
		w.stopHB()
	}
	w.heartbeatAt = at
	p := w.p
	w.stopHB = clock.AfterFunc(left, func() { p.deliver(taskOutcome{timedOut: true, heartbeat: true}) })
}

func (w *waiting) stopTimers() {
	if w.stopTimeout != nil {
		w.stopTimeout()
	}
	w.hbMu.Lock()
	if w.stopHB != nil {
		w.stopHB()
	}
	w.hbMu.Unlock()
}

// task runs a Task state: its attempts under Retry, then its data flow out.
func (r *stateRun) task(ctx context.Context) (any, map[string]any, *StatesError) {
	r.eff = r.raw
	if r.jsonPath() {
		var err *StatesError
		if r.eff, err = r.inputPath(r.raw); err != nil {
			return nil, nil, err
		}
	}
	r.tv = newTaskVisit(r.jsonPath() && r.argsFit())
	if n := len(r.st.Retry); n <= len(r.tv.counts) {
		r.counts = r.tv.counts[:n:n]
	} else {
		r.counts = make([]int, n)
	}
	result, err := r.taskAttempts(ctx)
	return r.taskFinish(ctx, result, err)
}

// taskVisit holds what a Task state's first attempt would otherwise allocate piece by piece: its
// retry counters, its call and the details of its events. A later attempt gets one of its own, as
// the first's events keep theirs.
type taskVisit struct {
	counts        [2]int
	scheduled     scheduledLater
	started       TaskDetails
	events        taskEvents
	outcome       taskOutputLater
	args          *taskArgs // room for the Parameters of a task that argsFit, nil until needed
	used, outUsed bool
}

// newTaskVisit allocates a visit, with room for its arguments in the same allocation when the task
// will need it (others would keep that room unused while parked on a token).
func newTaskVisit(withArgs bool) *taskVisit {
	if !withArgs {
		return &taskVisit{}
	}
	v := &struct {
		tv   taskVisit
		args taskArgs
	}{}
	v.tv.args = &v.args
	return &v.tv
}

// attempt gives the taskVisit of an attempt: the visit's own for the first.
func (r *stateRun) attempt() *taskVisit {
	if r.tv != nil && !r.tv.used {
		r.tv.used = true
		return r.tv
	}
	return &taskVisit{used: true}
}

// taskFinish is the data flow after the task's result: ResultSelector, ResultPath, OutputPath and
// Assign (JSONPath), or Output and Assign (JSONata).
func (r *stateRun) taskFinish(ctx context.Context, result any, err *StatesError) (any, map[string]any, *StatesError) {
	if err != nil {
		return nil, nil, err
	}
	if l, ok := result.(*lambdaResult); ok {
		if sel := r.st.ResultSelector; r.jsonPath() && sel != nil && r.st.Assign == nil && sel.readsOnly("Payload") {
			// The selector reads nothing else of the result: only its Payload need be at hand.
			v, err := r.selectPayload(sel, l)
			if err != nil {
				return nil, nil, err
			}
			r.resultBound = sel.sizeBound(r.resultBound)
			return r.finishJSONPath(ctx, v, true)
		}
		result = l.full()
	}
	return r.finishResult(ctx, result)
}

// payloadWrappers hold {"Payload": x} for selectPayload: a selector whose paths all start at
// $.Payload never gives the wrapper itself, so it can serve again once evaluated.
var payloadWrappers = sync.Pool{New: func() any { return make(map[string]any, 1) }}

// selectPayload is ResultSelector sel over l, when sel reads only within $.Payload. A path not found
// quotes the whole result in its message, as over the bytes interface.
func (r *stateRun) selectPayload(sel *template, l *lambdaResult) (any, *StatesError) {
	w := payloadWrappers.Get().(map[string]any)
	w["Payload"] = l.payload
	v, err := sel.evalJSONPath(r.env(w))
	clear(w)
	payloadWrappers.Put(w)
	if err != nil {
		return r.applyTemplate(sel, l.full())
	}
	return v, nil
}

// taskAttempts runs attempts until one succeeds, the retriers give up, or one parks.
func (r *stateRun) taskAttempts(ctx context.Context) (any, *StatesError) {
	for {
		res, err := r.taskAttempt(ctx)
		if err == nil || err == errParked {
			return res, err
		}
		if again, serr := r.retry(ctx, err, r.counts); !again {
			return nil, serr
		}
	}
}

// taskAttempt runs the task once, with its history events and time bounds.
func (r *stateRun) taskAttempt(ctx context.Context) (any, *StatesError) {
	st := r.st
	eng := r.f.x.eng
	r.token, r.ctxObj, r.waiting = "", nil, nil
	var p *pendingTask
	if st.Task.resource.Pattern == PatternWaitForToken {
		r.token, p = eng.registerToken(r.f.x)
	}
	fail := func(err *StatesError) (any, *StatesError) {
		if r.token != "" {
			eng.closeToken(r.token)
		}
		return nil, err
	}
	tv := r.attempt()
	params, err := r.taskParams(ctx, tv)
	if err != nil {
		return fail(err)
	}
	timeout, err := r.optSeconds(ctx, st.Task.TimeoutSeconds, "TimeoutSeconds", r.eff)
	if err != nil {
		return fail(err)
	}
	heartbeat, err := r.optSeconds(ctx, st.Task.HeartbeatSeconds, "HeartbeatSeconds", r.eff)
	if err != nil {
		return fail(err)
	}
	ev := r.scheduleTask(ctx, tv, params, timeout, heartbeat)

	tctx, cancel := ctx, context.CancelCauseFunc(func(error) {})
	if timeout != nil || p != nil {
		// Only a timeout or a token's end cancels the call on its own.
		tctx, cancel = context.WithCancelCause(ctx)
	}
	tb := r.armTimeout(ctx, timeout, cancel, p)
	result, serr := r.call(tctx, params, ev)
	if context.Cause(tctx) == errTaskTimeout && ctx.Err() == nil && !(tb.expired && (serr == nil || serr.Name != ErrTimeout)) {
		// A result that comes after the deadline is discarded.
		result, serr = nil, &StatesError{Name: ErrTimeout, hasName: true}
	}
	if serr != nil || p == nil {
		if tb.stop != nil {
			tb.stop()
		}
		cancel(nil)
		if p != nil {
			eng.closeToken(r.token)
		}
		return r.settle(ctx, ev, result, serr)
	}
	cancel(nil)

	// .waitForTaskToken: the service call went out; now the token decides.
	ev.submitted(result)
	return r.awaitToken(ctx, p, tb, heartbeat)
}

// taskParams is the task's effective parameters: Parameters over the effective input (JSONPath),
// Arguments (JSONata), or the state's input.
func (r *stateRun) taskParams(ctx context.Context, tv *taskVisit) (any, *StatesError) {
	st := r.st
	if r.jsonPath() {
		if r.argsFit() {
			if tv.args == nil {
				tv.args = new(taskArgs)
			}
			if err := st.Parameters.root.evalArgs(r.env(r.eff), tv.args); err != nil {
				return nil, r.fromEval(err)
			}
			return tv.args, nil
		}
		return r.applyTemplate(st.Parameters, r.eff)
	}
	return r.arguments(ctx)
}

// scheduleTask records the task's scheduled and started events (a legacy Lambda resource has
// events of its own) and gives the recorder of its outcome.
func (r *stateRun) scheduleTask(ctx context.Context, tv *taskVisit, params any, timeout, heartbeat *int64) *taskEvents {
	ref := r.st.Task.resource
	now := r.f.x.eng.clock.Now() // both events happen as the task goes out
	if ref.Legacy {
		r.f.emitAt("LambdaFunctionScheduled", &lambdaScheduledLater{
			d: LambdaScheduledDetails{Resource: ref.Function, TimeoutInSeconds: timeout}, input: params}, now)
		r.f.emitAt("LambdaFunctionStarted", nil, now)
	} else {
		res := ref.historyResource()
		tv.scheduled = scheduledLater{d: TaskScheduledDetails{
			ResourceType: ref.Service, Resource: res, Region: r.f.x.eng.cfg.Region,
			TimeoutInSeconds: timeout, HeartbeatInSeconds: heartbeat}, params: params}
		r.f.emitAt("TaskScheduled", &tv.scheduled, now)
		tv.started = TaskDetails{ResourceType: ref.Service, Resource: res}
		r.f.emitAt("TaskStarted", &tv.started, now)
	}
	tv.events = taskEvents{r: r, ref: &r.st.Task.resource, tv: tv}
	return &tv.events
}

// timeBound is an attempt's TimeoutSeconds: its timer's stop, its deadline, and whether the
// deadline had passed already (replayed after a restart).
type timeBound struct {
	stop    func() bool
	at      time.Time
	expired bool
}

// armTimeout starts the attempt's timeout: when it fires, the call's context is cancelled and a
// token's wait (p) ends timed out. Without a timeout, the zero timeBound.
func (r *stateRun) armTimeout(ctx context.Context, timeout *int64, cancel context.CancelCauseFunc, p *pendingTask) timeBound {
	var tb timeBound
	if timeout == nil {
		return tb
	}
	eng := r.f.x.eng
	var left time.Duration
	tb.at, left, _ = deadline(ctx, eng.clock, TimerTimeout, r.st.Name+mapIndex(r.f), time.Duration(*timeout)*time.Second)
	if tb.expired = left <= 0; tb.expired {
		// The call gets a spent context: one the journal answers keeps its answer (it came
		// in time), any other does not run. A token's timeout waits until the journal has
		// delivered any answer it holds, so that answer wins.
		cancel(errTaskTimeout)
		return tb
	}
	tb.stop = eng.clock.AfterFunc(left, func() {
		cancel(errTaskTimeout)
		if p != nil {
			p.deliver(taskOutcome{timedOut: true})
		}
	})
	return tb
}

// awaitToken waits for the answer to the attempt's task token, its timeout or its heartbeat
// timeout: at the top of the execution by parking (errParked), inside a Map iteration or a
// Parallel branch on the goroutine.
func (r *stateRun) awaitToken(ctx context.Context, p *pendingTask, tb timeBound, heartbeat *int64) (any, *StatesError) {
	eng := r.f.x.eng
	w := &waiting{p: p, stopTimeout: tb.stop, timeoutAt: tb.at}
	r.waiting = w
	if tb.expired {
		// After the call: an answer the journal delivered during it came first, and wins.
		p.deliver(taskOutcome{timedOut: true})
	}
	if heartbeat != nil {
		w.heartbeat = time.Duration(*heartbeat) * time.Second
		// The first deadline is the journaled one after a restart; each heartbeat renews it.
		at, left, renew := deadline(ctx, eng.clock, TimerHeartbeat, r.st.Name+mapIndex(r.f), w.heartbeat)
		w.armHeartbeatAt(eng.clock, at, left)
		arm := func() { w.armHeartbeatAt(eng.clock, renew(w.heartbeat), w.heartbeat) }
		p.mu.Lock()
		p.heartbeat = arm
		p.mu.Unlock()
	}
	if r.f.top {
		// Park: release the goroutine; the first outcome resumes the execution.
		w.unwound = make(chan struct{})
		x := r.f.x
		x.setParked(r)
		p.setHandler(func(o taskOutcome) { x.eng.goRun(runFunc(func() { x.resume(r, w, o) })) })
		if ctx.Err() != nil {
			// Stopped while parking: abort may have looked before we were parked.
			p.deliver(taskOutcome{aborted: true})
		}
		return nil, errParked
	}
	// Inside a Map iteration or a Parallel branch the goroutine waits.
	// TODO(persistence): park nested frames too, so a Map of waiting calls holds no goroutines.
	ch := make(chan taskOutcome, 1)
	p.setHandler(func(o taskOutcome) { ch <- o })
	var o taskOutcome
	select {
	case o = <-ch:
	case <-ctx.Done():
		o = taskOutcome{aborted: true}
	}
	return r.endWait(ctx, o)
}

// endWait finishes a waiting attempt with its outcome.
func (r *stateRun) endWait(ctx context.Context, o taskOutcome) (any, *StatesError) {
	r.resultBound = 0 // the token's answer is not the call's result
	w := r.waiting
	r.waiting = nil
	w.stopTimers()
	eng := r.f.x.eng
	ev := &taskEvents{r: r, ref: &r.st.Task.resource}
	switch {
	case o.aborted || ctx.Err() != nil:
		eng.closeToken(r.token)
		return nil, stopped(ctx)
	case o.timedOut:
		eng.closeToken(r.token)
		return r.settle(ctx, ev, nil, &StatesError{Name: ErrTimeout, hasName: true, heartbeat: o.heartbeat})
	default:
		eng.closeToken(r.token)
		return r.settle(ctx, ev, o.output, o.err)
	}
}

// settle writes the attempt's closing event and gives its result or failure.
func (r *stateRun) settle(ctx context.Context, ev *taskEvents, result any, serr *StatesError) (any, *StatesError) {
	var over bool
	if serr == nil && (r.resultBound <= 0 || r.resultBound+16 > MaxPayloadBytes) {
		r.resultBound, over = jsonLen(materialize(result), MaxPayloadBytes)
	}
	if over {
		// AWS names the resource here, not the state (recorded: 'lambda' for lambda:invoke, the
		// function ARN for the legacy resource).
		who := r.st.Task.resource.Service
		if r.st.Task.resource.Legacy {
			who = r.st.Task.resource.Function
		}
		serr = errf(ErrDataLimitExceeded, "The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", who)
	}
	if serr != nil {
		if ctx.Err() != nil {
			return nil, stopped(ctx)
		}
		switch {
		case serr.Name == ErrTimeout:
			ev.timedOut(serr)
		case serr.Name != ErrRuntime:
			ev.failed(serr)
		}
		return nil, serr
	}
	ev.succeeded(result)
	return result, nil
}

// call invokes the resource (without waiting on a token).
func (r *stateRun) call(ctx context.Context, params any, ev *taskEvents) (any, *StatesError) {
	r.resultBound = 0 // unknown unless the integration gives one
	eng := r.f.x.eng
	ref := r.st.Task.resource
	if ref.Key() == "states:startExecution" && eng.integrations[ref.Key()] == nil {
		return r.startExecution(ctx, params, ev)
	}
	if ref.Legacy {
		if eng.cfg.Lambda == nil {
			return nil, newErr("Lambda.ResourceNotFoundException", "Function not found: "+ref.Function)
		}
		resp, err := eng.cfg.Lambda.Invoke(ctx, LambdaRequest{FunctionName: ref.Function, Payload: []byte(compactJSON(params))})
		if err != nil {
			if ctx.Err() != nil {
				return nil, newErr(ErrTimeout, "")
			}
			return nil, lambdaServiceError(err)
		}
		if resp.FunctionError != "" {
			return nil, functionError(resp, false)
		}
		v, derr := decodeJSON(resp.Payload)
		if derr != nil {
			return string(resp.Payload), nil
		}
		return v, nil
	}
	integ, ok := eng.integrations[ref.Key()]
	if !ok || ref.Activity {
		return nil, r.runtime("The resource '%s' is not supported by this engine", r.st.Task.Resource)
	}
	// Its own allocation, not room in the attempt's: a parked execution keeps the attempt, and the
	// call is garbage once Invoke returns.
	call := &TaskCall{Resource: r.st.Task.Resource, Service: ref.Service, API: ref.API, Pattern: ref.Pattern, Parameters: params,
		TaskToken: r.token, ExecutionArn: r.f.x.ARN, StateName: r.st.Name}
	// TODO(.sync): registered integrations run request-response; only states:startExecution
	// (above) implements .sync and .sync:2.
	out, err := integ.Invoke(ctx, call)
	if err != nil {
		if ctx.Err() != nil {
			return nil, newErr(ErrTimeout, "")
		}
		var se *StatesError
		if errors.As(err, &se) {
			return nil, se
		}
		return nil, newErr(ErrTaskFailed, err.Error())
	}
	if l, ok := out.(*lambdaResult); ok {
		r.resultBound = l.bound
		return l, nil
	}
	return out, nil
}

// optSeconds resolves TimeoutSeconds/HeartbeatSeconds (literal, path or JSONata) to whole seconds.
func (r *stateRun) optSeconds(ctx context.Context, n *numField, name string, input any) (*int64, *StatesError) {
	if n == nil {
		return nil, nil
	}
	f, err := r.intValue(ctx, n, name, input)
	if err != nil {
		return nil, err
	}
	if f < 1 || f != float64(int64(f)) {
		return nil, r.runtime("The value of the field '%s' must be a positive integer, but was %v", name, f)
	}
	v := int64(f)
	return &v, nil
}

// taskEvents writes the closing event of a task attempt in the shape of its resource kind.
type taskEvents struct {
	r   *stateRun
	ref *resourceRef // the state's, which never changes
	tv  *taskVisit   // the attempt's room for its closing event's details (nil: allocate them)
}

// outputLater gives room for the details of the attempt's closing event with an output.
func (t *taskEvents) outputLater() *taskOutputLater {
	if t.tv != nil && !t.tv.outUsed {
		t.tv.outUsed = true
		return &t.tv.outcome
	}
	return &taskOutputLater{}
}

func (t *taskEvents) emit(e Event) { t.r.f.emit(context.Background(), e) }

func (t *taskEvents) base() *TaskDetails {
	return &TaskDetails{ResourceType: t.ref.Service, Resource: t.ref.historyResource()}
}

func (t *taskEvents) submitted(out any) {
	d := t.outputLater()
	*d = taskOutputLater{d: TaskDetails{ResourceType: t.ref.Service, Resource: t.ref.historyResource()}, out: out}
	t.r.f.emitDetails("TaskSubmitted", d)
}

func (t *taskEvents) succeeded(out any) {
	if t.ref.Legacy {
		t.r.f.emitDetails("LambdaFunctionSucceeded", &outputLater{out: out})
		return
	}
	d := t.outputLater()
	*d = taskOutputLater{d: TaskDetails{ResourceType: t.ref.Service, Resource: t.ref.historyResource()}, out: out}
	t.r.f.emitDetails("TaskSucceeded", d)
}

func (t *taskEvents) failed(e *StatesError) {
	if t.ref.Legacy {
		t.emit(Event{Type: "LambdaFunctionFailed", LambdaFunctionFailedEventDetails: &ErrorDetails{Error: e.Name, Cause: e.Cause}})
		return
	}
	d := t.base()
	d.Error, d.Cause = e.Name, e.Cause
	t.emit(Event{Type: "TaskFailed", TaskFailedEventDetails: d})
}

func (t *taskEvents) timedOut(e *StatesError) {
	if t.ref.Legacy {
		t.emit(Event{Type: "LambdaFunctionTimedOut", LambdaFunctionTimedOutEventDetails: &ErrorDetails{Error: e.Name, Cause: e.Cause}})
		return
	}
	d := t.base()
	d.Error, d.Cause = e.Name, e.Cause
	t.emit(Event{Type: "TaskTimedOut", TaskTimedOutEventDetails: d})
}
