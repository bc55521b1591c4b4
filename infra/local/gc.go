package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is local mode's GOGC unless the environment sets one: the process is long-lived and
// its live heap small (parked executions are data of a few KiB each), so collecting at four times
// the live heap instead of twice costs little memory and, under load, a good part of the CPU the
// collector took (a sixth of the process's CPU at the default, in the load test's profile).
const gcPercent = 400

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
