package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// Latency of local mode's Step Functions, through the real process and the Go SDK:
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -run '^$' -bench . -benchtime 200x ./infra/local/
//
// StartToResult: StartExecution until DescribeExecution reports SUCCEEDED, for a Standard machine
// of a Pass and a Lambda task (journaled: its start is written before it runs and durable before
// StartExecution answers, and a short execution's end, which the task's journal entry joins,
// shares that fdatasync), with 1, 10 and 100 executions in flight. TaskSuccessToCompletion:
// SendTaskSuccess until DescribeExecution reports SUCCEEDED. Completion is seen by polling
// DescribeExecution every millisecond, which the figures include.

const benchStartDef = `{"StartAt":"P","States":{"P":{"Type":"Pass","Next":"L"},
 "L":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"sinew-test-echo","Payload.$":"$"},"OutputPath":"$.Payload","End":true}}}`

const benchTokenDef = `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
 "Parameters":{"FunctionName":"sinew-test-echo","Payload":{"token.$":"$$.Task.Token"}},"End":true}}}`

func benchMachine(b *testing.B, c *sfn.Client, name, def string) *string {
	b.Helper()
	sm, err := c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String(name), RoleArn: aws.String(role), Definition: aws.String(def)})
	if err != nil {
		b.Fatal(err)
	}
	return sm.StateMachineArn
}

func waitSucceeded(b *testing.B, c *sfn.Client, arn *string) {
	for {
		d, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: arn})
		if err != nil {
			b.Error(err)
			return
		}
		switch d.Status {
		case types.ExecutionStatusRunning:
			time.Sleep(time.Millisecond)
		case types.ExecutionStatusSucceeded:
			return
		default:
			b.Errorf("%s: %s %s", aws.ToString(arn), d.Status, aws.ToString(d.Cause))
			return
		}
	}
}

func report(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

func BenchmarkStartToResult(b *testing.B) {
	p := startLocal(b, b.TempDir())
	c := p.sfn()
	sm := benchMachine(b, c, "bench-start", benchStartDef)
	for _, conc := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("concurrent=%d", conc), func(b *testing.B) {
			var mu sync.Mutex
			var lat []time.Duration
			next := make(chan int)
			var wg sync.WaitGroup
			for range conc {
				wg.Go(func() {
					for range next {
						t0 := time.Now()
						x, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: sm, Input: aws.String(`{"n":1}`)})
						if err != nil {
							b.Error(err)
							continue
						}
						waitSucceeded(b, c, x.ExecutionArn)
						mu.Lock()
						lat = append(lat, time.Since(t0))
						mu.Unlock()
					}
				})
			}
			b.ResetTimer()
			for i := range b.N {
				next <- i
			}
			close(next)
			wg.Wait()
			b.StopTimer()
			report(b, lat)
		})
	}
	p.stop(b)
}

func BenchmarkTaskSuccessToCompletion(b *testing.B) {
	p := startLocal(b, b.TempDir())
	c := p.sfn()
	sm := benchMachine(b, c, "bench-token", benchTokenDef)
	ctx := context.Background()
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm})
		if err != nil {
			b.Fatal(err)
		}
		tok := ""
		for tok == "" {
			h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn})
			if err != nil {
				b.Fatal(err)
			}
			var scheduled string
			submitted := false
			for _, e := range h.Events {
				if e.TaskScheduledEventDetails != nil {
					scheduled = aws.ToString(e.TaskScheduledEventDetails.Parameters)
				}
				submitted = submitted || e.Type == types.HistoryEventTypeTaskSubmitted
			}
			if submitted {
				var params struct {
					Payload struct {
						Token string `json:"token"`
					} `json:"Payload"`
				}
				if err := json.Unmarshal([]byte(scheduled), &params); err != nil {
					b.Fatal(err)
				}
				tok = params.Payload.Token
			} else {
				time.Sleep(time.Millisecond)
			}
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"ok":true}`)}); err != nil {
			b.Fatal(err)
		}
		waitSucceeded(b, c, x.ExecutionArn)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	report(b, lat)
	p.stop(b)
}

// BenchmarkToolCallToResult: a server-side call (the dummy echo integration) through local mode's
// HTTP API, from POST /tool-calls until the caller holds the result: answered in the request (sync:
// tool_call_express, 200 with the result) beside POST /tool-calls with Prefer: respond-async and
// GET /executions/{id} until it has ended (poll: tool_call; polled as the MCP server polls, 5 ms
// doubling to 200 ms), one call in flight, in the same process.
func BenchmarkToolCallToResult(b *testing.B) {
	p := startLocal(b, b.TempDir())
	c := newClient(b, p, "dev-bench")
	agent := c.must(b, 201, "POST", "/agents", map[string]any{"name": "bench", "about": "latency"})["id"].(string)
	c.must(b, 201, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "echo", "type": "integration",
		"integration": map[string]any{"provider": "dummy", "method": "echo"}})
	body := map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{"greeting": "bench"}}
	for _, mode := range []string{"sync", "poll"} {
		b.Run(mode, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if mode == "sync" {
					if x := c.must(b, 200, "POST", "/tool-calls", body); x["status"] != "succeeded" {
						b.Fatalf("POST /tool-calls = %v", x)
					}
				} else {
					pollToResult(b, c, body)
				}
				lat = append(lat, time.Since(t0))
			}
			report(b, lat)
		})
	}
	p.stop(b)
}

// pollToResult is the call by its execution: a 202, then GET until it has ended.
func pollToResult(b *testing.B, c *client, body map[string]any) {
	code, st, raw := c.do(b, "POST", "/tool-calls", body, "Prefer", "respond-async")
	if code != 202 {
		b.Fatalf("POST /tool-calls (respond-async) = %d %s", code, raw)
	}
	id, _ := st["execution_id"].(string)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		switch x := c.must(b, 200, "GET", "/executions/"+id, nil); x["status"] {
		case "succeeded":
			return
		case "running":
		default:
			b.Fatalf("execution %s: %v", id, x)
		}
		time.Sleep(delay)
	}
}
