package main

import "testing"

// The chat headline keeps the form other tools read; the budget test's lines are read whole.
func TestChatHeadlineForm(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{chatHeadlineText(5, 10), true},
		{"Chat turn: 5 DynamoDB requests without a tool call, 10 with one integration call", true},
		{"Chat turn: 5 DynamoDB requests without a tool call, 10 with one integration call; 12 ms", false},
		{"Chat turn: 5 DynamoDB requests, 10 with one integration call", false},
	}
	for _, tt := range tests {
		if got := chatHeadline.MatchString(tt.line); got != tt.want {
			t.Errorf("chatHeadline matches %q = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestChatBudgetLine(t *testing.T) {
	out := "    chat_budget_test.go:53: chat turn, one integration call, Idempotency-Key: DynamoDB map[BatchGetItem:2 PutItem:2] (4 requests)\n" +
		"    chat_budget_test.go:53: chat turn, no tool call: DynamoDB map[UpdateItem:1] (1 requests)\n"
	tests := []struct {
		name, ops, total string
	}{
		{"one integration call, Idempotency-Key", "BatchGetItem:2 PutItem:2", "4"},
		{"no tool call", "UpdateItem:1", "1"},
	}
	got := chatBudgetLine.FindAllStringSubmatch(out, -1)
	if len(got) != len(tests) {
		t.Fatalf("%d lines read, want %d", len(got), len(tests))
	}
	for i, tt := range tests {
		if got[i][1] != tt.name || got[i][2] != tt.ops || got[i][3] != tt.total {
			t.Errorf("line %d read as %q, want %q %q %q", i, got[i][1:], tt.name, tt.ops, tt.total)
		}
	}
}
