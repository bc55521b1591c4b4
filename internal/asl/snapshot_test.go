package asl_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
)

const parkDef = `{"StartAt":"Set","States":{
  "Set":{"Type":"Pass","Assign":{"who":"client"},"Next":"T"},
  "T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","HeartbeatSeconds":30,"TimeoutSeconds":300,
    "Parameters":{"FunctionName":"f","Payload":{"Token.$":"$$.Task.Token"}},"ResultPath":"$.answer","Next":"Done"},
  "Done":{"Type":"Pass","Parameters":{"who.$":"$who","answer.$":"$.answer"},"End":true}}}`

// TestSnapshotRestore parks an execution, carries its snapshot through JSON into a second engine
// (as after a restart), and answers the old token there.
func TestSnapshotRestore(t *testing.T) {
	clock := asl.NewVirtualClock(epoch)
	lam := &tokenLambda{tokens: make(chan string, 1)}
	m := mustParse(t, parkDef)
	first := asl.New(asl.Config{Clock: clock, Lambda: lam})
	x, err := first.Start(context.Background(), asl.StartInput{Machine: m, Input: `{"q":1}`, Name: "e1"})
	if err != nil {
		t.Fatal(err)
	}
	tok := <-lam.tokens
	waitFor(t, "the execution to park", x.Parked)
	snap, ok := x.Snapshot()
	if !ok {
		t.Fatal("no snapshot of a parked execution")
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back asl.Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}

	clock.Advance(20 * time.Second) // downtime, within the heartbeat
	second := asl.New(asl.Config{Clock: clock, Lambda: lam})
	y, err := second.Restore(m, &back)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.SendTaskSuccess(tok, `{"ok":true}`); err != nil {
		t.Fatal(err)
	}
	d, err := y.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != asl.StatusSucceeded || d.Output != `{"answer":{"ok":true},"who":"client"}` {
		t.Fatalf("%+v", d)
	}
	h := y.History()
	for i, e := range h {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i, e.ID)
		}
	}
	if got := strings.Join(types(y), ","); got != "ExecutionStarted,PassStateEntered,PassStateExited,TaskStateEntered,TaskScheduled,TaskStarted,TaskSubmitted,TaskSucceeded,TaskStateExited,PassStateEntered,PassStateExited,ExecutionSucceeded" {
		t.Fatalf("history %s", got)
	}
}

func TestRestoredTimersKeepTheirDeadlines(t *testing.T) {
	clock := asl.NewVirtualClock(epoch)
	lam := &tokenLambda{tokens: make(chan string, 1)}
	m := mustParse(t, parkDef)
	first := asl.New(asl.Config{Clock: clock, Lambda: lam})
	x, _ := first.Start(context.Background(), asl.StartInput{Machine: m, Input: `{}`})
	<-lam.tokens
	waitFor(t, "the execution to park", x.Parked)
	snap, _ := x.Snapshot()
	second := asl.New(asl.Config{Clock: clock})
	y, err := second.Restore(m, snap)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(31 * time.Second) // past the heartbeat armed before the "restart"
	d, _ := y.Wait(context.Background())
	if d.Error != "States.Timeout" {
		t.Fatalf("%+v", d)
	}
}

// TestParkedExecutionsHoldNoGoroutines: waiting on a token costs data, not a goroutine.
func TestParkedExecutionsHoldNoGoroutines(t *testing.T) {
	lam := &tokenLambda{tokens: make(chan string, 200)}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: lam})
	m := mustParse(t, parkDef)
	before := runtime.NumGoroutine()
	var xs []*asl.Execution
	for i := 0; i < 200; i++ {
		x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `{}`})
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	for _, x := range xs {
		waitFor(t, "parking", x.Parked)
	}
	if n := runtime.NumGoroutine() - before; n > 20 {
		t.Fatalf("%d goroutines for 200 parked executions", n)
	}
	for i := 0; i < 200; i++ {
		if err := eng.SendTaskSuccess(<-lam.tokens, `1`); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range xs {
		if d, _ := x.Wait(context.Background()); d.Status != asl.StatusSucceeded {
			t.Fatalf("%+v", d)
		}
	}
}

const waitDef = `{"StartAt":"A","TimeoutSeconds":86400,"States":{
  "A":{"Type":"Pass","Assign":{"n":1},"Next":"W"},
  "W":{"Type":"Wait","Seconds":3600,"OutputPath":"$.keep","Next":"B"},
  "B":{"Type":"Pass","Parameters":{"n.$":"$n","in.$":"$"},"End":true}}}`

func TestWaitParksAndRestores(t *testing.T) {
	clock := asl.NewVirtualClock(epoch)
	clock.ManualWaits = true
	m := mustParse(t, waitDef)
	first := asl.New(asl.Config{Clock: clock})
	x, err := first.Start(context.Background(), asl.StartInput{Machine: m, Input: `{"keep":{"k":true}}`})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the wait to park", x.Parked)
	snap, ok := x.Snapshot()
	if !ok || snap.Wait == nil || !snap.Wait.Until.Equal(epoch.Add(time.Hour)) {
		t.Fatalf("snapshot %+v", snap)
	}
	b, _ := json.Marshal(snap)
	var back asl.Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	second := asl.New(asl.Config{Clock: clock})
	y, err := second.Restore(m, &back)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	d, _ := y.Wait(context.Background())
	if d.Status != asl.StatusSucceeded || d.Output != `{"in":{"k":true},"n":1}` {
		t.Fatalf("%+v", d)
	}
	if got := strings.Join(types(y), ","); got != "ExecutionStarted,PassStateEntered,PassStateExited,WaitStateEntered,WaitStateExited,PassStateEntered,PassStateExited,ExecutionSucceeded" {
		t.Fatalf("history %s", got)
	}
}

func TestParkedWaitStopsAndTimesOut(t *testing.T) {
	clock := asl.NewVirtualClock(epoch)
	clock.ManualWaits = true
	m := mustParse(t, waitDef)
	eng := asl.New(asl.Config{Clock: clock})
	x, _ := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `{}`})
	waitFor(t, "the wait to park", x.Parked)
	if err := eng.Stop(x.ARN, "Stopped", ""); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(types(x), ","); got != "ExecutionStarted,PassStateEntered,PassStateExited,WaitStateEntered,WaitStateAborted,ExecutionAborted" {
		t.Fatalf("history %s", got)
	}
	long := mustParse(t, strings.Replace(waitDef, `"Seconds":3600`, `"Seconds":172800`, 1))
	y, _ := eng.Start(context.Background(), asl.StartInput{Machine: long, Input: `{}`})
	waitFor(t, "the wait to park", y.Parked)
	clock.Advance(24 * time.Hour)
	d, _ := y.Wait(context.Background())
	if d.Status != asl.StatusTimedOut {
		t.Fatalf("%+v", d)
	}
}
