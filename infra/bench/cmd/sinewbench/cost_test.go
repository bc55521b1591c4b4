package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestCostOf holds the cost model to lines as TestRequestBudget prints them.
func TestCostOf(t *testing.T) {
	tests := []struct {
		line string
		want string
	}{
		// 3 Lambdas at $0.2167, 4 read units at $0.125 and 2 write units at $0.625, 1 HTTP request.
		{"echo: 2 state transitions, 1 Lambda invocations inside the state machine, 2 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:2] (4 requests, request units map[BatchGetItem:4 UpdateItem:2])",
			"53.40"},
		// Two transactions of two items: 8 write units.
		{"ask_user: 2 state transitions, 1 Lambda invocations inside the state machine, 3 outside it, 2 HTTP requests, DynamoDB map[BatchGetItem:1 GetItem:1 TransactWriteItems:2 UpdateItem:1] (5 requests, request units map[BatchGetItem:2 GetItem:1 TransactWriteItems:8 UpdateItem:1])",
			"58.87"},
		{"echo/start: 3 state transitions, 2 Lambda invocations inside the state machine, 1 outside it, 0 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:3] (5 requests, request units map[BatchGetItem:4 UpdateItem:3])",
			"78.03"},
		// Units as DynamoDB reports them, index writes included: $50 + 4 Lambdas $0.8667 + 2 HTTP requests
		// $2 + 3 read units $0.375 + 18 write units $11.25.
		{"ask_user: 2 state transitions, 1 Lambda invocations inside the state machine, 3 outside it, 2 HTTP requests, DynamoDB map[BatchGetItem:1 GetItem:1 TransactWriteItems:2 UpdateItem:1] (5 requests, request units map[BatchGetItem:2 GetItem:1 TransactWriteItems:16 UpdateItem:2])",
			"64.49"},
		// $75 + 3 Lambdas $0.65 + 4 read units $0.50 + 6 write units $3.75.
		{"echo/start: 3 state transitions, 2 Lambda invocations inside the state machine, 1 outside it, 0 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:3] (5 requests, request units map[BatchGetItem:4 UpdateItem:6])",
			"79.90"},
	}
	for _, tt := range tests {
		m := budgetLine.FindStringSubmatch("    routes_test.go:162: " + tt.line)
		if m == nil {
			t.Fatalf("the pattern misses %q", tt.line)
		}
		if got := fmt.Sprintf("%.2f", costOf(m).total()); got != tt.want {
			t.Errorf("%s: $%s, want $%s", tt.line, got, tt.want)
		}
	}
}

// TestCostReadsAndWrites: the operation decides the rate, so the same units cost five times as much
// as writes as they do as reads, whatever else the line says.
func TestCostReadsAndWrites(t *testing.T) {
	line := func(units string) callCost {
		m := budgetLine.FindStringSubmatch("x: 0 state transitions, 0 Lambda invocations inside the state machine, 0 outside it, 0 HTTP requests, DynamoDB map[] (1 requests, request units map[" + units + "])")
		if m == nil {
			t.Fatalf("the pattern misses units %q", units)
		}
		return costOf(m)
	}
	for _, tt := range []struct {
		units string
		want  string
	}{
		{"GetItem:6", "0.75"}, {"BatchGetItem:3 Query:2 Scan:1", "0.75"}, {"TransactGetItems:6", "0.75"},
		{"UpdateItem:6", "3.75"}, {"PutItem:2 DeleteItem:2 BatchWriteItem:1 TransactWriteItems:1", "3.75"},
		{"GetItem:2 UpdateItem:2", "1.50"},
	} {
		if got := fmt.Sprintf("%.2f", line(tt.units).ddb); got != tt.want {
			t.Errorf("%s: DynamoDB $%s per million, want $%s", tt.units, got, tt.want)
		}
	}
}

// TestCallGoals: the goals table takes the worst type of each figure and says which goals hold.
func TestCallGoals(t *testing.T) {
	lines := []string{
		"echo: 1 state transitions, 1 Lambda invocations inside the state machine, 2 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:2] (4 requests, request units map[BatchGetItem:4 UpdateItem:4])",
		"list_agents: 2 state transitions, 1 Lambda invocations inside the state machine, 2 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:1 UpdateItem:4] (5 requests, request units map[BatchGetItem:2 UpdateItem:4])",
		"ask_user: 1 state transitions, 1 Lambda invocations inside the state machine, 3 outside it, 2 HTTP requests, DynamoDB map[BatchGetItem:1 GetItem:1 TransactWriteItems:2 UpdateItem:1] (5 requests, request units map[BatchGetItem:2 GetItem:1 TransactWriteItems:16 UpdateItem:2])",
		"ask_user/start: 3 state transitions, 3 Lambda invocations inside the state machine, 1 outside it, 0 HTTP requests, DynamoDB map[BatchGetItem:2 TransactWriteItems:2 UpdateItem:2] (6 requests, request units map[BatchGetItem:4 TransactWriteItems:16 UpdateItem:3])",
	}
	var g callGoals
	for _, l := range lines {
		m := budgetLine.FindStringSubmatch(l)
		base, bare := strings.CutSuffix(m[1], "/start")
		g.add(base, bare, costOf(m), m[7])
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
		// list_agents: $50 + 3 Lambdas $0.65 + 2 read units $0.25 + 4 write units $2.50 + 1 HTTP request $1.
		"cost per million calls through POST /tool-calls, the dearest type": {"$54.40", true},
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
