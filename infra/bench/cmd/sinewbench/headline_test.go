package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The headline lines other tools read, in the form they read them.
var (
	taskHeadlineForm = regexp.MustCompile(`^- Cost per 1M Julep task executions \((.+)\): \$(\d+\.\d{2}) \((Express|Standard), (\d+) transitions, (\d+) DynamoDB requests\)$`)
	costHeadlineForm = regexp.MustCompile(`^- Cost per 1M (\S.*) \((.+)\) calls: \$(\d+\.\d{2}) \((Express|Standard), (\d+) transitions, (\d+) DynamoDB requests\)$`)
	idleHeadline     = regexp.MustCompile(`^- Idle stack: \$(\d+\.\d{2}) per month \((.+)\)$`)
)

// TestHeadlineForm: the cost part's headline lines keep the form other tools parse, its breakdown
// lines are not mistaken for them, and the committed BENCHMARKS.md's lines have the form too.
func TestHeadlineForm(t *testing.T) {
	r := newReport(options{})
	calls := []callInputs{
		mustLine(t, "echo: 1 state transitions, 1 Lambda invocations inside the state machine, 2 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:2] (4 requests, request units map[BatchGetItem:4 UpdateItem:4])"),
		mustLine(t, "ask_user: 1 state transitions, 1 Lambda invocations inside the state machine, 3 outside it, 2 HTTP requests, DynamoDB map[BatchGetItem:1 GetItem:1 TransactWriteItems:2 UpdateItem:1] (5 requests, request units map[BatchGetItem:2 GetItem:1 TransactWriteItems:16 UpdateItem:2])"),
		mustLine(t, "echo/express: 2 state transitions, 1 Lambda invocations inside the state machine, 1 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:2 Query:1 UpdateItem:2] (5 requests, request units map[BatchGetItem:4 Query:1 UpdateItem:4])"),
		mustLine(t, "echo/start: 1 state transitions, 2 Lambda invocations inside the state machine, 1 outside it, 0 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:2] (4 requests, request units map[BatchGetItem:4 UpdateItem:4])"),
	}
	costTable(r, calls, testFacts())
	var heads, breakdowns int
	for _, h := range r.headlines {
		switch line := "- " + h; {
		case strings.HasPrefix(h, "Cost per 1M"):
			heads++
			if m := costHeadlineForm.FindStringSubmatch(line); m == nil {
				t.Errorf("headline %q lost its form", line)
			}
		case strings.HasPrefix(h, "Cost breakdown per 1M"):
			breakdowns++
			if costHeadlineForm.MatchString(line) || strings.Contains(h, "calls: $") {
				t.Errorf("breakdown %q reads as a headline", line)
			}
			for _, svc := range []string{"Step Functions $", "Lambda $", "DynamoDB $", "API Gateway $", "EventBridge $", "CloudWatch Logs $", "X-Ray $", "KMS $"} {
				if !strings.Contains(h, svc) {
					t.Errorf("breakdown %q names no %s", h, svc)
				}
			}
		}
	}
	// One of each per type and state machine started by POST /tool-calls; the bare start is in
	// the tables only.
	if heads != 3 || breakdowns != 3 {
		t.Errorf("%d headlines and %d breakdowns, want 3 and 3: %q", heads, breakdowns, r.headlines)
	}

	raw, err := os.ReadFile("../../BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "- Cost per 1M Julep task executions") {
			if !taskHeadlineForm.MatchString(line) {
				t.Errorf("BENCHMARKS.md: %q lost the task headline's form", line)
			}
			continue
		}
		if strings.HasPrefix(line, "- Cost per 1M") {
			n++
			if !costHeadlineForm.MatchString(line) {
				t.Errorf("BENCHMARKS.md: %q lost the headline's form", line)
			}
		}
		if strings.HasPrefix(line, "- Idle stack:") && !idleHeadline.MatchString(line) {
			t.Errorf("BENCHMARKS.md: %q lost the idle line's form", line)
		}
	}
	if n < 4 {
		t.Errorf("BENCHMARKS.md has %d cost headlines, want one per type (4)", n)
	}
}

// TestMeasure: a call's invocations are matched across runs by their place among the function's
// own (prepare runs twice in a bare function call), and the medians taken.
func TestMeasure(t *testing.T) {
	run := func(ms ...float64) measuredCall {
		return measuredCall{Call: "ask_user/start", AppLogBytes: ms[0] * 10, CustomEvents: 1, Invocations: []costRun{
			{"prepare", ms[0]}, {"prepare", ms[1]}, {"function", ms[2]}, {"settle", ms[3]}}}
	}
	files := []measuredCall{run(2, 5, 12, 16), run(4, 9, 10, 12), run(3, 30, 11, 14)}
	f := testFacts()
	f.sfnLevel = "OFF"
	var c callInputs
	if err := c.measure(files, f); err != nil {
		t.Fatal(err)
	}
	want := []costRun{{"prepare", 3}, {"prepare", 9}, {"function", 11}, {"settle", 14}}
	if got, _ := json.Marshal(c.runs); string(got) != mustJSON(t, want) || c.samples != 3 || c.appLogBytes != 30 || c.customEvents != 1 || c.sfnLogBytes != 0 {
		t.Errorf("measured %+v", c)
	}
	// At level ALL the history's records are counted.
	f.sfnLevel = "ALL"
	ts, _ := json.Marshal(time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC))
	files[0].History = []json.RawMessage{json.RawMessage(`{"timestamp":` + string(ts) + `,"type":"ExecutionSucceeded","id":3,"previousEventId":2}`)}
	files[0].ExecutionArn = "arn"
	if err := c.measure(files[:1], f); err != nil || c.sfnLogBytes == 0 || c.historyEvents != 1 {
		t.Errorf("at level ALL: %d bytes of %d events (%v)", c.sfnLogBytes, c.historyEvents, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestByName: the runs of the test give one call per name, and must agree on its counts.
func TestByName(t *testing.T) {
	a := "    routes_test.go:172: echo: 1 state transitions, 1 Lambda invocations inside the state machine, 2 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:2 UpdateItem:2] (4 requests, request units map[BatchGetItem:4 UpdateItem:4])\n"
	b := strings.Replace(a, "echo:", "get_item:", 1)
	other := strings.Replace(a, "UpdateItem:4]", "UpdateItem:6]", 1)
	if calls, err := byName([]byte(a + other + other)); err != nil || calls[0].units != "BatchGetItem:4 UpdateItem:6" ||
		fmt.Sprint(calls[0].otherUnits) != "[BatchGetItem:4 UpdateItem:4]" {
		t.Errorf("units that differ: %+v (%v), want the median run's and the other's named", calls, err)
	}
	for _, tt := range []struct {
		name, out string
		want      int
		fails     bool
	}{
		{"two runs of two calls", a + b + a + b, 2, false},
		{"runs whose units differ: the median's", a + other + other, 1, false},
		{"runs that disagree on the requests", a + strings.Replace(a, "(4 requests", "(5 requests", 1), 0, true},
		{"no lines", "PASS\n", 0, true},
	} {
		calls, err := byName([]byte(tt.out))
		if (err != nil) != tt.fails || len(calls) != tt.want {
			t.Errorf("%s: %d calls, error %v", tt.name, len(calls), err)
		}
	}
}

// TestTaskHeadlineForm: the tasks part's headline has its form, with the task's shape, its
// transitions and DynamoDB requests, and is not read as a call's.
func TestTaskHeadlineForm(t *testing.T) {
	r := newReport(options{})
	c := mustLine(t, "task/evaluate+tool_call+return: 9 state transitions, 3 Lambda invocations inside the state machine, 3 outside it, 1 HTTP requests, DynamoDB map[BatchGetItem:2 GetItem:1 PutItem:1 Query:2 UpdateItem:5] (11 requests, request units map[BatchGetItem:7 GetItem:1 PutItem:3 Query:1 UpdateItem:12])")
	taskTables(r, []callInputs{c}, testFacts())
	if len(r.headlines) != 1 {
		t.Fatalf("headlines %q, want one", r.headlines)
	}
	line := "- " + r.headlines[0]
	m := taskHeadlineForm.FindStringSubmatch(line)
	if m == nil || m[1] != "evaluate + tool_call (integration) + return" || m[3] != "Standard" || m[4] != "9" || m[5] != "11" || costHeadlineForm.MatchString(line) {
		t.Errorf("task headline %q", line)
	}
	// 9 transitions at $0.025 per 1,000; 9 read and 15 write request units at DynamoDB's prices.
	if b := c.cost(testFacts()); b.sfn < 224.99 || b.sfn > 225.01 || b.ddb < 10.499 || b.ddb > 10.501 {
		t.Errorf("cost %+v", b)
	}
}
