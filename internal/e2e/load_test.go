package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/workflow"
)

// loadSize is the load's size: N executions, M of them function calls. SINEW_SOAK=1 runs the
// full size, 1,000 and 200 (make soak); SINEW_LOAD_N and SINEW_LOAD_M choose others.
func loadSize(t testing.TB) (n, m int) {
	n, m = 100, 20
	if os.Getenv("SINEW_SOAK") == "1" {
		n, m = 1000, 200
	}
	for _, v := range []struct {
		env string
		p   *int
	}{{"SINEW_LOAD_N", &n}, {"SINEW_LOAD_M", &m}} {
		if s := os.Getenv(v.env); s != "" {
			x, err := strconv.Atoi(s)
			if err != nil || x < 0 {
				t.Fatalf("%s=%q is not a count", v.env, s)
			}
			*v.p = x
		}
	}
	if m > n || n < 4 {
		t.Fatalf("load of %d executions with %d function calls: want at least 4 executions and M <= N", n, m)
	}
	return n, m
}

// hitServer is the api_call target: it counts requests per call id (the path) and answers the
// first request of a call whose id it was told is flaky with 503.
type hitServer struct {
	*httptest.Server
	mu    sync.Mutex
	hits  map[string]int
	flaky map[string]bool
}

func newHitServer(t testing.TB) *hitServer {
	h := &hitServer{hits: map[string]int{}, flaky: map[string]bool{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/hit/")
		h.mu.Lock()
		h.hits[id]++
		n, flaky := h.hits[id], h.flaky[id]
		h.mu.Unlock()
		if flaky && n == 1 {
			http.Error(w, "busy, try again", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"call_id": id, "n": n})
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hitServer) count(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[id]
}

func (h *hitServer) addr() string { return strings.TrimPrefix(h.URL, "http://") }

// loadTools are the agent's tools, one of each type.
func loadTools(target string) []map[string]any {
	return []map[string]any{
		{"name": "echo", "type": "integration", "integration": map[string]any{"provider": "dummy"}},
		{"name": "hit", "type": "api_call", "api_call": map[string]any{"method": "GET", "url": "http://" + target + "/hit/{id}"}},
		{"name": "get_agent", "type": "system", "system": map[string]any{"resource": "agent", "operation": "get"}},
		{"name": "ask", "type": "function", "function": map[string]any{"parameters": map[string]any{"type": "object"}, "timeout_seconds": 3600}},
	}
}

// one execution of the load.
type loadExec struct {
	i      int
	kind   string // integration, api_call, system, function
	name   string // the execution's name
	callID string
	viaAPI bool // started by POST /tool-calls (else StartExecution)
	flaky  bool // an api_call whose first request answers 503
	t0     time.Time

	// function calls
	answerBy  string // "sdk" or "http": the client's channel
	answered  time.Time
	accepted  []map[string]any // the answers Step Functions took (must be exactly one)
	refused   []string         // how the others were refused
	secondErr string           // the cross-channel second answer after the end

	fails map[string]int // its history's Task failures by "<state> <error>"

	recordWait time.Duration // how long its record took to show its end after it was first read
}

// TestLoad: N concurrent tool_call executions of mixed types (integration dummy, api_call to a
// loopback server, system, function) through local mode and DynamoDB Local, M of them function
// calls answered by concurrent clients, half with SendTaskSuccess (aws-sdk-go-v2) and half with
// POST /executions/{id}/calls/{call_id}/result, each answered twice at once. Nothing is lost: every
// execution SUCCEEDS with its own call's result; every function call takes exactly one answer, and
// a later answer is refused (409 / TaskTimedOut, as AWS answers a used token); every api_call reaches its server once (twice
// for those answered 503 first, retried as the history shows).
func TestLoad(t *testing.T) {
	n, m := loadSize(t)
	srv := newHitServer(t)
	dir := t.TempDir()
	recording := filepath.Join(dir, "dynamodb-requests.jsonl")
	p := startLocal(t, dir, []string{"SINEW_APICALL_ALLOW=" + srv.addr(), "SINEW_LOCAL_DYNAMODB_RECORD=" + recording})
	ctx := context.Background()
	dev := "dev-load"
	a := p.apiFor(t, dev)
	c := p.sfnClient()
	// DynamoDB Local's JVM starts cold, and for its first seconds of traffic it compiles and serves
	// a fifth of what it serves warm; the ceiling below is measured after the load, on a warm JVM.
	// So the load gets a warm JVM too: a replay of a load's mix of operations (the synthetic one: the
	// load's own requests are not recorded yet) first warms it for about as long as the ceiling takes.
	span := 5 * time.Second
	if n < 1000 {
		span = time.Second // make test's smaller run: a check that it works
	}
	measureDDBCeiling(t, p.Endpoints["dynamodb"], warmMix, n, 64, span)
	meter := &cpuMeter{}
	meter.add("DynamoDB Local", listenerPID(p.Endpoints["dynamodb"]))
	meter.add("local mode", p.Cmd.Process.Pid)
	meter.add("this test", os.Getpid())
	agent := a.must(t, "POST", "/agents", map[string]any{"name": "load-agent"}, 201)["id"].(string)
	for _, tl := range loadTools(srv.addr()) {
		a.must(t, "POST", "/agents/"+agent+"/tools", tl, 201)
	}

	// The mix: every (n/m)-th execution a function call, the rest round-robin.
	execs := make([]*loadExec, n)
	byName := map[string]*loadExec{}
	others := []string{"integration", "api_call", "system"}
	fn, other, apis := 0, 0, 0
	for i := range execs {
		x := &loadExec{i: i, viaAPI: i%2 == 0}
		if m > 0 && fn < m && i%(n/m) == 0 {
			x.kind = "function"
			x.answerBy = []string{"sdk", "http"}[fn%2]
			fn++
		} else {
			x.kind = others[other%3]
			other++
		}
		if x.viaAPI {
			x.name = workflow.IdempotentName(dev, "POST /tool-calls", fmt.Sprintf("load-%d", i))
		} else {
			x.name = fmt.Sprintf("load-%d", i)
		}
		x.callID = workflow.CallIDFor(dev, x.name)
		if x.kind == "api_call" {
			apis++
		}
		if x.kind == "api_call" && apis%3 == 1 { // a third of them answered 503 first
			x.flaky = true
			srv.mu.Lock()
			srv.flaky[x.callID] = true
			srv.mu.Unlock()
		}
		execs[i], byName[x.name] = x, x
	}
	if fn != m {
		t.Fatalf("the mix has %d function calls, want %d", fn, m)
	}

	// The function clients: one poller lists the pending calls, as a client would, and hands
	// each to a client of its own.
	pollCtx, stopPolling := context.WithCancel(ctx)
	defer stopPolling()
	var clients sync.WaitGroup
	var clientMu sync.Mutex
	pollerDone := make(chan struct{})
	go func() {
		defer close(pollerDone)
		seen := map[string]bool{}
		for pollCtx.Err() == nil {
			cursor := ""
			for {
				path := "/calls?status=pending&limit=100"
				if cursor != "" {
					path += "&cursor=" + cursor
				}
				code, page, err := a.do(pollCtx, "GET", path, nil)
				if err != nil || code != 200 {
					if pollCtx.Err() == nil {
						t.Errorf("GET %s = %d %v %v", path, code, page, err)
					}
					break
				}
				items, _ := page["items"].([]any)
				for _, it := range items {
					pc, _ := it.(map[string]any)
					x := byName[fmt.Sprint(pc["execution_id"])]
					if x == nil || seen[x.name] {
						continue
					}
					seen[x.name] = true
					tok, _ := pc["task_token"].(string)
					clients.Add(1)
					go func() {
						defer clients.Done()
						answerTwice(ctx, t, a, c, x, tok, &clientMu)
					}()
				}
				next, _ := page["next_cursor"].(string)
				if next == "" {
					break
				}
				cursor = next
			}
			select {
			case <-pollCtx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	// Start every execution, 64 requests in flight.
	began := time.Now()
	cpuBegan := meter.snap()
	machine := sampleMachine(t, timelineStep)
	sem := make(chan struct{}, 64)
	var starts sync.WaitGroup
	for _, x := range execs {
		sem <- struct{}{}
		starts.Go(func() {
			defer func() { <-sem }()
			args := map[string]any{}
			tool := ""
			switch x.kind {
			case "integration":
				tool, args = "echo", map[string]any{"n": x.i}
			case "api_call":
				tool, args = "hit", map[string]any{"path": map[string]any{"id": x.callID}}
			case "system":
				tool, args = "get_agent", map[string]any{"agent_id": agent}
			case "function":
				tool, args = "ask", map[string]any{"n": x.i}
			}
			x.t0 = time.Now()
			if x.viaAPI {
				code, body, err := a.do(ctx, "POST", "/tool-calls", map[string]any{"agent_id": agent, "task_id": nil, "session_id": nil, "tool": tool, "arguments": args},
					"Idempotency-Key", fmt.Sprintf("load-%d", x.i), "Prefer", "respond-async")
				if err != nil || code != 202 || body["execution_id"] != x.name {
					t.Errorf("POST /tool-calls %d = %d %v %v, want 202 with execution %s", x.i, code, body, err, x.name)
				}
				return
			}
			_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(toolCallARN), Name: aws.String(x.name),
				Input: aws.String(toolCallInput(dev, agent, tool, args))})
			if err != nil {
				t.Errorf("StartExecution %s: %v", x.name, err)
			}
		})
	}
	starts.Wait()
	startedIn := time.Since(began)
	if t.Failed() {
		t.FailNow()
	}

	// Wait until every execution has ended: one ListExecutions poll, not one poller each. The
	// bound only guards against a hang.
	ended := map[string]types.ExecutionListItem{}
	deadline := time.Now().Add(5*time.Minute + time.Duration(n)*500*time.Millisecond)
	for len(ended) < n {
		ended = map[string]types.ExecutionListItem{}
		pg := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: aws.String(toolCallARN), MaxResults: 1000})
		for pg.HasMorePages() {
			page, err := pg.NextPage(ctx)
			if err != nil {
				t.Fatalf("ListExecutions: %v", err)
			}
			for _, e := range page.Executions {
				if byName[aws.ToString(e.Name)] != nil && e.Status != types.ExecutionStatusRunning {
					ended[aws.ToString(e.Name)] = e
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d executions ended before the deadline", len(ended), n)
		}
		if len(ended) < n {
			time.Sleep(250 * time.Millisecond)
		}
	}
	cpuEnded := meter.snap()
	var samples []machineSample
	if machine != nil {
		samples = machine.end()
	}
	stopPolling()
	<-pollerDone
	clients.Wait()
	reqs := p.stats(t)

	// Figures: throughput over the whole run; start→end latency per kind; for function calls also
	// answer→end.
	var last time.Time
	lat := map[string][]time.Duration{}
	answerLat := map[string][]time.Duration{}
	for _, x := range execs {
		e := ended[x.name]
		stop := aws.ToTime(e.StopDate)
		if stop.After(last) {
			last = stop
		}
		k := x.kind
		if x.flaky {
			k = "api_call (503 first)"
		}
		lat[k] = append(lat[k], stop.Sub(x.t0))
		lat["all"] = append(lat["all"], stop.Sub(x.t0))
		if x.kind != "function" {
			lat["all but function"] = append(lat["all but function"], stop.Sub(x.t0))
		} else if !x.answered.IsZero() {
			answerLat[x.answerBy] = append(answerLat[x.answerBy], stop.Sub(x.answered))
		}
	}
	wall := last.Sub(began)
	t.Logf("load: %d executions (%d function calls) in %v (started in %v): %.1f executions/s (from %.1f to %.1f, Unix seconds)",
		n, m, wall.Round(time.Millisecond), startedIn.Round(time.Millisecond), float64(n)/wall.Seconds(),
		float64(began.UnixMilli())/1000, float64(last.UnixMilli())/1000)
	ends := make([]time.Time, 0, n)
	for _, e := range ended {
		ends = append(ends, aws.ToTime(e.StopDate))
	}
	recs := readRecording(t, recording)
	t.Logf("  by half second from the first start (executions ended/DynamoDB requests sent): %s", timeline(began, ends, recs))
	if r, span := middleRate(ends); r > 0 {
		t.Logf("  the middle 80%% of the ends (10th to 90th percentile) in %v: %.1f executions/s, the run's rate without its ramp and tail",
			span.Round(time.Millisecond), r)
	}
	if machine != nil {
		t.Logf("  the machine's busy CPUs by half second from the first start (of %d; every process's and the kernel's): %s",
			machine.cpus, busyCores(samples, machine.cpus, began))
		from, to, _ := middleEnds(ends)
		if c, ok := meanBusyCores(samples, machine.cpus, from, to); ok {
			t.Logf("  the machine's busy CPUs over the middle 80%% of the ends: %.2f of %d", c, machine.cpus)
		}
	}
	for _, k := range []string{"all but function", "integration", "api_call", "api_call (503 first)", "system", "function"} {
		t.Logf("  start→end %-22s %s", k, summary(lat[k]))
	}
	t.Logf("  answer→end function, SendTaskSuccess %s", summary(answerLat["sdk"]))
	t.Logf("  answer→end function, HTTP route      %s", summary(answerLat["http"]))

	// Nothing lost: every execution SUCCEEDED with its own call's result, and sinew's record says so.
	var checks sync.WaitGroup
	sem = make(chan struct{}, 16)
	for _, x := range execs {
		sem <- struct{}{}
		checks.Go(func() {
			defer func() { <-sem }()
			x.fails = failures(t, c, x.name)
			checkLoadExec(t, c, a, x, ended[x.name], agent, srv, x.fails, p.logLines)
		})
	}
	checks.Wait()
	// Every Task failure the load caused, retried or not, by state and error.
	retried := map[string]int{}
	for _, x := range execs {
		for k, v := range x.fails {
			retried[k] += v
		}
	}
	t.Logf("  Task failures in the histories (state error: count): %v", retried)
	var waits []time.Duration
	for _, x := range execs {
		if x.recordWait > 0 {
			waits = append(waits, x.recordWait)
		}
	}
	t.Logf("  records still waiting for their status-change event when checked: %s", summary(waits))
	t.Logf("  AWS requests of local mode's functions during the load: %v", reqs)

	// No call is left pending.
	if page := a.must(t, "GET", "/calls?status=pending&limit=100", nil, 200); len(page["items"].([]any)) != 0 {
		t.Errorf("pending calls left after every execution ended: %v", page["items"])
	}

	ceil, cpuReplay, cpuReplayed := ceilingAfterLoad(t, p.Endpoints["dynamodb"], recs, began, reqs, n, span, meter)
	// DynamoDB Local's rate follows the CPU it gets, which on a shared machine differs between the
	// load (local mode beside it) and the replay: executions per CPU-second of it compare the two.
	t.Logf("  CPU during the load: %s", meter.describe(cpuBegan, cpuEnded))
	t.Logf("  CPU during the ceiling's replay: %s", meter.describe(cpuReplay, cpuReplayed))
	if l, r := meter.used(cpuBegan, cpuEnded)[0], meter.used(cpuReplay, cpuReplayed)[0]; l > 0 && r > 0 {
		load := float64(n) / l.Seconds()
		replay := ceil.ExecsPerSec * cpuReplayed.at.Sub(cpuReplay.at).Seconds() / r.Seconds()
		t.Logf("  executions per CPU-second of DynamoDB Local: %.0f in the load, %.0f in the ceiling's replay (%.0f%%)", load, replay, 100*load/replay)
	}
	lost := "nothing lost"
	if t.Failed() {
		lost = "SOME LOST OR WRONG (see the errors above)"
	}
	all := lat["all"]
	slices.Sort(all)
	// The headline, on stdout as it is (make bench copies it into BENCHMARKS.md), in the form other
	// tools read: nothing may follow the ceiling.
	fmt.Printf("- Local mode load: %d tool_calls in %.1f s, %.1f executions/s (p50 %.1f s, p99 %.1f s), %s; DynamoDB Local ceiling %.0f executions/s\n",
		n, wall.Seconds(), float64(n)/wall.Seconds(), quantile(all, 0.50).Seconds(), quantile(all, 0.99).Seconds(), lost, ceil.ExecsPerSec)
}

// ceilingAfterLoad measures DynamoDB Local's ceiling for the load and logs it: the load's recorded
// requests replayed at 16 and 64 in flight (local mode's bound and the load's starts), the better
// of the two being the ceiling, and at 1 in flight, where about the same rate says DynamoDB Local
// serves its requests one after another; and beside them the synthetic mix of the load's counts
// (made-up requests of the same operations), which the ceiling was before, for comparison. It
// answers the ceiling's replay with the CPU snapshots around it.
func ceilingAfterLoad(t *testing.T, endpoint string, recs []recordedReq, began time.Time, counts map[string]int64, n int, span time.Duration,
	meter *cpuMeter) (*replayRun, cpuSnap, cpuSnap) {
	var counted int64
	for k, v := range counts {
		if strings.HasPrefix(k, "DynamoDB.") {
			counted += v
		}
	}
	t.Logf("  DynamoDB requests local mode recorded: %d (its counts: %d), the setup's %d before the load replayed first, one at a time",
		len(recs), counted, sort.Search(len(recs), func(i int) bool { return recs[i].Time >= began.UnixNano() }))
	a := meter.snap()
	synthetic := measureDDBCeiling(t, endpoint, counts, n, 64, span)
	b := meter.snap()
	one := measureReplay(t, endpoint, recs, began, n, 1, nil)
	var best *replayRun
	for _, conc := range []int{16, 64} {
		r := measureReplay(t, endpoint, recs, began, n, conc, meter)
		if best == nil || r.ExecsPerSec > best.ExecsPerSec {
			best = r
		}
		t.Logf("  DynamoDB Local, the load's recorded requests replayed, %d in flight: %s", conc, r)
	}
	t.Logf("  DynamoDB Local, the load's recorded requests replayed, 1 in flight:  %s", one)
	var timed *timedRun
	onReplayTable(t, endpoint, recs, began, "timed", func(setup, load []replayReq) { timed = replayTimed(t, endpoint, setup, load) })
	t.Logf("  DynamoDB Local alone, the load's recorded requests sent at the times the load sent them: %s", timed)
	t.Logf("  DynamoDB Local ceiling: the recorded requests at %d in flight, %.0f executions/s", best.Conc, best.ExecsPerSec)
	t.Logf("  DynamoDB Local, the synthetic mix (made-up requests in the load's counts of operations), 64 in flight: %s", synthetic)
	t.Logf("  CPU during the synthetic mix's replay: %s", meter.describe(a, b))
	return best, best.cpuFrom, best.cpuTo
}

// warmMix is the DynamoDB requests a load of 1,000 sent (local mode's counts): the warm-up's mix.
var warmMix = map[string]int64{"DynamoDB.BatchGetItem": 1623, "DynamoDB.GetItem": 760, "DynamoDB.PutItem": 1, "DynamoDB.Query": 64,
	"DynamoDB.TransactWriteItems": 404, "DynamoDB.UpdateItem": 2467}

// answerTwice answers a function call twice at once through the client's channel, then, after the
// execution ended, once more through the other channel.
func answerTwice(ctx context.Context, t *testing.T, a *api, c *sfn.Client, x *loadExec, token string, mu *sync.Mutex) {
	var wg sync.WaitGroup
	sent := time.Now()
	for copyN := 1; copyN <= 2; copyN++ {
		wg.Go(func() {
			out := map[string]any{"answer": x.i, "by": x.answerBy, "copy": copyN}
			var refused string
			if x.answerBy == "sdk" {
				b, _ := json.Marshal(out)
				refused = sendTaskSuccess(ctx, c, token, string(b))
			} else {
				refused = answerHTTP(ctx, a, x, out)
			}
			mu.Lock()
			defer mu.Unlock()
			if refused == "" {
				x.accepted = append(x.accepted, out)
			} else {
				x.refused = append(x.refused, refused)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	x.answered = sent
	mu.Unlock()

	// Once the execution has ended (settled), the other channel is refused too.
	if _, err := awaitEnd(c, x.name, 10*time.Minute); err != nil {
		t.Error(err)
		return
	}
	var second string
	if x.answerBy == "sdk" {
		second = answerHTTP(ctx, a, x, map[string]any{"late": true})
	} else {
		second = sendTaskSuccess(ctx, c, token, `{"late":true}`)
	}
	mu.Lock()
	x.secondErr = second
	mu.Unlock()
}

// answerHTTP answers a call through POST /executions/{id}/calls/{call_id}/result, as a client
// does: a 503 says try again, so it tries again. It answers "" when the answer was taken, else
// "<status> <error>".
func answerHTTP(ctx context.Context, a *api, x *loadExec, output any) string {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		code, body, err := a.do(ctx, "POST", "/executions/"+x.name+"/calls/"+x.callID+"/result", map[string]any{"output": output})
		switch {
		case err != nil:
			return err.Error()
		case code == 200:
			return ""
		case code == http.StatusServiceUnavailable && time.Now().Before(deadline):
			time.Sleep(200 * time.Millisecond)
			continue
		}
		return fmt.Sprintf("%d %v", code, body["error"])
	}
}

// sendTaskSuccess answers a call with SendTaskSuccess: "" when taken, else the error code.
func sendTaskSuccess(ctx context.Context, c *sfn.Client, token, output string) string {
	_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(output)})
	return sfnCode(err)
}

// checkLoadExec checks one execution of the load: SUCCEEDED with the right result, its record,
// and the side effects.
func checkLoadExec(t *testing.T, c *sfn.Client, a *api, x *loadExec, e types.ExecutionListItem, agent string, srv *hitServer, fails map[string]int,
	logOf func(string) string) {
	if e.Status != types.ExecutionStatusSucceeded {
		d, _ := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: e.ExecutionArn})
		t.Errorf("%s (%s #%d): %s %s %s", x.name, x.kind, x.i, e.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
		return
	}
	d, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: e.ExecutionArn})
	if err != nil {
		t.Errorf("DescribeExecution %s: %v", x.name, err)
		return
	}
	out := decodeOutput(t, d)
	res, _ := out["output"].(map[string]any)
	isResult := out["id"] == x.callID && out["error"] == nil && res != nil
	if x.kind == "function" && x.viaAPI {
		// Started by POST /tool-calls, a function call's execution ends with the client's answer
		// as it came (Dispatch has no Output, so its numbers stay exact); sinew's record holds
		// the result object, which checkRecord reads.
		res, isResult = out, true
	}
	if !isResult {
		t.Errorf("%s (%s #%d): output %s, want the result of call %s\nits Task failures:\n%s\nlocal mode's log of the call:\n%s",
			x.name, x.kind, x.i, aws.ToString(d.Output), x.callID, strings.Join(causes(t, c, x.name), "\n"), logOf(x.callID))
		return
	}
	switch x.kind {
	case "integration":
		if res["n"] != float64(x.i) {
			t.Errorf("%s: integration output %v, want n=%d", x.name, res, x.i)
		}
	case "api_call":
		body, _ := res["json"].(map[string]any)
		wantHits := 1
		if x.flaky {
			wantHits = 2
		}
		if res["status_code"] != float64(200) || body["call_id"] != x.callID || body["n"] != float64(wantHits) {
			t.Errorf("%s: api_call output %v, want call %s answered on request %d", x.name, res, x.callID, wantHits)
		}
		if got := srv.count(x.callID); got != wantHits {
			t.Errorf("%s: the server got %d requests for call %s, want %d", x.name, got, x.callID, wantHits)
		}
		// However the call started, it runs in Dispatch (a bare start's through Prepare, which
		// hands it to the executor and fails with the executor's error).
		if x.flaky && fails["Dispatch Sinew.Transient"] < 1 {
			t.Errorf("%s: the 503 is not a retried Sinew.Transient of the Dispatch Task in the history: %v", x.name, fails)
		}
	case "system":
		if res["id"] != agent || res["name"] != "load-agent" {
			t.Errorf("%s: system output %v, want agent %s", x.name, res, agent)
		}
	case "function":
		if len(x.accepted) != 1 || len(x.refused) != 1 {
			t.Errorf("%s: %d of two concurrent %s answers taken (%v), refused %v; want exactly one", x.name, len(x.accepted), x.answerBy, x.accepted, x.refused)
			return
		}
		want, _ := json.Marshal(x.accepted[0])
		got, _ := json.Marshal(res)
		if string(got) != string(want) {
			t.Errorf("%s: function output %s, want the answer taken, %s", x.name, got, want)
		}
		// The refused twin and the late answer on the other channel.
		wantRefusal, wantSecond := "TaskTimedOut", "409 "
		if x.answerBy == "http" {
			wantRefusal, wantSecond = "409 ", "TaskTimedOut"
		}
		if !strings.HasPrefix(x.refused[0], wantRefusal) {
			t.Errorf("%s: the concurrent second %s answer was refused with %q, want %s", x.name, x.answerBy, x.refused[0], wantRefusal)
		}
		if !strings.HasPrefix(x.secondErr, wantSecond) {
			t.Errorf("%s: a late answer on the other channel got %q, want %s", x.name, x.secondErr, wantSecond)
		}
	}
	// sinew's own record agrees, once the execution's status-change event has reached settle: a
	// function call's outcome is recorded from that event, which EventBridge delivers after the
	// execution's end (the executors record the others before it).
	code, rec, waited, err := awaitRecord(a, x.name, recordWait)
	x.recordWait = waited
	if pcs, _ := rec["pending_calls"].([]any); err != nil || code != 200 || rec["status"] != "succeeded" || len(pcs) != 0 {
		t.Errorf("GET /executions/%s = %d %v %v (after %v), want succeeded with no pending call", x.name, code, rec, err, waited.Round(time.Millisecond))
		return
	}
	if x.kind == "function" && len(x.accepted) == 1 {
		// The record holds the result object whatever the execution's own output.
		ro, _ := rec["output"].(map[string]any)
		want, _ := json.Marshal(x.accepted[0])
		got, _ := json.Marshal(ro["output"])
		if ro["id"] != x.callID || string(got) != string(want) {
			t.Errorf("GET /executions/%s output %v, want call %s's result object with the answer taken, %s", x.name, rec["output"], x.callID, want)
		}
	}
}

// recordWait bounds the wait for an execution's record to show its end: settle's attempt and its
// two retries (lambdaapi.LambdaRetryDelays) fit in it. It only guards against a hang.
const recordWait = 6 * time.Minute

// awaitRecord reads GET /executions/{name} until the record has a final status or within is spent;
// it answers the last read and how long it waited after the first (0 when that one was final).
func awaitRecord(a *api, name string, within time.Duration) (int, map[string]any, time.Duration, error) {
	var first time.Time
	var waited time.Duration
	for {
		code, rec, err := a.do(context.Background(), "GET", "/executions/"+name, nil)
		if first.IsZero() {
			first = time.Now()
		} else {
			waited = time.Since(first)
		}
		st, _ := rec["status"].(string)
		if err != nil || code != 200 || (st != "running" && st != "awaiting_input") || waited > within {
			return code, rec, waited, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stats has local mode write its AWS request counts (and its CPU profile, when SINEW_CPUPROFILE,
// passed on in its environment, names a file) now, so they cover the load and not the checks after
// it, and gives the counts by "Service.Operation".
func (p *local) stats(t testing.TB) map[string]int64 {
	if err := p.Cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatalf("asking local mode for its stats: %v", err)
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(p.Stderr.String(), "stats written"); {
		if time.Now().After(deadline) {
			t.Fatal("local mode wrote no stats within a minute of SIGUSR1")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if path := os.Getenv("SINEW_CPUPROFILE"); path != "" {
		t.Logf("local mode's CPU profile of the load: %s", path)
	}
	data, err := os.ReadFile(filepath.Join(p.Dir, "aws-requests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var counts map[string]int64
	if err := json.Unmarshal(data, &counts); err != nil {
		t.Fatalf("aws-requests.json: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(p.Dir, "aws-wire.json")); err != nil {
		t.Errorf("local mode's request times: %v", err)
	} else {
		logWire(t, data)
	}
	return counts
}

// logWire logs local mode's aws-wire.json in a few lines: how many DynamoDB requests it had in
// flight, how many waited for its bound on them and how long, and each operation's mean time on
// the wire.
func logWire(t testing.TB, data []byte) {
	var w struct {
		Services map[string]struct {
			Span  time.Duration `json:"span_ns"`
			Mean  float64       `json:"mean_in_flight"`
			MaxIn int           `json:"max_in_flight"`
		} `json:"services"`
		Ops map[string]struct {
			N     int64         `json:"n"`
			Total time.Duration `json:"total_ns"`
			Bytes int64         `json:"request_bytes"`
		} `json:"ops"`
		Gate *struct {
			InFlight int           `json:"in_flight"`
			Queued   int64         `json:"queued"`
			Waited   time.Duration `json:"waited_ns"`
		} `json:"dynamodb_gate"`
		Phases struct {
			N      int64         `json:"n"`
			Conn   time.Duration `json:"conn_ns"`
			Write  time.Duration `json:"write_ns"`
			Answer time.Duration `json:"answer_ns"`
			Read   time.Duration `json:"read_ns"`
		} `json:"dynamodb_phases"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		t.Errorf("aws-wire.json: %v", err)
		return
	}
	d := w.Services["DynamoDB"]
	bound := "no bound"
	if g := w.Gate; g != nil {
		mean := time.Duration(0)
		if g.Queued > 0 {
			mean = g.Waited / time.Duration(g.Queued)
		}
		bound = fmt.Sprintf("bound %d; %d requests waited for a slot, %v each on average", g.InFlight, g.Queued, mean.Round(time.Millisecond))
	}
	t.Logf("  local mode's DynamoDB requests in flight: %.1f on average over %v, at most %d (%s)", d.Mean, d.Span.Round(time.Millisecond), d.MaxIn, bound)
	ops := make([]string, 0, len(w.Ops))
	for k := range w.Ops {
		ops = append(ops, k)
	}
	slices.Sort(ops)
	var parts []string
	for _, k := range ops {
		o := w.Ops[k]
		if o.N > 0 {
			parts = append(parts, fmt.Sprintf("%s %v (%d B)", k, (o.Total/time.Duration(o.N)).Round(100*time.Microsecond), o.Bytes/o.N))
		}
	}
	t.Logf("  mean time on the wire per request (request body): %s", strings.Join(parts, ", "))
	if ph := w.Phases; ph.N > 0 {
		mean := func(d time.Duration) time.Duration { return (d / time.Duration(ph.N)).Round(10 * time.Microsecond) }
		t.Logf("  a DynamoDB request's time on the wire by phase, mean of %d: taking a connection %v, writing the request %v, "+
			"until the answer's first byte %v, reading its headers %v", ph.N, mean(ph.Conn), mean(ph.Write), mean(ph.Answer), mean(ph.Read))
	}
}
