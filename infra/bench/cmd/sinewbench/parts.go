package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
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
	r.printf("peer", "\nThe real `statemachines/tool_call.asl.json` runs as it stands (a bare start of an integration call: Dispatch "+
		"through Prepare, which hands the call to the stand-in executor that answers its task token, with their Retry, Catch and data flow) on stand-ins of the real functions' shapes "+
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
	g := goBench{pkg: "./infra/local", bench: ".", benchtime: t, count: n, ddb: true}
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
	r.printf("local", "| SendTaskSuccess → completion | %.2f | %.2f |\n\n", p50.median(), p99.median())
	r.printf("local", "Command:\n\n```\n%s\n```\n", g.command())
	return nil
}

// AWS list prices, us-east-1 (see the Sources list in the cost section).
const (
	sfnPerTransition = 0.025 / 1000 // Step Functions Standard
	lambdaPerRequest = 0.20 / 1e6   // Lambda requests
	lambdaPerGBs     = 0.0000133334 // Lambda duration, arm64
	ddbPerRead       = 0.125 / 1e6  // DynamoDB on-demand, per read request unit
	ddbPerWrite      = 0.625 / 1e6  // DynamoDB on-demand, per write request unit
	apigwPerRequest  = 1.00 / 1e6   // API Gateway HTTP API, first 300 million a month
	lambdaMemGB      = 128.0 / 1024 // assumed function memory
	lambdaBilledSec  = 0.010        // assumed billed duration per invocation
)

var budgetLine = regexp.MustCompile(`(\S+): (\d+) state transitions, (\d+) Lambda invocations inside the state machine, (\d+) outside it, (\d+) HTTP requests, DynamoDB map\[(.*?)\] \((\d+) requests, request units map\[(.*?)\]\)`)

// readOps are the DynamoDB operations that consume read request units; every other one consumes
// write request units (a write's ReturnValues and conditions are billed as the write).
var readOps = map[string]bool{"GetItem": true, "BatchGetItem": true, "Query": true, "Scan": true, "TransactGetItems": true}

// callCost is the cost of one million calls from one line of TestRequestBudget.
type callCost struct {
	transitions, lambdas, https int
	lambdasInside               int
	sfn, lam, ddb, apigw        float64
}

func costOf(m []string) callCost {
	var c callCost
	c.transitions, _ = strconv.Atoi(m[2])
	in, _ := strconv.Atoi(m[3])
	out, _ := strconv.Atoi(m[4])
	c.https, _ = strconv.Atoi(m[5])
	c.lambdas, c.lambdasInside = in+out, in
	reads, writes := 0.0, 0.0
	// Request units by operation as DynamoDB reported them (internal/awscount): table and index
	// together, transactions already doubled. An operation consumes one kind of unit only, so the
	// operation says which rate applies.
	for _, kv := range strings.Fields(m[8]) {
		k, v, _ := strings.Cut(kv, ":")
		n, _ := strconv.ParseFloat(v, 64)
		if readOps[k] {
			reads += n
		} else {
			writes += n
		}
	}
	c.sfn = float64(c.transitions) * sfnPerTransition * 1e6
	c.lam = float64(c.lambdas) * (lambdaPerRequest + lambdaMemGB*lambdaBilledSec*lambdaPerGBs) * 1e6
	c.ddb = (reads*ddbPerRead + writes*ddbPerWrite) * 1e6
	c.apigw = float64(c.https) * apigwPerRequest * 1e6
	return c
}

func (c callCost) total() float64 { return c.sfn + c.lam + c.ddb + c.apigw }

func partCost(ctx context.Context, o options, r *report) error {
	argv := wrapDDB(true, []string{"go", "test", "-run", "^TestRequestBudget$", "-v", "-count=1", "./internal/workflow"})
	out, err := runCmd(ctx, argv, nil)
	if err != nil {
		return err
	}
	types := map[string]string{"echo": "integration (dummy echo)", "get_item": "api_call (loopback)", "ask_user": "function (task token)", "list_agents": "system (agent list)"}
	r.printf("cost", "Counted by `internal/awscount` (an SDK middleware), the engine's history and the Lambda invocations in `TestRequestBudget`; "+
		"one call of each type end to end, from its start to its recorded outcome (the status-change event included), through `POST /tool-calls` "+
		"(a function call answered through `POST /executions/{id}/calls/{call_id}/result`) and through a bare `StartExecution` naming the tool. "+
		"A system tool's own operation is not counted. Cost of one million calls at AWS list prices (us-east-1).\n\n")
	r.printf("cost", "| type | started by | state transitions | Lambda invocations | HTTP requests | DynamoDB requests | of which | request units | Step Functions $ | Lambda $ | DynamoDB $ | API Gateway $ | total $ per 1M calls |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	seen := 0
	var g callGoals
	defer g.report(r)
	for _, m := range budgetLine.FindAllStringSubmatch(string(out), -1) {
		seen++
		c := costOf(m)
		base, bare := strings.CutSuffix(m[1], "/start")
		name, entry := types[base], "POST /tool-calls"
		if name == "" {
			name = base
		}
		if bare {
			entry = "StartExecution"
		}
		r.printf("cost", "| %s | %s | %d | %d | %d | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | **%.2f** |\n",
			name, entry, c.transitions, c.lambdas, c.https, m[7], m[6], m[8], c.sfn, c.lam, c.ddb, c.apigw, c.total())
		if !bare {
			r.headline("Cost per 1M %s calls: $%.2f (%d transitions, %s DynamoDB requests)", name, c.total(), c.transitions, m[7])
		}
		g.add(base, bare, c, m[7])
	}
	if seen == 0 {
		return fmt.Errorf("TestRequestBudget printed no counts (run with -v): %s", trim(string(out), 500))
	}
	r.printf("cost", "\nThe transition counts are every state a successful call enters (the test counts Task and Choice entries; "+
		"`statemachines/tool_call.asl.json` has no other states on these paths). Through `POST /tool-calls` a call enters Dispatch alone (one Task that waits for its token, its function picked by the call's type); "+
		"a bare start enters Dispatch too, whose Prepare hands a server-side call to its executor (a function tool goes on to Prepare and Function: 3). Step Functions is still most of the cost: each transition is $25 per million calls.\n\n")
	r.printf("cost", "Assumptions: DynamoDB is billed by request units as DynamoDB reports them: the tests' counted client asks every request for "+
		"its consumed capacity (`ReturnConsumedCapacity: INDEXES`) and `internal/awscount` adds up what DynamoDB Local returns, the table and "+
		"its index `gsi1` together: an item rounded up to 1 KB per write unit and 4 KB per read unit (a write costs the larger of the item "+
		"before and after it), a transaction's items twice, and one more write unit for every write that puts, changes or deletes a `gsi1` "+
		"entry (two when the entry's key changes: executions and pending function calls are in the index, with the attributes its lists read); "+
		"GetItem, BatchGetItem, Query, Scan and TransactGetItems are priced as read units, the other operations as write units, and an "+
		"eventually consistent read's half unit is rounded up to a whole one per operation. `internal/awscount`'s `TestUnits` holds DynamoDB "+
		"Local's figures to AWS's documented rules; where they depart the counter corrects them (a BatchGetItem key that finds no item is "+
		"billed the minimum read; a transaction of several items, where DynamoDB Local can leave an item out, at least the two writes of "+
		"each item's size that its request shows) or estimates them from the request (a failed conditional write or a cancelled transaction "+
		"returns no figures: one unit per item, two per transactional item). A transaction's index units are taken as DynamoDB Local "+
		"reports them: it counts them twice like the items, which AWS's documentation states for the items only, so a transaction that "+
		"writes the index may be overstated by one unit per index write (the function type: its two transactions' 4 items take at least "+
		"8 of their 16 units on the table, so by at most 4 units, $2.50 per million calls). "+
		"Lambda: every invocation counted (the executor or Prepare "+
		"inside the state machine; the api function per HTTP request and settle per status-change event outside it) at %.0f MB arm64 and an "+
		"assumed %.0f ms billed each (in AWS the billed time is mostly the DynamoDB round trips); API Gateway: one HTTP API request per HTTP "+
		"request; EventBridge's delivery of Step Functions' own events is free; free tiers ignored.\n\n", lambdaMemGB*1024, lambdaBilledSec*1000)
	r.printf("cost", "Sources (list prices, us-east-1):\n\n"+
		"- Step Functions Standard $0.025 per 1,000 state transitions: <https://aws.amazon.com/step-functions/pricing/>\n"+
		"- Lambda $0.20 per million requests: <https://aws.amazon.com/lambda/pricing/>; arm64 duration $0.0000133334 per GB-s "+
		"(the same page; as transcribed in artillery's `lib/platform/aws-lambda/prices.js`, arm64 1333340e-11)\n"+
		"- DynamoDB on-demand $0.625 per million write request units, $0.125 per million read request units: "+
		"<https://aws.amazon.com/dynamodb/pricing/on-demand/> (the page's unit definitions were read from the docs corpus; "+
		"the two rates are the us-east-1 Standard-table figures since the November 2024 on-demand price cut; the stored copy of the "+
		"page here lacks its rate table, so they were checked against several independent cost notes in public repositories "+
		"that quote the page, all agreeing; confirm on the page before relying on them)\n"+
		"- API Gateway HTTP APIs $1.00 per million requests (the first 300 million a month): <https://aws.amazon.com/api-gateway/pricing/>\n\n")
	r.printf("cost", "Command:\n\n```\n%s\n```\n", shellJoin(argv))
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

// callGoals gathers the worst of each call-path figure over the types, for the goals table.
type callGoals struct {
	seen                                  bool
	postTransitions, postLambdas, postDDB int // server-side calls through POST /tool-calls
	fnTransitions, fnDDB, bareTransitions int
	maxCost                               float64
}

func (g *callGoals) add(base string, bare bool, c callCost, requests string) {
	g.seen = true
	n, _ := strconv.Atoi(requests)
	switch {
	case bare:
		g.bareTransitions = max(g.bareTransitions, c.transitions)
	case base == "ask_user":
		g.fnTransitions, g.fnDDB = max(g.fnTransitions, c.transitions), max(g.fnDDB, n)
		g.maxCost = max(g.maxCost, c.total())
	default:
		g.postTransitions, g.postLambdas, g.postDDB = max(g.postTransitions, c.transitions), max(g.postLambdas, c.lambdasInside), max(g.postDDB, n)
		g.maxCost = max(g.maxCost, c.total())
	}
}

func (g *callGoals) report(r *report) {
	if !g.seen {
		return
	}
	r.goal("state transitions, server-side call through POST /tool-calls", "≤ 2", g.postTransitions <= 2, "%d", g.postTransitions)
	r.goal("Lambda invocations inside the state machine, server-side call", "1", g.postLambdas == 1, "%d", g.postLambdas)
	r.goal("DynamoDB requests, server-side call through POST /tool-calls", "≤ 4", g.postDDB <= 4, "%d", g.postDDB)
	r.goal("DynamoDB requests, function call with its answer over the HTTP route", "≤ 5", g.fnDDB <= 5, "%d", g.fnDDB)
	r.goal("state transitions, function call", "≤ 2", g.fnTransitions <= 2, "%d", g.fnTransitions)
	r.goal("state transitions, a bare start naming only the tool", "≤ 3", g.bareTransitions <= 3, "%d", g.bareTransitions)
	r.goal("cost per million calls through POST /tool-calls, the dearest type", "≤ $55", g.maxCost <= 55, "$%.2f", g.maxCost)
}
