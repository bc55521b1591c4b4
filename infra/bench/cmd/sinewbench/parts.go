package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"sinew/infra/bench/peerbench"
)

// bt is the benchtime and count of a figure: full runs measure, smoke runs only exercise.
func bt(o options, full string, count int) (string, int) {
	if o.smoke {
		return "3x", 1
	}
	return full, count
}

func partDispatch(ctx context.Context, o options, r *report) error {
	t, n := bt(o, "", 5)
	integ := goBench{pkg: "./internal/integrations", bench: "^BenchmarkExecuteDummy$", benchtime: t, count: n}
	api := goBench{pkg: "./internal/apicall", bench: "^BenchmarkRoundTrip$", benchtime: t, count: n}
	floor := goBench{pkg: "./infra/bench/floor", bench: "^BenchmarkJSONFloor$", benchtime: t, count: n}
	t3, n3 := bt(o, "300x", 5)
	sys := goBench{pkg: "./infra/bench/dispatch", bench: "^BenchmarkSystemList$", benchtime: t3, count: n3, ddb: true}
	res := benchResults{}
	for _, g := range []goBench{integ, api, floor, sys} {
		got, err := g.run(ctx)
		if err != nil {
			return err
		}
		for k, v := range got {
			res[k] = v
		}
	}
	r.printf("dispatch", "Time per call in the executor, in-process, no provider time; the floor is the JSON decode of the "+
		"call envelope and decode+encode of the result for the same payloads (`infra/bench/floor`). ns per call, median and min–max.\n\n")
	r.printf("dispatch", "| type | sinew ns/call | spread | allocs/call | JSON floor ns | ratio to floor |\n|---|---|---|---|---|---|\n")
	row := func(typ string, s, allocs, fl samples) {
		m, sp := fmtStat(s, 1, 0)
		fm, ratio := "–", "–"
		if len(fl) > 0 {
			fm, _ = fmtStat(fl, 1, 0)
		}
		if fl.median() > 0 {
			ratio = fmt.Sprintf("%.1f×", s.median()/fl.median())
		}
		r.printf("dispatch", "| %s | %s | %s | %.0f | %s | %s |\n", typ, m, sp, allocs.median(), fm, ratio)
	}
	row("integration (dummy)", res.get("BenchmarkExecuteDummy", "ns/op"), res.get("BenchmarkExecuteDummy", "allocs/op"), res.get("BenchmarkJSONFloor/integration_dummy", "ns/op"))
	apiS, netS := res.get("BenchmarkRoundTrip/apicall", "ns/op"), res.get("BenchmarkRoundTrip/nethttp", "ns/op")
	row("api_call (whole call, loopback server)", apiS, res.get("BenchmarkRoundTrip/apicall", "allocs/op"), res.get("BenchmarkJSONFloor/api_call", "ns/op"))
	row("api_call: bare net/http round trip to the same server", netS, res.get("BenchmarkRoundTrip/nethttp", "allocs/op"), nil)
	over := apiS.median() - netS.median()
	r.printf("dispatch", "| api_call overhead over the bare round trip (difference of medians) | %.0f | – | – | %.0f | %.1f× |\n",
		over, res.get("BenchmarkJSONFloor/api_call", "ns/op").median(), over/res.get("BenchmarkJSONFloor/api_call", "ns/op").median())
	sysS, qS := res.get("BenchmarkSystemList/executor", "ns/op"), res.get("BenchmarkSystemList/store_query", "ns/op")
	sysFloor := res.get("BenchmarkJSONFloor/system_list", "ns/op")
	row("system (agent list, whole call over DynamoDB Local)", sysS, res.get("BenchmarkSystemList/executor", "allocs/op"), sysFloor)
	row("system: the store's one Query alone (DynamoDB Local)", qS, res.get("BenchmarkSystemList/store_query", "allocs/op"), nil)
	r.printf("dispatch", "| system overhead over its Query (difference of medians) | %.0f | – | %.0f | %.0f | – |\n",
		sysS.median()-qS.median(), res.get("BenchmarkSystemList/executor", "allocs/op").median()-res.get("BenchmarkSystemList/store_query", "allocs/op").median(), sysFloor.median())
	row("system, in-process: the call less the time inside its DynamoDB request, both in the same calls", res.get("BenchmarkSystemList/executor", "outside-ddb-ns/op"),
		res.get("BenchmarkSystemList/executor", "allocs/op"), sysFloor)
	r.printf("dispatch", "\n")
	r.printf("dispatch", "The system row cannot leave the network out: its executor runs over the store, so the call and its one Query "+
		"both go to DynamoDB Local on loopback, whose time (milliseconds, noisy on this shared machine) swamps the executor's own; "+
		"the difference of medians can even come out negative. The in-process row takes the network out another way: within "+
		"the same calls it subtracts the time spent inside the store's DynamoDB request (the SDK's work, the network and "+
		"DynamoDB Local's) from the call's whole time. The api_call rows likewise include a loopback HTTP round trip, and its overhead is the difference from the bare one.\n\n")
	r.printf("dispatch", "Commands:\n\n```\n%s\n%s\n%s\n%s\n```\n", integ.command(), api.command(), floor.command(), sys.command())
	r.headline("Dispatch, integration (dummy) in-process: %.1f µs per call (JSON floor %.1f µs); api_call to loopback: %.1f µs over a bare net/http round trip of %.1f µs",
		res.get("BenchmarkExecuteDummy", "ns/op").median()/1e3, res.get("BenchmarkJSONFloor/integration_dummy", "ns/op").median()/1e3, over/1e3, netS.median()/1e3)
	return nil
}

func partEngine(ctx context.Context, o options, r *report) error {
	t, n := bt(o, "", 5)
	asl := goBench{pkg: "./internal/asl", bench: "^Benchmark(PassChoice10|Map1000)$", benchtime: t, count: n}
	t2, n2 := bt(o, "200x", 3)
	wf := goBench{pkg: "./internal/workflow", bench: "^BenchmarkToolCall$", benchtime: t2, count: n2, ddb: true}
	res, err := asl.run(ctx)
	if err != nil {
		return err
	}
	pc := res.get("BenchmarkPassChoice10", "executions/s")
	m1000 := res.get("BenchmarkMap1000", "executions/s")
	r.printf("engine", "| figure | median | spread |\n|---|---|---|\n")
	m, sp := fmtStat(pc, 1, 0)
	r.printf("engine", "| Pass/Choice chain (10 states + Succeed), executions/s | %s | %s |\n", m, sp)
	m, sp = fmtStat(pc, 11, 0)
	r.printf("engine", "| same, state transitions/s (11 per execution) | %s | %s |\n", m, sp)
	m, sp = fmtStat(m1000, 1, 2)
	r.printf("engine", "| Map over 1,000 items (inline Pass), executions/s | %s | %s |\n", m, sp)
	m, sp = fmtStat(m1000, 1000, 0)
	r.printf("engine", "| same, items/s | %s | %s |\n", m, sp)
	r.headline("Engine: %.0f state transitions/s on a Pass/Choice chain; a Map over 1,000 items at %.1f executions/s", pc.median()*11, m1000.median())
	wres, werr := wf.run(ctx)
	if werr != nil {
		r.printf("engine", "| `tool_call.asl.json`, in-process Lambdas on DynamoDB Local | not measured: %s | – |\n", oneLine(werr))
	} else {
		for _, name := range []string{"echo", "ask_user"} {
			ns := wres.get("BenchmarkToolCall/"+name, "ns/op")
			per := make(samples, len(ns))
			for i, v := range ns {
				per[i] = 1e9 / v
			}
			m, sp := fmtStat(per, 1, 0)
			label := map[string]string{"echo": "integration (dummy echo)", "ask_user": "function (answered over the HTTP route)"}[name]
			r.printf("engine", "| `tool_call.asl.json` executions/s, %s, in-process Lambdas on DynamoDB Local, one at a time | %s | %s |\n", label, m, sp)
			if name == "echo" {
				r.headline("tool_call.asl.json end to end (integration, in-process Lambdas, DynamoDB Local): %.0f executions/s", per.median())
			}
		}
	}
	r.printf("engine", "\nThe tool_call figures include every DynamoDB Local request the Lambdas make (part 5 counts them), "+
		"so they measure the table more than the engine; parts 3's tool_call row is the engine alone.\n\n")
	r.printf("engine", "Commands:\n\n```\n%s\n%s\n```\n", asl.command(), wf.command())
	return nil
}

func oneLine(err error) string {
	s := strings.SplitN(err.Error(), "\n", 2)[0]
	return trim(s, 200)
}

func partPeer(ctx context.Context, o options, r *report) error {
	cases, err := peerbench.Load(o.defs, "infra/bench/peer/inputs.json")
	if err != nil {
		return err
	}
	eng := peerbench.NewEngine()
	ours, oursCPU := map[string]samples{}, map[string]samples{}
	for _, c := range cases {
		s, cpu, err := peerbench.Rounds(ctx, eng, c, o.rounds, o.roundDur)
		if err != nil {
			return err
		}
		ours[c.Name], oursCPU[c.Name] = s, cpu
	}
	real, err := peerbench.LoadReal("statemachines/tool_call.asl.json")
	if err != nil {
		return err
	}
	realRounds, _, err := peerbench.Rounds(ctx, peerbench.NewRealEngine(), real, o.rounds, o.roundDur)
	if err != nil {
		return err
	}
	argv := []string{"node", "-r", "./infra/bench/peer/polyfill.cjs", "infra/bench/peer/run.cjs", o.defs, strconv.Itoa(o.rounds), fmt.Sprint(o.roundDur.Seconds())}
	out, err := runCmd(ctx, argv, nil)
	if err != nil {
		return err
	}
	var peer struct {
		Engine  string               `json:"engine"`
		Node    string               `json:"node"`
		Results map[string][]float64 `json:"results"`
		CPU     map[string][]float64 `json:"cpu"`
	}
	if err := json.Unmarshal(out, &peer); err != nil {
		return fmt.Errorf("peer output: %w: %s", err, trim(string(out), 300))
	}
	r.printf("peer", "One execution at a time on each side, the same definitions (`%s`) and inputs (`infra/bench/peer/inputs.json`), "+
		"local stand-ins for the Lambda functions on both sides (Prepare builds the envelope, the tools echo): "+
		"Go functions called in-process by sinew's engine (`infra/bench/peerbench`), JS functions as the peer's "+
		"`taskResourceLocalHandlers` (`infra/bench/peer/run.cjs`, %s on Node %s with `infra/bench/peer/polyfill.cjs`).\n\n", o.defs, peer.Engine, peer.Node)
	r.printf("peer", "| definition | sinew executions/s | spread | peer executions/s | spread | sinew ÷ peer |\n|---|---|---|---|---|---|\n")
	for _, name := range peerbench.Names {
		s, p := ours[name], samples(peer.Results[name])
		digits := 0
		if name == "map1000" {
			digits = 2
		}
		sm, ssp := fmtStat(s, 1, digits)
		pm, psp := fmtStat(p, 1, digits)
		ratio := s.median() / p.median()
		r.printf("peer", "| %s | %s | %s | %s | %s | **%.2f×** |\n", name, sm, ssp, pm, psp, ratio)
		r.headline("Peer ratio, %s: sinew %s executions/s vs aws-local-stepfunctions %s: %.2f×", name, sm, pm, ratio)
	}
	rm, rsp := fmtStat(samples(realRounds), 1, 0)
	r.printf("peer", "| `statemachines/tool_call.asl.json` (the real definition, integration branch; sinew alone) | %s | %s | – | – | – |\n", rm, rsp)
	r.headline("Engine on the real statemachines/tool_call.asl.json (integration branch, in-process stand-ins): %s executions/s", rm)
	r.printf("peer", "\nThe real `statemachines/tool_call.asl.json` runs as it stands (a bare start of an integration call: Dispatch, "+
		"whose stand-in prepare sends it to Prepare, Prepared, then Dispatch again, whose stand-in executor answers its task token, with their Retry, Catch and data flow) on stand-ins of the real functions' shapes "+
		"(`peerbench.RealFunctions`); the peer cannot run it as written (its function path waits on a task token), hence the "+
		"frozen benchmark form above.\n")
	r.printf("peer", "\npass_chain in state transitions/s: sinew %.0f, peer %.0f (10 per execution).\n\n", ours["pass_chain"].median()*10, samples(peer.Results["pass_chain"]).median()*10)
	peerCPU(r, oursCPU, peer.CPU)
	peerVerdict(r, ours, peer.Results)
	r.printf("peer", "Commands (the bench command runs both in the same process run; `-only peer` runs this part alone):\n\n```\ngo run ./infra/bench/cmd/sinewbench -only peer -out /tmp/peer.md\n%s\n```\n", shellJoin(argv))
	return nil
}

// peerCPU compares executions per CPU-second of each process, which a shared machine's load
// moves less than executions per second of wall time.
func peerCPU(r *report, ours map[string]samples, peer map[string][]float64) {
	r.printf("peer", "Executions per CPU-second of each process (user+system, GC threads included; steadier than wall time on a shared machine), medians:")
	for i, name := range peerbench.Names {
		s, p := ours[name].median(), samples(peer[name]).median()
		sep := ";"
		if i == len(peerbench.Names)-1 {
			sep = "."
		}
		r.printf("peer", " %s sinew %.4g vs peer %.4g, %.2f×%s", name, s, p, s/p, sep)
	}
	r.printf("peer", "\n\n")
}

// peerVerdict says whether sinew is slower than the peer anywhere in this run, and if so why.
func peerVerdict(r *report, ours map[string]samples, peer map[string][]float64) {
	var slower []string
	for _, name := range peerbench.Names {
		if ours[name].median() < samples(peer[name]).median() {
			slower = append(slower, name)
		}
	}
	if len(slower) == 0 {
		r.printf("peer", "sinew is not slower than the peer on any of the three definitions in this run.\n\n")
		return
	}
	r.printf("peer", "sinew is slower than the peer here on: %s. What sinew does that the peer does not: it keeps AWS's full "+
		"execution history (every StateEntered/TaskScheduled/TaskSucceeded/StateExited event, rendered to JSON when read), builds "+
		"AWS's whole lambda:invoke result (`SdkHttpMetadata` with its headers) for every task, checks every state's output "+
		"against the 256 KiB payload limit, and runs each execution with its cancellation and task-token bookkeeping. "+
		"The machine is shared: compare within one run.\n\n", strings.Join(slower, ", "))
}

func partLocal(ctx context.Context, o options, r *report) error {
	t, n := bt(o, "200x", 1)
	g := goBench{pkg: "./infra/local", bench: "^Benchmark(StartToResult|TaskSuccessToCompletion|SelfCall|ToolCallToResult)$", benchtime: t, count: n, ddb: true}
	res, err := g.run(ctx)
	if err != nil {
		return err
	}
	r.printf("local", "Through the real local-mode process and the Go SDK (`infra/local` benchmarks): a Standard machine of a Pass and "+
		"a Lambda task, completion seen by polling DescribeExecution every millisecond (included in the figures).\n\n")
	r.printf("local", "| figure | p50 ms | p99 ms |\n|---|---|---|\n")
	for _, c := range []int{1, 10, 100} {
		name := fmt.Sprintf("BenchmarkStartToResult/concurrent=%d", c)
		p50, p99 := res.get(name, "p50-ms"), res.get(name, "p99-ms")
		r.printf("local", "| StartExecution → result, %d concurrent | %.2f | %.2f |\n", c, p50.median(), p99.median())
		if c == 1 {
			r.headline("Local mode StartExecution → result: p50 %.2f ms, p99 %.2f ms (1 in flight)", p50.median(), p99.median())
		}
	}
	p50, p99 := res.get("BenchmarkTaskSuccessToCompletion", "p50-ms"), res.get("BenchmarkTaskSuccessToCompletion", "p99-ms")
	r.printf("local", "| SendTaskSuccess → completion | %.2f | %.2f |\n", p50.median(), p99.median())
	if err := toolCallLatency(r, res); err != nil {
		return err
	}
	r.printf("local", "Command:\n\n```\n%s\n```\n", g.command())
	return nil
}

// toolCallLatency is a server-side call (dummy echo) from POST /tool-calls to the caller holding
// its result, through local mode's HTTP API: answered in the request (tool_call_express) beside
// 202 then GET /executions/{id} until it has ended (tool_call), measured in the same run.
func toolCallLatency(r *report, res benchResults) error {
	sync50, sync99 := res.get("BenchmarkToolCallToResult/sync", "p50-ms"), res.get("BenchmarkToolCallToResult/sync", "p99-ms")
	poll50, poll99 := res.get("BenchmarkToolCallToResult/poll", "p50-ms"), res.get("BenchmarkToolCallToResult/poll", "p99-ms")
	if len(sync50) == 0 || len(poll50) == 0 {
		// Rows of zeros would pass for figures: a benchmark left out of the part's -bench pattern
		// fails the run instead.
		return fmt.Errorf("BenchmarkToolCallToResult gave no figures (sync %d, poll %d runs): is it in the part's -bench pattern?", len(sync50), len(poll50))
	}
	r.printf("local", "| POST /tool-calls → result, server-side, in one request (tool_call_express) | %.2f | %.2f |\n", sync50.median(), sync99.median())
	r.printf("local", "| POST /tool-calls → 202, then GET /executions/{id} until it has ended (tool_call; polled at 5 ms doubling to 200 ms) | %.2f | %.2f |\n\n",
		poll50.median(), poll99.median())
	r.headline("POST /tool-calls to result, server-side: p50 %.0f ms, p99 %.0f ms in one request; 202 then poll: p50 %.0f ms",
		sync50.median(), sync99.median(), poll50.median())
	return nil
}

func partMemory(ctx context.Context, o options, r *report) error {
	t, n := bt(o, "10000x", 3)
	if o.smoke {
		t = "100x"
	}
	g := goBench{pkg: "./internal/asl", bench: "^BenchmarkWaitingExecutions$", benchtime: t, count: n}
	res, err := g.run(ctx)
	if err != nil {
		return err
	}
	name := "BenchmarkWaitingExecutions"
	r.printf("memory", "Executions parked on a `.waitForTaskToken` task (%s of them), heap and goroutine stacks after a GC, divided by their number.\n\n", strings.TrimSuffix(t, "x"))
	r.printf("memory", "| figure | median bytes | spread |\n|---|---|---|\n")
	for _, u := range []string{"bytes/waiting-execution", "heap-bytes/waiting-execution", "stack-bytes/waiting-execution"} {
		m, sp := fmtStat(res.get(name, u), 1, 0)
		r.printf("memory", "| %s | %s | %s |\n", u, m, sp)
	}
	tot := res.get(name, "bytes/waiting-execution").median()
	r.headline("Memory per waiting function-tool execution: %.1f KiB (%.0f MiB for 10,000)", tot/1024, tot*10000/(1<<20))
	r.printf("memory", "\nCommand:\n\n```\n%s\n```\n", g.command())
	return nil
}

// partQuotas reports how calls fare against AWS's quotas as local mode emulates them: twice each
// quota at once (infra/local BenchmarkQuotaRetries, AWS's quotas at a hundredth so tens of calls
// reach them), each call's attempts and the time from its first attempt to its success.
func partQuotas(ctx context.Context, o options, r *report) error {
	t, n := bt(o, "3x", 1)
	if o.smoke {
		t = "1x"
	}
	g := goBench{pkg: "./infra/local", bench: "^BenchmarkQuotaRetries$", benchtime: t, count: n, ddb: true}
	res, err := g.run(ctx)
	if err != nil {
		return err
	}
	const name = "BenchmarkQuotaRetries"
	r.printf("quotas", "Local mode with `--quotas=aws*0.01` (StartExecution bucket 13, refill 3/s; Lambda concurrency 10; "+
		"a partition's 10 WCU), each round sending twice each quota at once: StartExecutions by an SDK retrying ThrottlingException, "+
		"PutItems to one partition by an SDK retrying ProvisionedThroughputExceededException, and inline Maps (at most 40 at a time, AWS's bound) of Lambda tasks and of "+
		"dynamodb:putItem tasks, whose Retry (1 s, ×1.5, FULL jitter) names Lambda.TooManyRequestsException and "+
		"DynamoDB.ProvisionedThroughputExceededException. Every call came through once (the test `TestQuotasThrottleWithoutLoss` "+
		"asserts none lost, none doubled); the figures are its retries' shape over 3 rounds.\n\n")
	r.printf("quotas", "| calls | attempts per call (mean) | most attempts | first attempt → success p50 ms | p99 ms |\n|---|---|---|---|---|\n")
	for _, k := range []struct{ key, label string }{
		{"start", "StartExecution (SDK, ThrottlingException)"},
		{"put", "PutItem, one partition (SDK, ProvisionedThroughputExceededException)"},
		{"lambda", "Lambda task (Retry, Lambda.TooManyRequestsException)"},
		{"puttask", "dynamodb:putItem task, one partition (Retry)"},
	} {
		r.printf("quotas", "| %s | %.2f | %.0f | %.0f | %.0f |\n", k.label, res.get(name, k.key+"-attempts/call").median(),
			res.get(name, k.key+"-max-attempts").median(), res.get(name, k.key+"-p50-ms").median(), res.get(name, k.key+"-p99-ms").median())
	}
	r.printf("quotas", "\nCommand:\n\n```\n%s\n```\n", g.command())
	return nil
}
