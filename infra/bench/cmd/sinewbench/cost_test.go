package main

import (
	"fmt"
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
