package lambdaapi

import "time"

// workerIdle is how long a worker goroutine waits for another invocation before it ends.
const workerIdle = 10 * time.Second

// workers runs invocations on goroutines kept from earlier ones. A function's call path (the AWS
// SDK's middleware stack, JSON, the handler) is deep: on a new goroutine its stack grew by copying
// a few times per invocation, which under make soak's load was 5% of local mode's CPU. A worker
// keeps its grown stack for the next invocation. There is no bound: a run starts at once, as on a
// goroutine of its own, and a worker idle for workerIdle ends.
var workers = make(chan func())

// goWorker runs f on an idle worker, or on a new one when none is idle.
func goWorker(f func()) {
	select {
	case workers <- f:
	default:
		go work(f)
	}
}

func work(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		f = nil // not kept alive while idle
		idle.Reset(workerIdle)
		select {
		case f = <-workers:
		case <-idle.C:
			return
		}
	}
}
