package deploy

import (
	"fmt"
	"maps"
	"slices"
)

// The Go runtime's settings every function runs with, in its environment (RuntimeEnv), so the
// deployed functions and the cold-start benchmark that measures them read them from here.
//
// At its default (GOGC=100) the collector first runs when the heap reaches 4 MB, and the api,
// chat, system and integration functions allocate more than that in their package inits (the SDK's
// service schemas, the JSON Schema metaschemas): one collection inside every cold start, 5–6 ms of
// CPU per start here, more on a Lambda's fraction of a core. GOGC=400 moves the first collection to
// 16 MB, past init and a first invoke. GOGC alone would also let a large live heap grow five times
// over; GOMEMLIMIT caps that below the function's memory, so a warm function collects as the heap
// nears the limit instead of running out of memory: with a live heap under the limit the process
// stays under it too, and a live heap over it would have overrun the default's twice the live heap
// already. GOGC=off would need no collection until the limit, but would fill every warm function's
// memory up to it between collections, where GOGC=400 keeps a small heap small.
// https://go.dev/doc/gc-guide#Memory_limit
const GoGC = "400"

// goMemShare is the fraction of what the Go runtime may use (GOMEMLIMIT) of the memory a function
// has for itself: the rest is the binary's mapped text, the kernel's page tables and what the
// runtime does not count.
const goMemNum, goMemDen = 7, 8

// childMemoryMB is memory a function leaves for programs it runs beside itself, which the Go
// runtime does not see: ffmpeg in the integration function (package sandbox) decodes media in
// its own process.
var childMemoryMB = map[string]int{"integration": 512}

// GoMemLimitMiB is f's GOMEMLIMIT in MiB: seven eighths of its memory less what it leaves its
// child programs.
func (f Function) GoMemLimitMiB() int {
	return (f.MemoryMB - childMemoryMB[f.Name]) * goMemNum / goMemDen
}

// RuntimeEnv is the Go runtime's environment of f, beside its configuration (Env).
func (f Function) RuntimeEnv() map[string]string {
	return map[string]string{"GOGC": GoGC, "GOMEMLIMIT": fmt.Sprintf("%dMiB", f.GoMemLimitMiB())}
}

// RuntimeEnvList is RuntimeEnv as KEY=VALUE, sorted: a process's environment.
func (f Function) RuntimeEnvList() []string {
	env := f.RuntimeEnv()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
