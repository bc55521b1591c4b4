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
		{"echo: 2 state transitions, 1 Lambda invocations inside the state machine, 2 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:2] (4 requests)",
			"53.15"},
		{"ask_user: 2 state transitions, 1 Lambda invocations inside the state machine, 3 outside it, 2 HTTP requests, DynamoDB map[BatchGetItem:1 TransactWriteItems:2 UpdateItem:2] (5 requests)",
			"56.74"},
		{"echo/start: 4 state transitions, 2 Lambda invocations inside the state machine, 1 outside it, 0 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:3] (5 requests)",
			"102.78"},
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
