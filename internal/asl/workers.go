package asl

import "time"

// Idle workers: at most maxIdleWorkers wait for more work, each for at most workerIdle.
const (
	maxIdleWorkers = 8
	workerIdle     = 2 * time.Second
)

// goRun runs fn on an idle worker goroutine of the engine, or on a new one. Executions run on
// reused goroutines because a new goroutine starts on a small stack that every execution grows
// again (copying it each time); a worker keeps the stack it grew.
func (e *Engine) goRun(fn runner) {
	select {
	case e.work <- fn:
	default:
		go e.worker(fn)
	}
}

func (e *Engine) worker(fn runner) {
	var t *time.Timer
	for {
		fn.run()
		if e.idle.Add(1) > maxIdleWorkers {
			e.idle.Add(-1)
			return
		}
		if t == nil {
			t = time.NewTimer(workerIdle)
			defer t.Stop()
		} else {
			t.Reset(workerIdle)
		}
		select {
		case fn = <-e.work:
			e.idle.Add(-1)
		case <-t.C:
			e.idle.Add(-1)
			return
		}
	}
}

// runner is work for goRun: an *Execution runs itself; runFunc runs any function.
type runner interface{ run() }

type runFunc func()

func (f runFunc) run() { f() }
