package asl_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
)

// passChoice10 is ten states: Pass and Choice alternating, with paths, parameters and a variable.
func passChoice10() string {
	var b strings.Builder
	b.WriteString(`{"StartAt":"P0","States":{`)
	for i := 0; i < 10; i += 2 {
		fmt.Fprintf(&b, `"P%d":{"Type":"Pass","Parameters":{"n.$":"$.n","i":%d,"tag.$":"States.Format('s{}', $.n)"},"ResultPath":"$.last","Assign":{"seen.$":"$.i"},"Next":"C%d"},`, i, i, i+1)
		next := fmt.Sprintf("P%d", i+2)
		if i+2 >= 10 {
			next = "Done"
		}
		fmt.Fprintf(&b, `"C%d":{"Type":"Choice","Choices":[{"And":[{"Variable":"$.n","NumericGreaterThanEquals":0},{"Variable":"$.last.tag","StringMatches":"s*"}],"Next":"%s"}],"Default":"Fail"},`, i+1, next)
	}
	b.WriteString(`"Done":{"Type":"Succeed"},"Fail":{"Type":"Fail","Error":"NoMatch"}}}`)
	return b.String()
}

func BenchmarkPassChoice10(b *testing.B) {
	m, err := asl.Parse([]byte(passChoice10()), asl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x, err := eng.Start(ctx, asl.StartInput{Machine: m, Input: `{"n":3}`})
		if err != nil {
			b.Fatal(err)
		}
		if d, _ := x.Wait(ctx); d.Status != asl.StatusSucceeded {
			b.Fatalf("%+v", d)
		}
		eng.Forget(x.ARN) // retention is a separate policy; measure the run itself
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "executions/s")
}

func BenchmarkMap1000(b *testing.B) {
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemSelector":{"v.$":"$$.Map.Item.Value","i.$":"$$.Map.Item.Index"},
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"INLINE"},"StartAt":"I","States":{"I":{"Type":"Pass","Parameters":{"d.$":"$.v"},"End":true}}},"End":true}}}`
	m, err := asl.Parse([]byte(def), asl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	items := make([]string, 1000)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	input := "[" + strings.Join(items, ",") + "]"
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x, err := eng.Start(ctx, asl.StartInput{Machine: m, Input: input})
		if err != nil {
			b.Fatal(err)
		}
		if d, _ := x.Wait(ctx); d.Status != asl.StatusSucceeded {
			b.Fatalf("%+v", d)
		}
		eng.Forget(x.ARN) // retention is a separate policy; measure the run itself
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "executions/s")
}

// BenchmarkWaitingExecutions parks b.N executions on task tokens and reports the memory each one
// holds while it waits (heap plus goroutine stacks, after a GC).
func BenchmarkWaitingExecutions(b *testing.B) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","HeartbeatSeconds":3600,"TimeoutSeconds":86400,
	  "Parameters":{"QueueUrl":"q","MessageBody":{"Token.$":"$$.Task.Token","call.$":"$.call"}},"End":true}}}`
	m, err := asl.Parse([]byte(def), asl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	sent := asl.IntegrationFunc(func(context.Context, *asl.TaskCall) (any, error) {
		return map[string]any{"MessageId": "m"}, nil
	})
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Integrations: map[string]asl.Integration{"sqs:sendMessage": sent}})
	ctx := context.Background()
	input := `{"call":{"id":"call_0123456789abcdefghijklmn","type":"function","function":{"name":"get_weather","arguments":{"city":"Lisbon"}}}}`
	beforeHeap, beforeStack := memSplit()
	b.ResetTimer()
	xs := make([]*asl.Execution, b.N)
	for i := 0; i < b.N; i++ {
		if xs[i], err = eng.Start(ctx, asl.StartInput{Machine: m, Input: input}); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for eng.PendingTokens() < b.N || !allSubmitted(xs) {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d executions parked", eng.PendingTokens(), b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	afterHeap, afterStack := memSplit()
	heap, stack := float64(afterHeap-beforeHeap)/float64(b.N), float64(afterStack-beforeStack)/float64(b.N)
	b.ReportMetric(heap+stack, "bytes/waiting-execution")
	b.ReportMetric(heap, "heap-bytes/waiting-execution")
	b.ReportMetric(stack, "stack-bytes/waiting-execution")
	for _, x := range xs {
		_ = eng.Stop(x.ARN, "", "")
	}
}

func allSubmitted(xs []*asl.Execution) bool {
	for _, x := range xs {
		h := x.History()
		if len(h) == 0 || h[len(h)-1].Type != "TaskSubmitted" {
			return false
		}
	}
	return true
}

func memSplit() (heap, stack uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse
}
