package durable

import (
	"context"
	"testing"
	"time"

	"sinew/internal/asl"
)

// frozen is the clock of a "crashed" process: a virtual clock that no one advances, so the timers
// it armed never fire and the abandoned engine does nothing more.
func frozen(at time.Time) *asl.VirtualClock {
	c := asl.NewVirtualClock(at)
	c.ManualWaits = true
	return c
}

// bootWith is boot with a clock, and the execution's record written as sfnapi writes it (which
// opens its journal).
func bootWith(t *testing.T, st *Store, inv asl.LambdaInvoker, m *asl.Machine, clock asl.Clock) (*Recorder, *asl.Engine, *asl.Execution) {
	t.Helper()
	if err := st.PutExecution(Execution{Arn: execArn, MachineArn: "m", Name: "x1", Input: `{"n":1}`, Status: asl.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(st, inv, clock, nil)
	eng := asl.New(asl.Config{Lambda: rec, Clock: rec})
	rec.SetDeliver(func(tok string, o Outcome) error {
		if o.Success {
			return eng.SendTaskSuccess(tok, o.Output)
		}
		return eng.SendTaskFailure(tok, o.Error, o.Cause)
	})
	if err := rec.Begin(execArn); err != nil {
		t.Fatal(err)
	}
	x, err := eng.Start(WithExecution(context.Background(), execArn), asl.StartInput{Machine: m,
		StateMachineArn: "arn:aws:states:us-east-1:000000000000:stateMachine:m", Name: "x1", Input: `{"n":1}`})
	if err != nil {
		t.Fatal(err)
	}
	return rec, eng, x
}

func waitParked(t *testing.T, x *asl.Execution) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a guard against a hang, not a bound
	for !x.Parked() {
		if time.Now().After(deadline) {
			t.Fatalf("the execution did not park: %+v", x.Describe())
		}
		time.Sleep(time.Millisecond)
	}
}

func ended(x *asl.Execution) bool {
	select {
	case <-x.Done():
		return true
	default:
		return false
	}
}

// A relative Wait (Seconds and SecondsPath) interrupted by a crash ends at the deadline it got
// when it was entered, not a full wait after the restart.
func TestReplayResumesWaitRemainder(t *testing.T) {
	for _, tc := range []struct{ name, wait string }{
		{"Seconds", `"Seconds":2`},
		{"SecondsPath", `"SecondsPath":"$.s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			m := parse(t, `{"StartAt":"P","States":{
				"P":{"Type":"Pass","Result":{"s":2},"Next":"W"},
				"W":{"Type":"Wait",`+tc.wait+`,"Next":"A"},
				"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"after","Payload":{}},"End":true}}}`)
			inv := newCounting()
			t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			_, _, x1 := bootWith(t, st, inv, m, frozen(t0))
			waitParked(t, x1)

			// The restart comes 1.5 s later: 0.5 s of the wait are left.
			c2 := frozen(t0.Add(1500 * time.Millisecond))
			_, _, x2 := bootWith(t, st, inv, m, c2)
			waitParked(t, x2)
			c2.Advance(499 * time.Millisecond)
			if c2.Pending() == 0 || ended(x2) {
				t.Fatal("the wait ended before its first deadline")
			}
			c2.Advance(time.Millisecond)
			if c2.Pending() != 0 {
				t.Fatal("the wait did not end at its first deadline (it started over after the restart)")
			}
			if d := wait(t, x2); d.Status != asl.StatusSucceeded {
				t.Errorf("status %s (%s)", d.Status, d.Cause)
			}
			if got := inv.count("after"); got != 1 {
				t.Errorf("after ran %d times, want 1", got)
			}
		})
	}
}

// A task's TimeoutSeconds, armed before a crash, fires at its first deadline after the restart.
func TestReplayKeepsTaskTimeoutDeadline(t *testing.T) {
	st := openStore(t)
	m := parse(t, `{"StartAt":"T","States":{
		"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","TimeoutSeconds":10,
		     "Parameters":{"FunctionName":"callback","Payload":{"token.$":"$$.Task.Token"}},"End":true}}}`)
	inv := newCounting()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rec1, _, x1 := bootWith(t, st, inv, m, frozen(t0))
	<-inv.tokens
	waitParked(t, x1)
	if err := rec1.Flush(); err != nil { // what the background writer does within moments
		t.Fatal(err)
	}

	c2 := frozen(t0.Add(8 * time.Second))
	_, _, x2 := bootWith(t, st, inv, m, c2)
	waitParked(t, x2)
	c2.Advance(2*time.Second - time.Millisecond)
	if ended(x2) {
		t.Fatal("the task timed out before its deadline")
	}
	c2.Advance(time.Millisecond)
	if c2.Pending() != 0 {
		t.Fatal("the timer did not fire at its first deadline (it was re-armed in full after the restart)")
	}
	d := wait(t, x2)
	if d.Status != asl.StatusFailed || d.Error != asl.ErrTimeout {
		t.Errorf("got %s %s, want FAILED %s at the first deadline", d.Status, d.Error, asl.ErrTimeout)
	}
	if got := inv.count("callback"); got != 1 {
		t.Errorf("callback ran %d times, want 1", got)
	}
}

// A heartbeat deadline renewed before a crash is the one honoured after it.
func TestReplayKeepsRenewedHeartbeat(t *testing.T) {
	st := openStore(t)
	m := parse(t, `{"StartAt":"T","States":{
		"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","HeartbeatSeconds":10,
		     "Parameters":{"FunctionName":"callback","Payload":{"token.$":"$$.Task.Token"}},"End":true}}}`)
	inv := newCounting()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c1 := frozen(t0)
	rec1, eng1, x1 := bootWith(t, st, inv, m, c1)
	tok := <-inv.tokens
	waitParked(t, x1)
	c1.Advance(6 * time.Second)
	if err := eng1.SendTaskHeartbeat(tok); err != nil { // now due at t0+16s
		t.Fatal(err)
	}
	if err := rec1.Flush(); err != nil {
		t.Fatal(err)
	}

	c2 := frozen(t0.Add(12 * time.Second))
	_, _, x2 := bootWith(t, st, inv, m, c2)
	waitParked(t, x2)
	c2.Advance(4*time.Second - time.Millisecond)
	if ended(x2) {
		t.Fatal("the heartbeat timed out before its renewed deadline")
	}
	c2.Advance(time.Millisecond)
	if c2.Pending() != 0 {
		t.Fatal("the timer did not fire at its first deadline (it was re-armed in full after the restart)")
	}
	d := wait(t, x2)
	if d.Status != asl.StatusFailed || d.Error != asl.ErrTimeout {
		t.Errorf("got %s %s, want FAILED %s", d.Status, d.Error, asl.ErrTimeout)
	}
}

// A task whose timeout passed while the process was down times out at once after the restart,
// without running its call again; one that had its answer before the crash keeps it.
func TestReplayPastTimeout(t *testing.T) {
	t.Run("running call", func(t *testing.T) {
		st := openStore(t)
		m := parse(t, `{"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","TimeoutSeconds":5,
			     "Parameters":{"FunctionName":"block","Payload":{}},"End":true}}}`)
		inv := newCounting()
		inv.release = make(chan struct{})
		t.Cleanup(func() { close(inv.release) })
		t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		rec1, _, _ := bootWith(t, st, inv, m, frozen(t0))
		for inv.count("block") < 1 {
			time.Sleep(time.Millisecond)
		}
		if err := rec1.Flush(); err != nil {
			t.Fatal(err)
		}
		_, _, x2 := bootWith(t, st, inv, m, frozen(t0.Add(10*time.Second)))
		d := wait(t, x2)
		if d.Status != asl.StatusFailed || d.Error != asl.ErrTimeout {
			t.Errorf("got %s %s, want FAILED %s", d.Status, d.Error, asl.ErrTimeout)
		}
		if got := inv.count("block"); got != 1 {
			t.Errorf("the timed-out call ran %d times, want 1 (before the crash only)", got)
		}
	})
	t.Run("answered token", func(t *testing.T) {
		st := openStore(t)
		m := parse(t, `{"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","TimeoutSeconds":5,
			     "Parameters":{"FunctionName":"callback","Payload":{"token.$":"$$.Task.Token"}},"Next":"U"},
			"U":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
			     "Parameters":{"FunctionName":"callback","Payload":{"second":true,"token.$":"$$.Task.Token"}},"End":true}}}`)
		inv := newCounting()
		t0 := time.Now().Add(-time.Minute)
		rec1, eng1, x1 := bootWith(t, st, inv, m, frozen(t0))
		tok := <-inv.tokens
		waitParked(t, x1)
		if _, err := rec1.Answer(tok, Outcome{Success: true, Output: `{"a":1}`}, eng1.SendTaskHeartbeat); err != nil {
			t.Fatal(err)
		}
		tokU := <-inv.tokens // U waits
		waitParked(t, x1)
		// The restart comes after T's deadline (now, in real time): its answer came in time and
		// stands; both calls are answered from the journal.
		rec2, eng2, x2 := bootWith(t, st, inv, m, asl.RealClock{})
		waitParked(t, x2)
		if _, err := rec2.Answer(tokU, Outcome{Success: true, Output: `{"b":2}`}, eng2.SendTaskHeartbeat); err != nil {
			t.Fatal(err)
		}
		if d := wait(t, x2); d.Status != asl.StatusSucceeded {
			t.Errorf("got %s %s %s, want SUCCEEDED", d.Status, d.Error, d.Cause)
		}
	})
}

// Events replayed after a restart keep the times they had; GetExecutionHistory shows the same.
func TestReplayKeepsEventTimes(t *testing.T) {
	st := openStore(t)
	m := parse(t, `{"StartAt":"P","States":{
		"P":{"Type":"Pass","Next":"A"},
		"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"first","Payload.$":"$$.State.EnteredTime"},"Next":"B"},
		"B":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"callback","Payload":{"token.$":"$$.Task.Token","started.$":"$$.Execution.StartTime"}},"End":true}}}`)
	inv := newCounting()
	rec1, _, x1 := bootWith(t, st, inv, m, nil)
	<-inv.tokens
	waitParked(t, x1)
	if err := rec1.Flush(); err != nil {
		t.Fatal(err)
	}
	before := x1.History()
	time.Sleep(5 * time.Millisecond) // so that a new time could not equal an old one

	_, _, x2 := bootWith(t, st, inv, m, nil)
	waitParked(t, x2)
	after := x2.History()
	if len(after) != len(before) {
		t.Fatalf("%d events after the restart, %d before", len(after), len(before))
	}
	for i := range before {
		if !after[i].Timestamp.Equal(before[i].Timestamp) || after[i].Type != before[i].Type {
			t.Errorf("event %d: %s at %v after the restart, %s at %v before", i+1, after[i].Type, after[i].Timestamp, before[i].Type, before[i].Timestamp)
		}
	}
	if !x2.Describe().StartDate.Equal(x1.Describe().StartDate) {
		t.Errorf("start date %v after the restart, %v before", x2.Describe().StartDate, x1.Describe().StartDate)
	}
	// $$.State.EnteredTime and $$.Execution.StartTime are the kept times: the calls' payloads are
	// the same, so the journal answers them and nothing runs twice.
	if inv.count("first") != 1 || inv.count("callback") != 1 {
		t.Errorf("first ran %d, callback %d times; want 1 each", inv.count("first"), inv.count("callback"))
	}
}

// A child execution's name is journaled by its start: the replay gets it back, a second start
// gets a new one.
func TestChildNameJournaled(t *testing.T) {
	st := openStore(t)
	if err := st.PutExecution(Execution{Arn: execArn, Status: asl.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	ctx := WithExecution(context.Background(), execArn)
	names := func() (out []string) {
		rec := NewRecorder(st, newCounting(), nil, nil)
		if err := rec.Begin(execArn); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			n, replayed, err := rec.Child(ctx, "arn:m", `{"a":1}`, "", "")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n+map[bool]string{true: "/replayed", false: ""}[replayed])
		}
		return out
	}
	first, second := names(), names()
	if first[0] == first[1] || first[0] == "" {
		t.Errorf("two starts got %v", first)
	}
	if second[0] != first[0]+"/replayed" || second[1] != first[1]+"/replayed" {
		t.Errorf("replay got %v, first run %v", second, first)
	}
	// Not under an execution (an Express parent): a fresh name, never journaled.
	n, replayed, err := NewRecorder(st, nil, nil, nil).Child(context.Background(), "arn:m", `{}`, "given", "")
	if err != nil || n != "given" || replayed {
		t.Errorf("Child outside an execution = %q, %v, %v", n, replayed, err)
	}
}

// A start with its place (asl.StartInput.Key) gets its child back on replay by that place alone:
// the input may differ (a time in it), and two starts at different places with the same input
// are two children.
func TestChildKeyedByPlace(t *testing.T) {
	st := openStore(t)
	if err := st.PutExecution(Execution{Arn: execArn, Status: asl.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	ctx := WithExecution(context.Background(), execArn)
	run := func(input string) (out []string) {
		rec := NewRecorder(st, newCounting(), nil, nil)
		if err := rec.Begin(execArn); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"x\x00Run\x001.0", "x\x00Run\x001.1"} {
			n, replayed, err := rec.Child(ctx, "arn:m", input, "", key)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n+map[bool]string{true: "/replayed", false: ""}[replayed])
		}
		return out
	}
	first := run(`{"at":"2026-01-01T00:00:00Z"}`)
	second := run(`{"at":"2026-01-01T00:00:07Z"}`)
	if first[0] == first[1] {
		t.Errorf("two places got one child: %v", first)
	}
	for i := range first {
		if second[i] != first[i]+"/replayed" {
			t.Errorf("replay with another input got %v, first run %v", second, first)
		}
	}
}
