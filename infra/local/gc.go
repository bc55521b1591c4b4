package main

import (
	"os"
	"runtime"
	"runtime/debug"
)

// gcPercent is local mode's GOGC unless the environment sets one: the process is long-lived and
// its live heap small (parked executions are data of a few KiB each), so collecting at four times
// the live heap instead of twice costs little memory and, under load, a good part of the CPU the
// collector took (a sixth of the process's CPU at the default, in the load test's profile).
const gcPercent = 400

// tuneRuntime sets local mode's GOGC, and its GOMAXPROCS to half the machine's CPUs (at least
// one), unless the environment sets them. Local mode shares the machine with DynamoDB Local, which
// runs its requests one at a time under one lock, so the thread holding that lock bounds every
// call's pace; local mode running on every CPU preempted it more, and its scheduler, waking threads
// to look for work, cost CPU besides. On two CPUs, alternating load runs with one P and with two
// served 3-17% more executions a second with one, at less of local mode's CPU per execution.
func tuneRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(max(1, runtime.NumCPU()/2))
	}
}
