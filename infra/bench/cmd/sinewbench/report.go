package main

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// report collects each part's markdown and writes BENCHMARKS.md.
type report struct {
	o         options
	started   time.Time
	headlines []string
	goals     []goalRow
	sections  map[string]*strings.Builder
	order     []string
}

// engineProfiles is the method note on the engine's CPU profiles before and after its rework: a
// record of how the part 3 figures were got, not measured by this command.
//
//go:embed engine_profiles.md
var engineProfiles string

var titles = map[string]string{
	"dispatch":   "1. Dispatch overhead per tool call, in-process, beside the JSON floor",
	"engine":     "2. The engine",
	"peer":       "3. Peer engine: aws-local-stepfunctions 3.0.0, same definitions, same run",
	"local":      "4. Local mode: StartExecution → result, SendTaskSuccess → completion",
	"cost":       "5. What one tool call does and costs: a million calls by service, and the stack idle for a month",
	"lambda":     "6. Lambda: bootstrap size and cold start",
	"memory":     "7. Memory per function-tool execution waiting on its token",
	"load":       "8. Local mode under load (make soak) and DynamoDB Local's ceiling",
	"chat":       "9. Chat turn: DynamoDB requests and the turn's own time",
	"quotas":     "10. AWS's quotas emulated (local mode's --quotas): the retries' shape at twice each quota",
	"toolsearch": "11. Tool search: a right tool among the first five",
	"tasks":      "12. What one Julep task execution does and costs: a million executions by service",
}

func newReport(o options) *report {
	return &report{o: o, started: time.Now().UTC(), sections: map[string]*strings.Builder{}}
}

func (r *report) sec(part string) *strings.Builder {
	if b, ok := r.sections[part]; ok {
		return b
	}
	b := &strings.Builder{}
	r.sections[part] = b
	r.order = append(r.order, part)
	return b
}

func (r *report) printf(part, format string, args ...any) { fmt.Fprintf(r.sec(part), format, args...) }

func (r *report) headline(format string, args ...any) {
	r.headlines = append(r.headlines, fmt.Sprintf(format, args...))
}

// goalRow is one figure of the call path beside the goal it is held to.
type goalRow struct {
	figure, now, goal string
	met               bool
}

func (r *report) goal(figure, goal string, met bool, format string, args ...any) {
	r.goals = append(r.goals, goalRow{figure, fmt.Sprintf(format, args...), goal, met})
}

func (r *report) skipped(part string) {
	r.printf(part, "Not measured in this run (left out with -skip).\n")
}

func (r *report) failed(part string, err error) {
	r.printf(part, "\n**Not measured: the part failed in this run.**\n\n```\n%s\n```\n", trim(err.Error(), 3000))
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// fmtStat formats a median with its spread (min–max over the samples) and the sample count.
func fmtStat(s samples, scale float64, digits int) (median, spread string) {
	lo, hi := s.spread()
	f := "%." + fmt.Sprint(digits) + "f"
	return fmt.Sprintf(f, s.median()*scale), fmt.Sprintf(f+"–"+f+" (n=%d)", lo*scale, hi*scale, len(s))
}

func machine() string {
	var b strings.Builder
	cpu := "unknown"
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	mem := ""
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		mem = strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0])
	}
	node, _ := exec.Command("node", "--version").Output()
	kernel, _ := exec.Command("uname", "-sr").Output()
	fmt.Fprintf(&b, "- CPU: %s, %d logical cores (GOMAXPROCS %d), shared with other work on the machine\n", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(&b, "- %s\n- OS: %s/%s, %s", mem, runtime.GOOS, runtime.GOARCH, strings.TrimSpace(string(kernel)))
	fmt.Fprintf(&b, "\n- Go: %s; Node: %s\n", runtime.Version(), strings.TrimSpace(string(node)))
	if d, err := pageFault(); err == nil {
		fmt.Fprintf(&b, "- A first touch of a fresh page (its page fault) took %.1f µs at the end of this run: a heap that grows pays it once per page, "+
			"so Go's allocations and every process start slow down where it is high (compare runs with it in mind)\n", float64(d.Nanoseconds())/1e3)
	}
	return b.String()
}

// pageFault times the first touch of each page of a fresh anonymous mapping, per page.
func pageFault() (time.Duration, error) {
	const size = 64 << 20
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0, err
	}
	defer syscall.Munmap(mem)
	page := os.Getpagesize()
	start := time.Now()
	for i := 0; i < size; i += page {
		mem[i] = 1
	}
	return time.Since(start) / time.Duration(size/page), nil
}

func (r *report) write(path string) error {
	var b strings.Builder
	b.WriteString("# sinew benchmarks\n\n")
	b.WriteString("Written by `make bench` (`go run ./infra/bench/cmd/sinewbench`); do not edit by hand. ")
	fmt.Fprintf(&b, "Run started %s, took %s.", r.started.Format(time.RFC3339), time.Since(r.started).Round(time.Second))
	if r.o.smoke {
		b.WriteString(" **Smoke run (-smoke): a few iterations per part, a check that each part runs; the figures are not measurements.**")
	}
	b.WriteString("\n\n## Machine\n\n")
	b.WriteString(machine())
	b.WriteString("\n## Method\n\n")
	b.WriteString("- Every figure below was measured in this one run, on this machine, and sits beside the command that produced it.\n")
	b.WriteString("- Go benchmarks run with `-count N`: the median is of the N runs, the spread is min–max over them. " +
		"Engine rounds (parts 2–3) are timed rounds of one execution at a time after an untimed warm-up round; " +
		"the median and min–max are over the rounds. Ratios divide medians measured in the same run.\n")
	fmt.Fprintf(&b, "- Rounds per engine figure: %d of %s each; cold starts per function: %d.\n", r.o.rounds, r.o.roundDur, r.o.colds)
	b.WriteString("- The machine has 2 cores shared with other engineers' builds and tests, so spreads can be wide; " +
		"compare figures within one run, not across runs.\n")
	b.WriteString("- Part 8 profiles the local-mode process during the load (SINEW_CPUPROFILE): the top of its CPU profile " +
		"before the work on local mode's throughput and in this run sit there side by side. Local mode also times its " +
		"AWS requests on the wire and counts those in flight (its aws-wire.json) and records its DynamoDB requests for the " +
		"ceiling's replay; DynamoDB Local's JVM is warmed before the load about as long as the ceiling after it is " +
		"measured, so both run on a warm JVM.\n")
	b.WriteString("\n" + engineProfiles)
	b.WriteString("\n## Headline figures\n\n")
	if len(r.headlines) == 0 {
		b.WriteString("None (no part produced a figure).\n")
	}
	for _, h := range r.headlines {
		b.WriteString("- " + h + "\n")
	}
	if len(r.goals) > 0 {
		b.WriteString("\n## The call path against its goals (from parts 5 and 6)\n\n| figure | this run | goal | met |\n|---|---|---|---|\n")
		for _, g := range r.goals {
			met := "no"
			if g.met {
				met = "yes"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", g.figure, g.now, g.goal, met)
		}
	}
	for _, part := range []string{"dispatch", "engine", "peer", "local", "cost", "lambda", "memory", "load", "chat", "quotas", "toolsearch", "tasks"} {
		fmt.Fprintf(&b, "\n## %s\n\n", titles[part])
		if s, ok := r.sections[part]; ok {
			b.WriteString(s.String())
		} else {
			b.WriteString("Not measured in this run.\n")
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
