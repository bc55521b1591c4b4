package durable

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"sinew/internal/asl"
)

// countingInvoker answers every function with its payload and counts calls per function; "flaky"
// fails its first call with Test.Flaky; "callback" reports the token it was given; "block" waits
// for release.
type countingInvoker struct {
	mu      sync.Mutex
	calls   map[string]int
	times   map[string][]time.Time
	tokens  chan string
	release chan struct{} // "block" answers once it is closed (or its context ends)
}

func newCounting() *countingInvoker {
	return &countingInvoker{calls: map[string]int{}, times: map[string][]time.Time{}, tokens: make(chan string, 10)}
}

func (c *countingInvoker) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	c.mu.Lock()
	c.calls[req.FunctionName]++
	n := c.calls[req.FunctionName]
	c.times[req.FunctionName] = append(c.times[req.FunctionName], time.Now())
	c.mu.Unlock()
	switch req.FunctionName {
	case "flaky":
		if n == 1 {
			return &asl.LambdaResponse{Payload: []byte(`{"errorType":"Test.Flaky","errorMessage":"first"}`), FunctionError: "Unhandled"}, nil
		}
	case "block":
		select {
		case <-c.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "callback":
		var p struct {
			Token string `json:"token"`
		}
		_ = json.Unmarshal(req.Payload, &p)
		c.tokens <- p.Token
	}
	return &asl.LambdaResponse{Payload: req.Payload}, nil
}

func (c *countingInvoker) count(fn string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[fn]
}

const execArn = "arn:aws:states:us-east-1:000000000000:execution:m:x1"

func parse(t *testing.T, def string) *asl.Machine {
	t.Helper()
	m, err := asl.Parse([]byte(def), asl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// boot is one "process": a recorder and an engine over the shared store, with the execution
// (re)started as sfnapi does.
func boot(t *testing.T, st *Store, inv asl.LambdaInvoker, m *asl.Machine) (*Recorder, *asl.Engine, *asl.Execution) {
	t.Helper()
	rec := NewRecorder(st, inv, nil, nil)
	eng := asl.New(asl.Config{Lambda: rec, Clock: rec})
	rec.SetDeliver(func(tok string, o Outcome) error {
		if o.Success {
			return eng.SendTaskSuccess(tok, o.Output)
		}
		return eng.SendTaskFailure(tok, o.Error, o.Cause)
	})
	// As local mode does: the running record opens the journal, then Begin replays it.
	if err := st.PutExecution(Execution{Arn: execArn, Status: asl.StatusRunning}); err != nil {
		t.Fatal(err)
	}
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

func openStore(t *testing.T) *Store {
	t.Helper()
	st, err := Open(filepath.Join(t.TempDir(), "sfn.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func wait(t *testing.T, x *asl.Execution) asl.Description {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := x.Wait(ctx)
	if err != nil {
		t.Fatalf("execution did not end: %v", err)
	}
	return d
}

// A second run over the journal answers completed calls from it, keeps the old token working, and
// runs nothing twice.
func TestReplayKeepsTokensAndRunsNothingTwice(t *testing.T) {
	st := openStore(t)
	m := parse(t, `{"StartAt":"A","States":{
		"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"first","Payload.$":"$"},"ResultSelector":{"a.$":"$.Payload"},"Next":"B"},
		"B":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"callback","Payload":{"token.$":"$$.Task.Token"}},"End":true}}}`)
	inv := newCounting()
	_, _, x1 := boot(t, st, inv, m)
	oldTok := <-inv.tokens
	for !x1.Parked() {
		time.Sleep(time.Millisecond)
	}
	// "Crash": a new engine and recorder over the same store; the first engine is abandoned.
	rec2, eng2, x2 := boot(t, st, inv, m)
	for !x2.Parked() {
		time.Sleep(time.Millisecond)
	}
	if got := inv.count("first"); got != 1 {
		t.Errorf("first ran %d times, want 1", got)
	}
	if got := inv.count("callback"); got != 1 {
		t.Errorf("callback ran %d times, want 1", got)
	}
	handled, err := rec2.Answer(oldTok, Outcome{Success: true, Output: `{"done":true}`}, func(cur string) error { return eng2.SendTaskHeartbeat(cur) })
	if !handled || err != nil {
		t.Fatalf("Answer(old token) = %v, %v", handled, err)
	}
	d := wait(t, x2)
	if d.Status != asl.StatusSucceeded || d.Output != `{"done":true}` {
		t.Errorf("after replay: %s %s %s", d.Status, d.Output, d.Cause)
	}
	if _, err := rec2.Answer(oldTok, Outcome{Success: true, Output: `{}`}, func(string) error { return nil }); err != ErrAnswered {
		t.Errorf("second answer: %v, want ErrAnswered", err)
	}
}

// An answer given before the replay reaches its task is journaled and delivered when it does.
func TestAnswerBeforeReplayIsDelivered(t *testing.T) {
	st := openStore(t)
	m := parse(t, `{"StartAt":"B","States":{
		"B":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"callback","Payload":{"token.$":"$$.Task.Token"}},"End":true}}}`)
	inv := newCounting()
	_, _, x1 := boot(t, st, inv, m)
	oldTok := <-inv.tokens
	for !x1.Parked() {
		time.Sleep(time.Millisecond)
	}
	rec2 := NewRecorder(st, inv, nil, nil)
	if err := rec2.Begin(execArn); err != nil {
		t.Fatal(err)
	}
	if cur, waiting := rec2.Current(oldTok); !waiting || cur != oldTok {
		t.Errorf("Current before replay = %q, %v", cur, waiting)
	}
	handled, err := rec2.Answer(oldTok, Outcome{Error: "Client.Failed", Cause: "no"}, func(string) error { t.Error("probe called"); return nil })
	if !handled || err != nil {
		t.Fatalf("Answer = %v, %v", handled, err)
	}
	eng2 := asl.New(asl.Config{Lambda: rec2, Clock: rec2})
	rec2.SetDeliver(func(tok string, o Outcome) error { return eng2.SendTaskFailure(tok, o.Error, o.Cause) })
	x2, err := eng2.Start(WithExecution(context.Background(), execArn), asl.StartInput{Machine: m,
		StateMachineArn: "arn:aws:states:us-east-1:000000000000:stateMachine:m", Name: "x1", Input: `{"n":1}`})
	if err != nil {
		t.Fatal(err)
	}
	d := wait(t, x2)
	if d.Status != asl.StatusFailed || d.Error != "Client.Failed" {
		t.Errorf("got %s %s, want FAILED Client.Failed", d.Status, d.Error)
	}
}

// A retry back-off interrupted by a crash ends at its first deadline, and the failed attempt is
// not run again.
func TestReplayResumesBackoff(t *testing.T) {
	st := openStore(t)
	m := parse(t, `{"StartAt":"C","States":{
		"C":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"flaky","Payload":{}},
		     "Retry":[{"ErrorEquals":["Test.Flaky"],"IntervalSeconds":1,"MaxAttempts":2}],"End":true}}}`)
	inv := newCounting()
	_, eng1, _ := boot(t, st, inv, m)
	for inv.count("flaky") < 1 {
		time.Sleep(time.Millisecond)
	}
	var j *Journal
	for guard := time.Now().Add(30 * time.Second); ; { // a guard against a hang, not a bound
		if time.Now().After(guard) {
			t.Fatal("the back-off's deadline was never journaled")
		}
		var err error
		if j, err = st.LoadJournal(execArn); err != nil {
			t.Fatal(err)
		}
		if len(j.Timers) == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	deadline, ok := j.Timers["Retry C#1"]
	if !ok {
		t.Fatalf("journaled timers: %v", j.Timers)
	}
	// The crashed process's back-off never ends: stop it there (its engine records nothing).
	if err := eng1.Stop(execArn, "", ""); err != nil {
		t.Fatal(err)
	}
	_, _, x2 := boot(t, st, inv, m)
	d := wait(t, x2)
	if d.Status != asl.StatusSucceeded {
		t.Fatalf("status %s (%s)", d.Status, d.Cause)
	}
	// The failure is replayed from the journal (no call), then the one retry runs.
	inv.mu.Lock()
	times := append([]time.Time(nil), inv.times["flaky"]...)
	inv.mu.Unlock()
	if len(times) != 2 {
		t.Fatalf("flaky ran %d times, want the failure and one retry", len(times))
	}
	if times[1].Before(deadline) {
		t.Errorf("the retry ran at %v, before the back-off's deadline %v", times[1], deadline)
	}
}

func TestStoreRoundTrip(t *testing.T) {
	st := openStore(t)
	x := Execution{Arn: execArn, MachineArn: "m", Name: "x1", Input: "{}", Start: time.Now().UTC(), Status: "RUNNING", Seq: 3}
	if err := st.PutExecution(x); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordCall(execArn, "k#1", Call{Payload: []byte(`{"a":1}`), Token: "AQtok"}); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordOutcome(execArn, "k#1", Outcome{Success: true, Output: "1"}); err != nil {
		t.Fatal(err)
	}
	j, err := st.LoadJournal(execArn)
	if err != nil {
		t.Fatal(err)
	}
	if string(j.Calls["k#1"].Payload) != `{"a":1}` || j.Outcomes["k#1"].Output != "1" {
		t.Errorf("journal = %+v", j)
	}
	x.Status, x.Events = "SUCCEEDED", json.RawMessage(`[]`)
	if err := st.PutExecution(x); err != nil {
		t.Fatal(err)
	}
	if j, _ = st.LoadJournal(execArn); len(j.Calls)+len(j.Outcomes) != 0 {
		t.Errorf("closing kept the journal: %+v", j)
	}
	xs, err := st.Executions()
	if err != nil || len(xs) != 1 || xs[0].Status != "SUCCEEDED" || xs[0].Seq != 3 {
		t.Errorf("Executions = %+v, %v", xs, err)
	}
}

// The background writer takes only the entries that have waited flushLinger: a young execution's
// are left for its end (which drops them) or a later pass; Flush takes every one.
func TestBackgroundWriterTakesOldEntries(t *testing.T) {
	st := openStore(t)
	old, young := execArn, execArn+"2"
	rec := NewRecorder(st, newCounting(), nil, nil)
	for _, arn := range []string{old, young} {
		if err := st.PutExecution(Execution{Arn: arn, Status: "RUNNING"}); err != nil {
			t.Fatal(err)
		}
		if err := rec.Begin(arn); err != nil {
			t.Fatal(err)
		}
	}
	rec.mu.Lock()
	rec.flushing = true // no timer of its own: the test runs the writer
	rec.mu.Unlock()
	for _, arn := range []string{old, young} {
		rec.EventTime(WithExecution(context.Background(), arn), 1, "ExecutionStarted", time.Now())
	}
	rec.mu.Lock()
	rec.execs[old].pendAt = time.Now().Add(-2 * flushLinger)
	rec.execs[young].pendAt = time.Now().Add(time.Hour) // its pass, re-armed, is far off
	rec.mu.Unlock()
	events := func(arn string) int {
		j, err := st.LoadJournal(arn)
		if err != nil {
			t.Fatal(err)
		}
		return len(j.Events)
	}
	rec.flushLoop()
	if o, y := events(old), events(young); o != 1 || y != 0 {
		t.Errorf("after the background pass: %d old and %d young entries durable, want 1 and 0", o, y)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	if y := events(young); y != 1 {
		t.Errorf("after Flush: %d young entries durable, want 1", y)
	}
}
