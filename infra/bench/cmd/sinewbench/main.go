// Command sinewbench measures sinew and writes BENCHMARKS.md.
//
// It runs the Go benchmarks of the packages that own each figure, the peer engine
// (aws-local-stepfunctions, bench/peer) and sinew's engine on the same definitions in one run, the
// Lambda bootstraps' sizes and cold starts under the Runtime Interface Emulator, and turns what a
// call does (counted and measured) and what the stack's template says into the cost of a million
// calls and of an idle month.
//
//	go run ./infra/bench/cmd/sinewbench            # full run, writes BENCHMARKS.md (make bench)
//	go run ./infra/bench/cmd/sinewbench -smoke     # each part for a few iterations (make bench-smoke)
//	go run ./infra/bench/cmd/sinewbench -only peer -out /tmp/peer.md   # one part alone
//	go run ./infra/bench/cmd/sinewbench -only lambda -out /tmp/lambda.md  # bootstrap sizes and cold starts alone
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"
)

type options struct {
	out      string
	defs     string
	smoke    bool
	rounds   int
	roundDur time.Duration
	colds    int
	template string // a synthesized template of infra/cdk for the cost part; empty: synthesize one
	skip     map[string]bool
	only     map[string]bool // when set, the parts to run (the others are left out)
}

func main() {
	var o options
	var skip, only string
	flag.StringVar(&o.out, "out", "infra/bench/BENCHMARKS.md", "where to write the report")
	flag.StringVar(&o.defs, "defs", "infra/bench/peer/defs", "the peer benchmark definitions")
	flag.BoolVar(&o.smoke, "smoke", false, "run each part for a few iterations (a check, not a measurement)")
	flag.IntVar(&o.rounds, "rounds", 5, "timed rounds per figure (after a warm-up)")
	flag.DurationVar(&o.roundDur, "round", time.Second, "length of one engine round")
	flag.IntVar(&o.colds, "cold-starts", 20, "cold starts per function")
	flag.StringVar(&o.template, "template", "", "infra/cdk's synthesized template for the cost part (default: synthesize it)")
	flag.StringVar(&skip, "skip", "", "comma-separated parts to leave out (dispatch,engine,peer,local,cost,lambda,memory,load,chat,quotas,toolsearch,tasks)")
	flag.StringVar(&only, "only", "", "comma-separated parts to run, the others left out (e.g. -only peer)")
	flag.Parse()
	o.skip = map[string]bool{}
	for _, s := range splitComma(skip) {
		o.skip[s] = true
	}
	if only != "" {
		o.only = map[string]bool{}
		for _, s := range splitComma(only) {
			o.only[s] = true
		}
	}
	if o.smoke {
		o.rounds, o.roundDur, o.colds = 1, 100*time.Millisecond, 2
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		slog.Error("sinewbench", "error", err.Error())
		os.Exit(1)
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// run measures every part in order and writes the report; a part that fails is reported as
// not measured with its error, and the run goes on (the report says which).
func run(ctx context.Context, o options) error {
	r := newReport(o)
	parts := []struct {
		name string
		fn   func(context.Context, options, *report) error
	}{
		{"dispatch", partDispatch},
		{"engine", partEngine},
		{"peer", partPeer},
		{"local", partLocal},
		{"cost", partCost},
		{"lambda", partLambda},
		{"memory", partMemory},
		{"load", partLoad},
		{"chat", partChat},
		{"quotas", partQuotas},
		{"toolsearch", partToolSearch},
		{"tasks", partTasks},
	}
	failed := 0
	for _, p := range parts {
		if o.skip[p.name] || (o.only != nil && !o.only[p.name]) {
			r.skipped(p.name)
			continue
		}
		t0 := time.Now()
		slog.Info("part", "name", p.name)
		if err := p.fn(ctx, o, r); err != nil {
			failed++
			slog.Error("part failed", "name", p.name, "error", err.Error())
			r.failed(p.name, err)
		}
		slog.Info("part done", "name", p.name, "took", time.Since(t0).Round(time.Millisecond))
	}
	if err := r.write(o.out); err != nil {
		return err
	}
	slog.Info("wrote", "file", o.out)
	if failed > 0 {
		return fmt.Errorf("%d part(s) failed; see %s", failed, o.out)
	}
	return nil
}
