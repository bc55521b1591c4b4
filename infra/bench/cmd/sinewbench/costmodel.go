package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var budgetLine = regexp.MustCompile(`(\S+): (\d+) state transitions, (\d+) Lambda invocations inside the state machine, (\d+) outside it, (\d+) HTTP requests, DynamoDB map\[(.*?)\] \((\d+) requests, request units map\[(.*?)\]\)`)

// readOps are the DynamoDB operations that consume read request units; every other one consumes
// write request units (a write's ReturnValues and conditions are billed as the write).
var readOps = map[string]bool{"GetItem": true, "BatchGetItem": true, "Query": true, "Scan": true, "TransactGetItems": true}

// callInputs is what one call of a type does: the counts of its TestRequestBudget line and what
// the suite measured of it (the files TestRequestBudget writes under SINEW_COST_INPUTS).
type callInputs struct {
	name                                string // as the test names it: echo, echo/start
	transitions, inside, outside, https int
	ddbRequests                         int
	ops, units                          string
	reads, writes                       float64
	otherUnits                          []string // the request units other runs reported, when they differ

	samples       int       // runs of the test measured; 0: only the counts are known
	runs          []costRun // each invocation, the median of its time over the runs
	appLogBytes   float64   // what the functions logged (median)
	customEvents  float64   // PutEvents entries (median)
	historyEvents int
	execMs        float64 // the execution's duration, from its first history event to its last (median)
	sfnLogBytes   int     // Step Functions' log records of the history, as the stack logs them
	kmsDecrypts   float64 // sealed values opened: none of TestRequestBudget's tools holds a secret
}

// costRun is one function's invocation as TestRequestBudget records it.
type costRun struct {
	Function string  `json:"function"`
	Ms       float64 `json:"ms"`
}

// measuredCall is one file TestRequestBudget writes: one call.
type measuredCall struct {
	Call         string            `json:"call"`
	Invocations  []costRun         `json:"invocations"`
	AppLogBytes  float64           `json:"app_log_bytes"`
	CustomEvents float64           `json:"custom_events"`
	ExecutionArn string            `json:"execution_arn"`
	History      []json.RawMessage `json:"history"`
}

// costOf reads the counts of one budget line.
func costOf(m []string) callInputs {
	c := callInputs{name: m[1], ops: m[6], units: m[8]}
	for i, dst := range []*int{&c.transitions, &c.inside, &c.outside, &c.https, &c.ddbRequests} {
		*dst, _ = strconv.Atoi(m[[]int{2, 3, 4, 5, 7}[i]])
	}
	// Request units by operation as DynamoDB reported them (internal/awscount): table and index
	// together, transactions already doubled. An operation consumes one kind of unit only.
	for _, kv := range strings.Fields(m[8]) {
		k, v, _ := strings.Cut(kv, ":")
		n, _ := strconv.ParseFloat(v, 64)
		if readOps[k] {
			c.reads += n
		} else {
			c.writes += n
		}
	}
	return c
}

// readMeasured gathers the files under dir by call.
func readMeasured(dir string) (map[string][]measuredCall, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string][]measuredCall{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var m measuredCall
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out[m.Call] = append(out[m.Call], m)
	}
	return out, nil
}

// measure takes the medians of a call's runs: each invocation's time by its place among the
// function's invocations (prepare runs twice in a bare function call), the log bytes, the events.
func (c *callInputs) measure(files []measuredCall, f stackFacts) error {
	if len(files) == 0 {
		return nil
	}
	times, order := map[string]samples{}, []string{}
	var logs, events, sfnBytes, durations samples
	for _, m := range files {
		seen := map[string]int{}
		for _, inv := range m.Invocations {
			key := inv.Function + "#" + strconv.Itoa(seen[inv.Function])
			seen[inv.Function]++
			if _, ok := times[key]; !ok {
				order = append(order, key)
			}
			times[key] = append(times[key], inv.Ms)
		}
		durations = append(durations, historyMs(m.History))
		n := 0
		if c.level(f) == "ALL" {
			var err error
			if n, err = sfnLogBytes(m.History, m.ExecutionArn, f.sfnData); err != nil {
				return fmt.Errorf("%s: %w", m.Call, err)
			}
		}
		logs, events, sfnBytes = append(logs, m.AppLogBytes), append(events, m.CustomEvents), append(sfnBytes, float64(n))
		c.historyEvents = len(m.History)
	}
	c.runs = nil
	for _, key := range order {
		fn, _, _ := strings.Cut(key, "#")
		c.runs = append(c.runs, costRun{Function: fn, Ms: times[key].median()})
	}
	c.samples, c.appLogBytes, c.customEvents, c.sfnLogBytes = len(files), logs.median(), events.median(), int(sfnBytes.median())
	c.execMs = durations.median()
	return nil
}

// historyMs is an execution's duration by its history: its first event's time to its last's.
func historyMs(history []json.RawMessage) float64 {
	var first, last time.Time
	for _, raw := range history {
		var e struct {
			Timestamp time.Time `json:"timestamp"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Timestamp.IsZero() {
			continue
		}
		if first.IsZero() {
			first = e.Timestamp
		}
		last = e.Timestamp
	}
	return float64(last.Sub(first).Microseconds()) / 1000
}

// events is the custom events a call puts in the stack: none when the template turns the function
// executor's ToolCallPending off (the run measured them with local mode's default, on).
func (c callInputs) events(f stackFacts) float64 {
	if f.pendingOff {
		return 0
	}
	return c.customEvents
}

// express reports whether the call ran on tool_call_express.
func (c callInputs) express() bool { return strings.HasSuffix(c.name, "/express") }

// level is the log level of the state machine the call ran on.
func (c callInputs) level(f stackFacts) string {
	if c.express() {
		return f.expressLevel
	}
	return f.sfnLevel
}

// workflow names the call's state machine type, as the headline gives it.
func (c callInputs) workflow() string {
	if c.express() {
		return "Express"
	}
	return "Standard"
}

// sfnCost is Step Functions' price of one call: Standard's per transition; Express's per execution
// and for its duration, at its first 64 MB in 100 ms steps.
func (c callInputs) sfnCost() float64 {
	if !c.express() {
		return float64(c.transitions) * sfnPerTransition
	}
	steps := max(1, math.Ceil(c.execMs/expressStepMs))
	return expressPerRun + expressMemGB*steps*expressStepMs/1000*expressPerGBs
}

// breakdown is the cost of one million calls by service, in dollars.
type breakdown struct {
	sfn, lambda, ddb, apigw, events, logs, xray, kms float64
}

func (b breakdown) total() float64 {
	return b.sfn + b.lambda + b.ddb + b.apigw + b.events + b.logs + b.xray + b.kms
}

// cost prices one million calls. Without measurements, the Lambda invocations are priced as
// requests alone and the logs and events are left out.
func (c callInputs) cost(f stackFacts) breakdown {
	const m = 1e6
	b := breakdown{sfn: c.sfnCost() * m, ddb: (c.reads*ddbPerRead + c.writes*ddbPerWrite) * m,
		apigw: float64(c.https) * apigwPerRequest * m, events: c.events(f) * eventsPerCustom * m,
		xray: c.traces(f) * xraySampled * xrayPerTrace * m, kms: c.kmsDecrypts * kmsPerRequest * m}
	if c.samples == 0 {
		b.lambda = float64(c.inside+c.outside) * lambdaPerRequest * m
		return b
	}
	for _, r := range c.runs {
		b.lambda += (lambdaPerRequest + float64(f.memoryMB[r.Function])/1024*float64(billedMs(r.Ms))/1000*lambdaPerGBs) * m
	}
	stored := logsStoredPerGB * float64(f.retentionDays) / (365.0 / 12) // each GB is kept its retention
	b.logs = c.logBytes(f) / gb * (logsPerGB + stored) * m
	return b
}

// logBytes is what one call writes to CloudWatch Logs: Step Functions' records of its history,
// Lambda's two records per invocation of a function whose system log level keeps them, what the
// functions log, and the HTTP API's access log line per request (the api function's invocations
// are the HTTP requests).
func (c callInputs) logBytes(f stackFacts) float64 {
	n := float64(c.sfnLogBytes) + c.appLogBytes
	for _, r := range c.runs {
		if f.platformRecords(r.Function) {
			n += float64(lambdaLogBytes(f.memoryMB[r.Function], r.Ms, f.lambdaTraced))
		}
		if r.Function == "api" {
			n += float64(accessLogBytes(f.accessLog, r.Ms))
		}
	}
	return n
}

// traces counts the traces X-Ray records of a call before sampling. Sampling is decided once, where
// a trace starts: at the api function for each HTTP request (its SDK passes the trace on to Step
// Functions and the executors), at Step Functions for a bare StartExecution, and at settle for each
// status-change event (EventBridge starts no trace from an AWS service's event).
func (c callInputs) traces(f stackFacts) float64 {
	settles := c.outside - c.https
	switch {
	case f.lambdaTraced:
		return float64(max(c.https, 1) + settles)
	case f.sfnTraced:
		return 1
	}
	return 0
}

// runsText lists the invocations with their times and memory, for the inputs table.
func (c callInputs) runsText(f stackFacts) string {
	if c.samples == 0 {
		return fmt.Sprintf("%d (times not measured)", c.inside+c.outside)
	}
	var parts []string
	for _, r := range c.runs {
		parts = append(parts, fmt.Sprintf("%s %.1f ms at %d MB", r.Function, r.Ms, f.memoryMB[r.Function]))
	}
	return strings.Join(parts, ", ")
}

// byName orders the calls as the test ran them, one per name. The runs must agree on what a call
// does; the request units DynamoDB reports can differ between runs (an item's size crosses a unit's
// kilobyte with its ids and times), so the call takes the run of the median DynamoDB cost and says
// what the others reported.
func byName(out []byte) ([]callInputs, error) {
	var names []string
	runs := map[string][]callInputs{}
	for _, m := range budgetLine.FindAllStringSubmatch(string(out), -1) {
		c := costOf(m)
		if prev, ok := runs[c.name]; ok {
			if p := prev[0]; p.transitions != c.transitions || p.ddbRequests != c.ddbRequests || p.ops != c.ops ||
				p.inside != c.inside || p.outside != c.outside || p.https != c.https {
				return nil, fmt.Errorf("%s: the runs disagree: %q and %q", c.name, m[0], budgetText(p))
			}
		} else {
			names = append(names, c.name)
		}
		runs[c.name] = append(runs[c.name], c)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("TestRequestBudget printed no counts (run with -v): %s", trim(string(out), 500))
	}
	calls := make([]callInputs, 0, len(names))
	for _, name := range names {
		rs := runs[name]
		ddb := func(c callInputs) float64 { return c.reads*ddbPerRead + c.writes*ddbPerWrite }
		slices.SortStableFunc(rs, func(a, b callInputs) int { return cmp.Compare(ddb(a), ddb(b)) })
		c := rs[(len(rs)-1)/2]
		for _, o := range rs {
			if o.units != c.units && !slices.Contains(c.otherUnits, o.units) {
				c.otherUnits = append(c.otherUnits, o.units)
			}
		}
		calls = append(calls, c)
	}
	return calls, nil
}

func budgetText(c callInputs) string {
	return fmt.Sprintf("%d transitions, %d requests, units %s", c.transitions, c.ddbRequests, c.units)
}

// typeNames are the budget's tools as the report names their types.
var typeNames = map[string]string{"echo": "integration (dummy echo)", "get_item": "api_call (loopback)",
	"ask_user": "function (task token)", "list_agents": "system (agent list)"}

// typeOf names a call's type and how it was started.
func typeOf(name string) (typ, entry string, bare bool) {
	base, bare := strings.CutSuffix(name, "/start")
	base, express := strings.CutSuffix(base, "/express")
	typ, entry = typeNames[base], "POST /tool-calls"
	if typ == "" {
		typ = base
	}
	switch {
	case bare:
		entry = "StartExecution"
	case express:
		entry = "POST /tool-calls, answered in the request (tool_call_express)"
	}
	return typ, entry, bare
}

// sortedFunctions lists the functions of the stack, for the memory note.
func sortedFunctions(f stackFacts) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(f.memoryMB)) {
		parts = append(parts, fmt.Sprintf("%s %d MB", name, f.memoryMB[name]))
	}
	return strings.Join(parts, ", ")
}
