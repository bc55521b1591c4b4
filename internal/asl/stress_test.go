package asl_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"sinew/internal/asl"
)

// TestConcurrentCallbacks answers, stops and times out many parked executions at once; run it
// with -race. Every execution must end, in the status its outcome implies, with no token left.
func TestConcurrentCallbacks(t *testing.T) {
	clock := asl.NewVirtualClock(epoch)
	const n = 120
	lam := &tokenLambda{tokens: make(chan string, n)}
	eng := asl.New(asl.Config{Clock: clock, Lambda: lam})
	m := mustParse(t, parkDef)
	xs := make([]*asl.Execution, n)
	for i := range xs {
		var err error
		if xs[i], err = eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `{}`}); err != nil {
			t.Fatal(err)
		}
	}
	tokens := map[*asl.Execution]string{}
	for range xs {
		<-lam.tokens // each execution's token, matched to it below through its snapshot
	}
	for _, x := range xs {
		waitFor(t, "parking", x.Parked)
		s, ok := x.Snapshot()
		if !ok {
			t.Fatal("no snapshot")
		}
		tokens[x] = s.Task.Token
	}
	var wg sync.WaitGroup
	for i, x := range xs {
		wg.Add(1)
		go func(i int, x *asl.Execution, tok string) {
			defer wg.Done()
			switch i % 4 {
			case 0:
				_ = eng.SendTaskSuccess(tok, `"ok"`)
				_ = eng.SendTaskSuccess(tok, `"twice"`) // the second answer is refused
			case 1:
				_ = eng.SendTaskFailure(tok, "E", "C")
			case 2:
				_ = eng.SendTaskHeartbeat(tok)
				_ = eng.Stop(x.ARN, "", "")
			case 3:
				_ = eng.SendTaskHeartbeat(tok) // then the heartbeat runs out below
			}
		}(i, x, tokens[x])
	}
	wg.Wait()
	clock.Advance(31 * time.Second)
	want := []string{asl.StatusSucceeded, asl.StatusFailed, asl.StatusAborted, asl.StatusFailed}
	for i, x := range xs {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d, err := x.Wait(ctx)
		cancel()
		if err != nil {
			t.Fatalf("execution %d did not end", i)
		}
		if d.Status != want[i%4] {
			t.Errorf("execution %d: %s %s, want %s", i, d.Status, d.Error, want[i%4])
		}
		if i%4 == 3 && d.Error != "States.Timeout" {
			t.Errorf("execution %d: %s, want States.Timeout", i, d.Error)
		}
	}
	if p := eng.PendingTokens(); p != 0 {
		t.Fatalf("%d tokens pending", p)
	}
}
