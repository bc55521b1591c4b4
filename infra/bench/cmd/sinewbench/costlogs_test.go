package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSfnLogBytes: each history event is one record in Step Functions' log shape; without execution
// data its details lose their input, output and parameters and keep the rest.
func TestSfnLogBytes(t *testing.T) {
	ts := time.Date(2026, 12, 6, 6, 14, 54, 123e6, time.UTC)
	tsJSON, _ := json.Marshal(ts)
	ms := "1796537694123"
	if got := time.UnixMilli(1796537694123).UTC(); !got.Equal(ts) {
		t.Fatalf("the test's timestamp is %v", got)
	}
	arn := "arn:aws:states:us-east-1:000000000000:execution:sinew-tool_call:x"
	entered := `{"timestamp":` + string(tsJSON) + `,"type":"TaskStateEntered","id":2,"previousEventId":1,` +
		`"stateEnteredEventDetails":{"name":"Dispatch","input":"{\"a\":1}","inputDetails":{"truncated":false}}}`
	bare := `{"timestamp":` + string(tsJSON) + `,"type":"ExecutionSucceeded","id":9,"previousEventId":8}`
	record := func(id, typ, details, prev string) string {
		return `{"id":"` + id + `","type":"` + typ + `","details":` + details + `,"previous_event_id":"` + prev +
			`","event_timestamp":"` + ms + `","execution_arn":"` + arn + `","redrive_count":"0"}`
	}
	tests := []struct {
		name     string
		events   []string
		withData bool
		want     []string
	}{
		{"without data", []string{entered}, false, []string{record("2", "TaskStateEntered", `{"inputDetails":{"truncated":false},"name":"Dispatch"}`, "1")}},
		{"with data", []string{entered}, true, []string{record("2", "TaskStateEntered", `{"name":"Dispatch","input":"{\"a\":1}","inputDetails":{"truncated":false}}`, "1")}},
		{"no details", []string{bare}, false, []string{record("9", "ExecutionSucceeded", `{}`, "8")}},
		{"two events", []string{entered, bare}, false, []string{
			record("2", "TaskStateEntered", `{"inputDetails":{"truncated":false},"name":"Dispatch"}`, "1"), record("9", "ExecutionSucceeded", `{}`, "8")}},
		{"no history", nil, false, nil},
	}
	for _, tt := range tests {
		var hist []json.RawMessage
		for _, e := range tt.events {
			hist = append(hist, json.RawMessage(e))
		}
		got, err := sfnLogBytes(hist, arn, tt.withData)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if want := len(strings.Join(tt.want, "")); got != want {
			t.Errorf("%s: %d bytes, want %d (%s)", tt.name, got, want, strings.Join(tt.want, "\n"))
		}
	}
	if _, err := sfnLogBytes([]json.RawMessage{json.RawMessage(`{"id":"x"}`)}, arn, false); err == nil {
		t.Error("an event with a string id read without an error")
	}
}

// TestLambdaLogBytes pins the two records' shapes: their size moves with the time's and memory's
// digits and with the tracing member.
func TestLambdaLogBytes(t *testing.T) {
	start := `{"time":"2026-12-06T06:14:54.123Z","type":"platform.start","record":{"requestId":"8f5d2a6e-3b1c-4c8e-9a7f-2d4b6c8e0a1f","version":"$LATEST"}}`
	report := `{"time":"2026-12-06T06:14:54.135Z","type":"platform.report","record":{"requestId":"8f5d2a6e-3b1c-4c8e-9a7f-2d4b6c8e0a1f",` +
		`"metrics":{"durationMs":12.345,"billedDurationMs":13,"memorySizeMB":512,"maxMemoryUsedMB":64},"status":"success"}}`
	tracing := len(`,"tracing":` + exampleTracing)
	for _, tt := range []struct {
		mem    int
		ms     float64
		traced bool
		want   int
	}{
		{512, 12.345, false, len(start) + len(report)},
		{512, 12.345, true, len(start) + len(report) + 2*tracing},
		{1536, 12.345, false, len(start) + len(report) + 1},            // a fourth digit of memory
		{512, 112.345, false, len(start) + len(report) + 2},            // a third digit of time, twice
		{256, 0.5, false, len(start) + len(report) - 1 - 1},            // one digit fewer of time, of billed time
		{128, 1.0, true, len(start) + len(report) - 1 - 1 + 2*tracing}, // the same, traced
	} {
		if got := lambdaLogBytes(tt.mem, tt.ms, tt.traced); got != tt.want {
			t.Errorf("%d MB, %v ms, traced %v: %d bytes, want %d", tt.mem, tt.ms, tt.traced, got, tt.want)
		}
	}
}

// TestAccessLogBytes: the stage's format with each $context variable given a value of its real
// length, "-" for one the model has no value for (as API Gateway writes an empty one).
func TestAccessLogBytes(t *testing.T) {
	for _, tt := range []struct {
		format string
		ms     float64
		want   string
	}{
		{`{"id":"$context.requestId","ms":$context.responseLatency}`, 10.2, `{"id":"JZ3f1hbyIAMEYpQ=","ms":11}`},
		{`{"e":"$context.authorizer.error","x":"$context.somethingElse"}`, 1, `{"e":"-","x":"-"}`},
		{`{"dev":"$context.authorizer.claims.sub","route":"$context.routeKey"}`, 1, `{"dev":"` + exampleRequestID + `","route":"$default"}`},
		{`$context.httpMethod $context.path $context.status.`, 1, `POST /tool-calls 202.`},
		{`no variables`, 1, `no variables`},
	} {
		if got := accessLogBytes(tt.format, tt.ms); got != len(tt.want) {
			t.Errorf("%s: %d bytes, want %d (%s)", tt.format, got, len(tt.want), tt.want)
		}
	}
	// The stack's own format, as infra/cdk writes it.
	if n := accessLogBytes(assumedFacts("").accessLog, 35); n < 200 || n > 400 {
		t.Errorf("the stack's access log line is %d bytes, outside 200-400", n)
	}
}
