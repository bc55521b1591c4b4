package asl

import (
	"context"
	"sync"
)

// fanOut runs child frames side by side: Parallel's branches and an inline Map's iterations.

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
