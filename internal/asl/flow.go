package asl

import (
	"context"
	"math"
	"runtime"
	"sync"
)

// maxInlineConcurrency bounds an inline Map whose MaxConcurrency is 0 (unbounded): AWS runs up to 40
// iterations of an inline Map at once.
const maxInlineConcurrency = 40

func (r *stateRun) parallel(ctx context.Context) (any, map[string]any, *StatesError) {
	st := r.st
	input, err := r.branchInput(ctx)
	if err != nil {
		return nil, nil, err
	}
	result, err := r.withRetry(ctx, func(ctx context.Context) (any, *StatesError) {
		r.f.emit(ctx, Event{Type: "ParallelStateStarted"})
		out, err := r.fanOut(ctx, len(st.Branches), len(st.Branches), -1, -1, func(i int) (*frame, any, *StatesError) {
			f := &frame{x: r.f.x, m: st.Branches[i]}
			f.own.parent = r.f.scope
			f.scope = &f.own
			return f, input, nil
		}, nil)
		if err != nil {
			return nil, err
		}
		r.f.emit(ctx, Event{Type: "ParallelStateSucceeded"})
		return out, nil
	})
	if err != nil {
		if ctx.Err() == nil {
			r.f.emit(ctx, Event{Type: "ParallelStateFailed"})
		}
		return nil, nil, err
	}
	if r.jsonPath() {
		return r.finishJSONPath(ctx, result, false)
	}
	return r.finishJSONata(ctx, st.Output, st.Assign, result, map[string]any{"result": result})
}

// mayBlock reports whether a run of m can wait on something (a task, a timer, a nested Map or
// Parallel); one that cannot only computes.
func mayBlock(m *Machine) bool {
	for _, st := range m.States {
		switch st.Type {
		case TypeTask, TypeWait, TypeMap, TypeParallel:
			return true
		}
	}
	return false
}

// branchInput is what Parallel's branches get: the effective input through Parameters (JSONPath),
// or Arguments (JSONata).
func (r *stateRun) branchInput(ctx context.Context) (any, *StatesError) {
	if !r.jsonPath() {
		if r.st.Arguments == nil {
			return r.raw, nil
		}
		v, err := r.st.Arguments.eval(ctx, r.jenv(nil), "Arguments")
		if err != nil {
			return nil, r.fromEval(err)
		}
		return v, nil
	}
	eff, err := r.inputPath(r.raw)
	if err != nil {
		return nil, err
	}
	return r.applyTemplate(r.st.Parameters, eff)
}

// iterHooks lets Map write its per-iteration events.
type iterHooks struct {
	started   func(i int) int64
	succeeded func(c *chain, i int)
	failed    func(c *chain, i int)
	aborted   func(c *chain, i int)
}

// fanOut runs n child frames, at most conc at a time, and gathers their outputs in order. A child's
// failure stops the others, unless tolerated (tolCount/tolPct; -1 = not set), in which case its
// slot holds its error output. The parent's chain continues from the last child's.
func (r *stateRun) fanOut(ctx context.Context, n, conc int, tolCount float64, tolPct float64,
	mk func(i int) (*frame, any, *StatesError), hooks *iterHooks) ([]any, *StatesError) {
	results := make([]any, n)
	if n == 0 {
		return results, nil
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fo := &fan{r: r, ctx: cctx, cancel: cancel, n: n, tolCount: tolCount, tolPct: tolPct, hooks: hooks,
		results: results, mk: mk, base: r.f.x.hist.lastOf(r.f.chain)}
	// conc workers take the children in order, this goroutine one of them: one handoff per
	// worker, not per child, and the helpers are the engine's pooled goroutines, whose stacks
	// have grown already. One at a time, children run here in order, so events and chains
	// follow AWS's order exactly.
	for range min(conc, n) - 1 {
		fo.wg.Add(1)
		r.f.x.eng.goRun(runFunc(func() {
			defer fo.wg.Done()
			fo.work()
		}))
	}
	fo.work()
	fo.wg.Wait()
	if ctx.Err() != nil {
		return nil, stopped(ctx)
	}
	if fo.firstErr != nil {
		return nil, fo.firstErr
	}
	return results, nil
}

// fan is one fanOut's shared state.
type fan struct {
	r                *stateRun
	ctx              context.Context
	cancel           context.CancelCauseFunc
	n                int
	tolCount, tolPct float64
	hooks            *iterHooks
	results          []any
	mk               func(i int) (*frame, any, *StatesError)
	wg               sync.WaitGroup

	startMu sync.Mutex // children are taken, and their first events written, in order
	next    int
	base    int64 // the parent's last event as the fan-out began: each branch's first links to it

	mu       sync.Mutex
	firstErr *StatesError
	failures int
}

type fanJob struct {
	i     int
	child *frame
	input any
}

// work runs children until none is left or the fan-out is stopped.
func (fo *fan) work() {
	for {
		j, ok := fo.take()
		if !ok {
			return
		}
		fo.run(j)
	}
}

// take gives the next child, with its first event written.
func (fo *fan) take() (fanJob, bool) {
	fo.startMu.Lock()
	defer fo.startMu.Unlock()
	if fo.next >= fo.n || fo.ctx.Err() != nil {
		return fanJob{}, false
	}
	i := fo.next
	fo.next++
	child, input, err := fo.mk(i)
	if err != nil {
		fo.fail(err)
		return fanJob{}, false
	}
	c := &child.ownChain
	if fo.hooks != nil {
		c.last = fo.hooks.started(i)
	} else {
		c.last = fo.base
	}
	child.chain = c
	return fanJob{i: i, child: child, input: input}, true
}

func (fo *fan) fail(err *StatesError) {
	fo.mu.Lock()
	if fo.firstErr == nil {
		fo.firstErr = err
	}
	fo.mu.Unlock()
	fo.cancel(errCancelled)
}

func (fo *fan) tolerated() bool {
	if fo.tolCount < 0 && fo.tolPct < 0 {
		return false
	}
	okCount := fo.tolCount >= 0 && float64(fo.failures) <= fo.tolCount
	okPct := fo.tolPct >= 0 && float64(fo.failures)*100/float64(fo.n) <= fo.tolPct
	return okCount || okPct
}

// run runs one child frame and records its outcome.
func (fo *fan) run(j fanJob) {
	out, _, err := j.child.runMachine(fo.ctx, j.input, "")
	c, hooks, hist := j.child.chain, fo.hooks, &fo.r.f.x.hist
	fo.mu.Lock()
	defer fo.mu.Unlock()
	if err != nil && fo.ctx.Err() != nil && fo.firstErr != nil {
		if hooks != nil {
			hooks.aborted(c, j.i)
		}
		return
	}
	if err != nil {
		if hooks != nil {
			hooks.failed(c, j.i)
		}
		fo.failures++
		if fo.tolerated() {
			fo.results[j.i] = err.errorOutput()
		} else if fo.firstErr == nil {
			fo.firstErr = err
			if fo.tolCount >= 0 || fo.tolPct >= 0 {
				fo.firstErr = newErr(ErrExceedToleratedFailures, "The specified tolerated failure threshold was exceeded")
			}
			fo.cancel(errCancelled)
		}
	} else {
		fo.results[j.i] = out
		if hooks != nil {
			hooks.succeeded(c, j.i)
		}
	}
	hist.link(fo.r.f.chain, hist.lastOf(c))
}

func (r *stateRun) mapState(ctx context.Context) (any, map[string]any, *StatesError) {
	st := r.st
	eff, items, err := r.mapItems(ctx)
	if err != nil {
		return nil, nil, err
	}
	conc, err := r.optNumber(ctx, st.MaxConcurrency, "MaxConcurrency", eff, 0)
	if err != nil {
		return nil, nil, err
	}
	if st.Distributed {
		return r.distributedMap(ctx, items, eff, int(conc))
	}
	tolCount, err := r.optNumber(ctx, st.ToleratedFailureCount, "ToleratedFailureCount", eff, -1)
	if err != nil {
		return nil, nil, err
	}
	tolPct, err := r.optNumber(ctx, st.ToleratedFailurePercentage, "ToleratedFailurePercentage", eff, -1)
	if err != nil {
		return nil, nil, err
	}
	if conc <= 0 || conc > maxInlineConcurrency {
		conc = maxInlineConcurrency
	}
	if !mayBlock(st.Processor) {
		// Iterations that never wait gain nothing from more goroutines than processors.
		conc = min(conc, float64(runtime.GOMAXPROCS(0)))
	}
	result, err := r.withRetry(ctx, func(ctx context.Context) (any, *StatesError) {
		return r.mapIterations(ctx, items, eff, int(conc), tolCount, tolPct)
	})
	if err != nil {
		if ctx.Err() == nil {
			r.f.emit(ctx, Event{Type: "MapStateFailed"})
		}
		return nil, nil, err
	}
	if r.jsonPath() {
		return r.finishJSONPath(ctx, result, false)
	}
	return r.finishJSONata(ctx, st.Output, st.Assign, result, map[string]any{"result": result})
}

// mapItems gives the Map's effective input (after InputPath) and its items: ItemsPath over the
// effective input (JSONPath), or Items, else the input (JSONata).
func (r *stateRun) mapItems(ctx context.Context) (any, []any, *StatesError) {
	st := r.st
	if !r.jsonPath() {
		v := r.raw
		if st.Items != nil {
			var e error
			if v, e = st.Items.eval(ctx, r.jenv(nil), "Items"); e != nil {
				return nil, nil, r.fromEval(e)
			}
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, nil, r.itemsNotArray(ctx, v)
		}
		return r.raw, arr, nil
	}
	eff, err := r.inputPath(r.raw)
	if err != nil {
		return nil, nil, err
	}
	v := eff
	if st.ItemsPath.Set && !st.ItemsPath.Null {
		var e error
		if v, e = st.ItemsPath.Path.Eval(r.env(eff)); e != nil {
			return nil, nil, r.runtime("Invalid path '%s' : %s", st.ItemsPath.Path.String(), pathMsg(e))
		}
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, nil, r.runtime("Invalid path '%s': The Map state's ItemsPath must reference an array, but the value is %s", itemsPathSrc(st), compactJSON(v))
	}
	return eff, arr, nil
}

// mapIterations is one attempt of an inline Map: its events and an iteration per item.
func (r *stateRun) mapIterations(ctx context.Context, items []any, eff any, conc int, tolCount, tolPct float64) (any, *StatesError) {
	st := r.st
	hist := &r.f.x.hist
	r.f.emit(ctx, Event{Type: "MapStateStarted", MapStateStartedEventDetails: &MapStateStartedDetails{Length: len(items)}})
	// Each iteration writes its started and ended events and at least two per state it visits;
	// then come the Map's two closing events and maybe the execution's (the room for them spares
	// a copy of all the records at the very end).
	hist.reserve(len(items)*(2+2*len(st.Processor.States)) + 3)
	var lastSucceeded int64
	now := r.f.x.eng.clock.Now
	// The details of every iteration's started and succeeded events, in one allocation.
	dets := make([]MapIterationDetails, 2*len(items))
	hooks := &iterHooks{
		started: func(i int) int64 {
			dets[2*i] = MapIterationDetails{Name: st.Name, Index: i}
			return r.f.emitDetails("MapIterationStarted", &dets[2*i])
		},
		succeeded: func(c *chain, i int) {
			dets[2*i+1] = MapIterationDetails{Name: st.Name, Index: i}
			lastSucceeded, _ = hist.addDetails(c, now(), "MapIterationSucceeded", &dets[2*i+1])
		},
		failed: func(c *chain, i int) {
			hist.add(c, now(), Event{Type: "MapIterationFailed", MapIterationFailedEventDetails: &MapIterationDetails{Name: st.Name, Index: i}})
		},
		aborted: func(c *chain, i int) {
			hist.add(c, now(), Event{Type: "MapIterationAborted", MapIterationAbortedEventDetails: &MapIterationDetails{Name: st.Name, Index: i}})
		},
	}
	out, err := r.fanOut(ctx, len(items), conc, tolCount, tolPct, func(i int) (*frame, any, *StatesError) {
		return r.iteration(ctx, items, eff, i)
	}, hooks)
	if err != nil {
		return nil, err
	}
	if lastSucceeded > 0 {
		// After the last iteration, AWS links the Map's next events to the last
		// MapIterationSucceeded (recorded in the localstack-sfn Map histories).
		hist.link(r.f.chain, lastSucceeded)
	}
	r.f.emit(ctx, Event{Type: "MapStateSucceeded"})
	arr := make([]any, len(out))
	copy(arr, out)
	return arr, nil
}

// iteration gives the frame of item i and its input: the item, or ItemSelector's value.
func (r *stateRun) iteration(ctx context.Context, items []any, eff any, i int) (*frame, any, *StatesError) {
	st := r.st
	child := itemFrame(r.f.x, st.Processor, r.f.scope, i, items[i])
	if st.ItemSelector == nil {
		if r.jsonPath() {
			// The item is a part of the state's input (ItemsPath), so no longer as JSON.
			child.inBound = r.rawBound
		}
		return child, items[i], nil
	}
	sr := &stateRun{f: &frame{x: r.f.x, scope: r.f.scope, inMap: true, mapIndex: i, mapValue: items[i]}, st: st, raw: r.raw, entered: r.entered, enteredAt: r.enteredAt}
	if st.ItemSelector.jsonata != nil {
		v, e := st.ItemSelector.jsonata.eval(ctx, sr.jenv(nil), "ItemSelector")
		if e != nil {
			return nil, nil, sr.fromEval(e)
		}
		return child, v, nil
	}
	v, e := sr.applyTemplate(st.ItemSelector, eff)
	if e != nil {
		return nil, nil, e
	}
	return child, v, nil
}

// itemsNotArray fails a JSONata Map whose Items (or input) is not an array, as recorded: an
// EvaluationFailed event, then MapStateFailed (test_map_state_items_*).
func (r *stateRun) itemsNotArray(ctx context.Context, v any) *StatesError {
	var e *StatesError
	loc := ""
	switch t := typeName(v); {
	case r.st.Items == nil:
		e = r.runtime("Map state input must be an array but was: %s", compactJSON(v))
	case t == "null" || t == "boolean" || t == "string" || t == "number" || t == "object":
		loc = "Items"
		e = r.runtime("The JSONata expression '%s' specified for the field 'Items' returned an unexpected result type. Expected 'array', but was '%s' for value: %s", r.st.Items.src, t, compactJSON(v))
	default:
		loc = "Items"
		e = r.runtime("The JSONata expression '%s' specified for the field 'Items' returned an unsupported result type.", r.st.Items.src)
	}
	e.Name = ErrQueryEvaluation
	e.query = &queryLocated{location: loc, reported: true}
	f := r.f
	f.x.hist.addAfter(f.chain, r.before, f.x.eng.clock.Now(), Event{Type: "EvaluationFailed", EvaluationFailedEventDetails: &EvaluationFailedDetails{
		Error: ErrQueryEvaluation, Cause: e.Cause, Location: loc, State: r.st.Name}})
	f.emit(ctx, Event{Type: "MapStateFailed"})
	return e
}

func itemsPathSrc(st *State) string {
	if st.ItemsPath.Path != nil {
		return st.ItemsPath.Path.String()
	}
	return "$"
}

func (r *stateRun) optNumber(ctx context.Context, n *numField, name string, input any, def float64) (float64, *StatesError) {
	if n == nil {
		return def, nil
	}
	var f float64
	var err *StatesError
	if n.Path != nil {
		// AWS's wording for a ...Path value that is not a number (recorded, test_max_concurrency_path).
		f, err = r.pathNumber(n, name, input, name != "ToleratedFailurePercentage")
	} else {
		f, err = r.intValue(ctx, n, name, input)
	}
	if err != nil {
		return 0, err
	}
	if f < 0 || math.IsNaN(f) {
		return 0, r.runtime("The value of the field '%s' must be a non-negative number, but was %v", name, f)
	}
	return f, nil
}
