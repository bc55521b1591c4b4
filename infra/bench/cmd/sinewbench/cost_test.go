package main

import (
	"fmt"
	"testing"
)

// testFacts is a stack as the tests price it: traced functions at their deploy memory, a state
// machine logging everything without execution data, logs kept 30 days.
func testFacts() stackFacts {
	f := assumedFacts("test")
	f.memoryMB = map[string]int{"api": 512, "prepare": 256, "function": 256, "integration": 1536, "apicall": 512, "system": 512, "settle": 256}
	return f
}

func mustLine(t *testing.T, line string) callInputs {
	t.Helper()
	m := budgetLine.FindStringSubmatch("    routes_test.go:172: " + line)
	if m == nil {
		t.Fatalf("the pattern misses %q", line)
	}
	return costOf(m)
}

// TestCostOf holds the counted part of the model to lines as TestRequestBudget prints them: with
// no measurements, Lambda is priced by its requests alone and logs and events are left out.
func TestCostOf(t *testing.T) {
	tests := []struct {
		line                          string
		sfn, lambda, ddb, apigw, xray string
		total                         string
	}{
		// 3 Lambdas at $0.20, 4 read units at $0.125 and 2 write units at $0.625, 1 HTTP request;
		// 2 traces (the request's, settle's) at 5% of $5.
		{"echo: 2 state transitions, 1 Lambda invocations inside the state machine, 2 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:2] (4 requests, request units map[BatchGetItem:4 UpdateItem:2])",
			"50.00", "0.60", "1.75", "1.00", "0.50", "53.85"},
		// Two transactions of two items: 8 write units; 3 traces (two requests, settle).
		{"ask_user: 2 state transitions, 1 Lambda invocations inside the state machine, 3 outside it, 2 HTTP requests, DynamoDB map[BatchGetItem:1 GetItem:1 TransactWriteItems:2 UpdateItem:1] (5 requests, request units map[BatchGetItem:2 GetItem:1 TransactWriteItems:8 UpdateItem:1])",
			"50.00", "0.80", "6.00", "2.00", "0.75", "59.55"},
		// A bare start: its execution's trace and settle's.
		{"echo/start: 3 state transitions, 2 Lambda invocations inside the state machine, 1 outside it, 0 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:3] (5 requests, request units map[BatchGetItem:4 UpdateItem:4])",
			"75.00", "0.60", "3.00", "0.00", "0.50", "79.10"},
	}
	for _, tt := range tests {
		b := mustLine(t, tt.line).cost(testFacts())
		got := []string{f2(b.sfn), f2(b.lambda), f2(b.ddb), f2(b.apigw), f2(b.xray), f2(b.total())}
		want := []string{tt.sfn, tt.lambda, tt.ddb, tt.apigw, tt.xray, tt.total}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got sfn, lambda, ddb, apigw, xray, total %v\nwant %v", tt.line, got, want)
		}
		if b.logs != 0 || b.events != 0 || b.kms != 0 {
			t.Errorf("%s: unmeasured logs, events or KMS priced: %+v", tt.line, b)
		}
	}
}

func f2(v float64) string { return fmt.Sprintf("%.2f", v) }

// TestCostReadsAndWrites: the operation decides the rate, so the same units cost five times as much
// as writes as they do as reads, whatever else the line says.
func TestCostReadsAndWrites(t *testing.T) {
	for _, tt := range []struct {
		units string
		want  string
	}{
		{"GetItem:6", "0.75"}, {"BatchGetItem:3 Query:2 Scan:1", "0.75"}, {"TransactGetItems:6", "0.75"},
		{"UpdateItem:6", "3.75"}, {"PutItem:2 DeleteItem:2 BatchWriteItem:1 TransactWriteItems:1", "3.75"},
		{"GetItem:2 UpdateItem:2", "1.50"},
	} {
		c := mustLine(t, "x: 0 state transitions, 0 Lambda invocations inside the state machine, 0 outside it, 0 HTTP requests, DynamoDB map[] (1 requests, request units map["+tt.units+"])")
		if got := f2(c.cost(testFacts()).ddb); got != tt.want {
			t.Errorf("%s: DynamoDB $%s per million, want $%s", tt.units, got, tt.want)
		}
	}
}

// TestLambdaCost: each invocation is a request and its time rounded up to the millisecond at its
// function's memory.
func TestLambdaCost(t *testing.T) {
	for _, tt := range []struct {
		run  costRun
		want string
	}{
		{costRun{"api", 9}, "0.2600"},            // 0.5 GB × 9 ms
		{costRun{"api", 8.2}, "0.2600"},          // rounded up to 9 ms
		{costRun{"integration", 100}, "2.2000"},  // 1.5 GB × 100 ms
		{costRun{"settle", 0.08}, "0.2033"},      // at least 1 ms, at 256 MB
		{costRun{"function", 30}, "0.3000"},      // 0.25 GB × 30 ms
		{costRun{"system", 1000.4}, "6.8734"},    // 0.5 GB × 1,001 ms
		{costRun{"not-a-function", 5}, "0.2000"}, // no memory: the request alone
	} {
		c := callInputs{samples: 1, runs: []costRun{tt.run}}
		if got := fmt.Sprintf("%.4f", c.cost(testFacts()).lambda); got != tt.want {
			t.Errorf("%+v: Lambda $%s per million, want $%s", tt.run, got, tt.want)
		}
	}
}

func TestBilledMs(t *testing.T) {
	for _, tt := range []struct {
		ms   float64
		want int
	}{{0, 1}, {0.01, 1}, {1, 1}, {1.2, 2}, {9.999, 10}, {10, 10}, {250.5, 251}} {
		if got := billedMs(tt.ms); got != tt.want {
			t.Errorf("billedMs(%v) = %d, want %d", tt.ms, got, tt.want)
		}
	}
}

// TestPerCallServices: custom events, KMS Decrypts, X-Ray traces and log bytes each at their rate.
func TestPerCallServices(t *testing.T) {
	perGB := float64(gb) / 1e6 // bytes per call that make a GB per million calls
	for _, tt := range []struct {
		name string
		in   callInputs
		f    func(stackFacts) stackFacts
		pick func(breakdown) float64
		want string
	}{
		{"one ToolCallPending", callInputs{customEvents: 1}, nil, func(b breakdown) float64 { return b.events }, "1.00"},
		{"one stored secret opened", callInputs{kmsDecrypts: 1}, nil, func(b breakdown) float64 { return b.kms }, "3.00"},
		{"two secrets", callInputs{kmsDecrypts: 2}, nil, func(b breakdown) float64 { return b.kms }, "6.00"},
		{"a GB of logs per million, kept 30 days", callInputs{samples: 1, appLogBytes: perGB}, nil,
			func(b breakdown) float64 { return b.logs }, "0.53"},
		{"a GB of logs, kept a month", callInputs{samples: 1, appLogBytes: perGB},
			func(f stackFacts) stackFacts { f.retentionDays = 0; return f }, func(b breakdown) float64 { return b.logs }, "0.50"},
		{"four trace starts", callInputs{https: 3, outside: 4}, nil, func(b breakdown) float64 { return b.xray }, "1.00"},
		{"untraced functions, traced state machine", callInputs{https: 3, outside: 4},
			func(f stackFacts) stackFacts { f.lambdaTraced = false; return f }, func(b breakdown) float64 { return b.xray }, "0.25"},
		{"nothing traced", callInputs{https: 3, outside: 4},
			func(f stackFacts) stackFacts { f.lambdaTraced, f.sfnTraced = false, false; return f }, func(b breakdown) float64 { return b.xray }, "0.00"},
	} {
		f := testFacts()
		if tt.f != nil {
			f = tt.f(f)
		}
		if got := f2(tt.pick(tt.in.cost(f))); got != tt.want {
			t.Errorf("%s: $%s per million, want $%s", tt.name, got, tt.want)
		}
	}
}

// TestCallLogBytes: a call's log is Step Functions' records, the functions' lines, Lambda's two
// records per invocation of a function at system log level INFO (none at WARN) and an access log
// line per HTTP request (the api function's invocations).
func TestCallLogBytes(t *testing.T) {
	f := testFacts()
	c := callInputs{samples: 1, sfnLogBytes: 1000, appLogBytes: 200, runs: []costRun{{"api", 4}, {"integration", 3}, {"settle", 1}}}
	quiet := 1000 + 200 + accessLogBytes(f.accessLog, 4)
	if got := c.logBytes(f); got != float64(quiet) {
		t.Errorf("at WARN: log bytes = %.0f, want %d", got, quiet)
	}
	f.systemLevel["api"], f.systemLevel["settle"] = "INFO", "DEBUG"
	want := quiet + lambdaLogBytes(512, 4, true) + lambdaLogBytes(256, 1, true)
	if got := c.logBytes(f); got != float64(want) {
		t.Errorf("api at INFO, settle at DEBUG: log bytes = %.0f, want %d", got, want)
	}
}

// TestCallGoals: the goals table takes the worst type of each figure and says which goals hold.
func TestCallGoals(t *testing.T) {
	lines := []string{
		"echo: 1 state transitions, 1 Lambda invocations inside the state machine, 2 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:2] (4 requests, request units map[BatchGetItem:4 UpdateItem:4])",
		"list_agents: 2 state transitions, 1 Lambda invocations inside the state machine, 2 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:1 UpdateItem:4] (5 requests, request units map[BatchGetItem:2 UpdateItem:4])",
		"ask_user: 1 state transitions, 1 Lambda invocations inside the state machine, 3 outside it, 2 HTTP requests, DynamoDB map[BatchGetItem:1 GetItem:1 TransactWriteItems:2 UpdateItem:1] (5 requests, request units map[BatchGetItem:2 GetItem:1 TransactWriteItems:16 UpdateItem:2])",
		"echo/express: 2 state transitions, 1 Lambda invocations inside the state machine, 1 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:2 Query:1 UpdateItem:2] (5 requests, request units map[BatchGetItem:4 Query:1 UpdateItem:4])",
		"ask_user/start: 3 state transitions, 3 Lambda invocations inside the state machine, 1 outside it, 0 HTTP requests, DynamoDB map[BatchGetItem:2 TransactWriteItems:2 UpdateItem:2] (6 requests, request units map[BatchGetItem:4 TransactWriteItems:16 UpdateItem:3])",
	}
	var g callGoals
	for _, l := range lines {
		c := mustLine(t, l)
		g.add(c, c.cost(testFacts()).total())
	}
	r := newReport(options{})
	g.report(r)
	want := map[string]struct {
		now string
		met bool
	}{
		"state transitions, server-side call through POST /tool-calls":         {"2", true},
		"DynamoDB requests, server-side call through POST /tool-calls":         {"5", false},
		"DynamoDB requests, function call with its answer over the HTTP route": {"5", true},
		"state transitions, a bare start naming only the tool":                 {"3", true},
		// list_agents: $50 + 3 Lambda requests $0.60 + 2 read units $0.25 + 4 write units $2.50 + 1 HTTP
		// request $1 + 2 traces at 5% $0.50.
		"cost per million calls through POST /tool-calls on tool_call (Standard), the dearest type, every service counted": {"$54.85", true},
		// echo/express: $1 an execution and 100 ms at 64 MB $0.10 + 2 Lambda requests $0.40 + 5 read
		// units $0.63 + 4 write units $2.50 + 1 HTTP request $1 + 1 trace at 5% $0.25.
		"cost per million server-side calls answered in the request (Express), the dearest type, every service counted": {"$5.88", false},
	}
	got := map[string]goalRow{}
	for _, row := range r.goals {
		got[row.figure] = row
	}
	for fig, w := range want {
		if row, ok := got[fig]; !ok || row.now != w.now || row.met != w.met {
			t.Errorf("%s: %+v, want %s (met %v)", fig, row, w.now, w.met)
		}
	}
}
