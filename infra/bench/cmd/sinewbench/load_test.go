package main

import "testing"

func TestLoadHeadlineForm(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"- Local mode load: 1000 tool_calls in 6.9 s, 143.9 executions/s (p50 1.1 s, p99 3.6 s), nothing lost; DynamoDB Local ceiling 316 executions/s", true},
		{"- Local mode load: 100 tool_calls in 2.0 s, 50.0 executions/s (p50 0.4 s, p99 1.2 s), SOME LOST OR WRONG (see the errors above); DynamoDB Local ceiling 90 executions/s", true},
		{"- Local mode load: 1000 tool_calls in 6.9 s, 143.9 executions/s (p50 1.1 s, p99 3.6 s), nothing lost; DynamoDB Local ceiling 316 executions/s; per CPU-second of DynamoDB Local 82% of the ceiling's", false},
		{"- Local mode load: 1000 tool_calls, 143.9 executions/s", false},
	}
	for _, tt := range tests {
		if got := loadHeadline.MatchString(tt.line); got != tt.want {
			t.Errorf("loadHeadline matches %q = %v, want %v", tt.line, got, tt.want)
		}
	}
}
