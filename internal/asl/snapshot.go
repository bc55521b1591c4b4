package asl

import (
	"context"
	"strings"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Persistence. An execution parked on a task token, or in a Wait state of its top level, holds no
// goroutine: it is data. Snapshot gives that data in a JSON-serialisable form; Restore brings it
// back in another engine (after a crash or a restart) with its token, its timers (re-armed for the
// time left) and its history, so SendTask* with the old token resumes it, and a Wait ends when it
// was due. The durable store of local mode saves a snapshot when an execution parks and deletes it
// when the execution ends.
//
// A snapshot covers an execution parked at its top level only: not one that is running, in a retry
// back-off, or waiting inside a Map iteration or Parallel branch. Local mode does not rely on it:
// its journal (internal/localaws/durable) replays an execution from its start after a restart,
// answering every completed invocation, inside iterations and branches too, from the journal and
// ending every wait, back-off and timeout at its first deadline.

// Snapshot is a parked execution, serialisable as JSON.
type Snapshot struct {
	ExecutionArn    string            `json:"executionArn"`
	StateMachineArn string            `json:"stateMachineArn"`
	Name            string            `json:"name"`
	Input           string            `json:"input"`
	StartTime       time.Time         `json:"startTime"`
	Events          []Event           `json:"events"`
	LastEventID     int64             `json:"lastEventId"` // the execution chain's previous event
	Variables       map[string]string `json:"variables"`   // JSON text by name
	Task            *ParkedTask       `json:"task,omitempty"`
	Wait            *ParkedWait       `json:"wait,omitempty"`
}

// ParkedWait is the Wait state visit the execution sleeps in.
type ParkedWait struct {
	State       string    `json:"state"`
	RawInput    string    `json:"rawInput"`
	EffInput    string    `json:"effectiveInput"`
	EnteredID   int64     `json:"enteredEventId"`
	EnteredTime time.Time `json:"enteredTime"`
	Until       time.Time `json:"until"`
}

// ParkedTask is the Task state visit that waits on its token.
type ParkedTask struct {
	State       string     `json:"state"`
	RawInput    string     `json:"rawInput"`       // the state's input, JSON
	EffInput    string     `json:"effectiveInput"` // after InputPath, JSON
	EnteredID   int64      `json:"enteredEventId"`
	EnteredTime time.Time  `json:"enteredTime"`
	RetryCount  int        `json:"retryCount"`
	Counts      []int      `json:"retrierCounts"`
	Token       string     `json:"taskToken"`
	TimeoutAt   *time.Time `json:"timeoutAt,omitempty"`
	HeartbeatS  int64      `json:"heartbeatSeconds,omitempty"`
	HeartbeatAt *time.Time `json:"heartbeatAt,omitempty"`
}

// Snapshot gives the durable form of a parked execution; ok is false when it is not parked.
func (x *Execution) Snapshot() (*Snapshot, bool) {
	x.mu.Lock()
	r, pw := x.parked, x.parkedW
	x.mu.Unlock()
	if r == nil {
		return nil, false
	}
	s := &Snapshot{ExecutionArn: x.ARN, StateMachineArn: x.MachineARN, Name: x.Name, Input: x.inputJSON, StartTime: x.startTime,
		Events: x.History(), LastEventID: x.hist.lastOf(&x.chain), Variables: map[string]string{}}
	for k, v := range r.f.scope.snapshot() {
		s.Variables[k] = compactJSON(v)
	}
	if pw != nil {
		s.Wait = &ParkedWait{State: r.st.Name, RawInput: compactJSON(r.raw), EffInput: compactJSON(pw.input), EnteredID: r.entered,
			EnteredTime: r.enteredAt, Until: pw.until}
		return s, true
	}
	w := r.waiting
	if w == nil {
		return nil, false
	}
	s.Task = &ParkedTask{State: r.st.Name, RawInput: compactJSON(r.raw), EffInput: compactJSON(r.eff), EnteredID: r.entered,
		EnteredTime: r.enteredAt, RetryCount: r.retryCount, Counts: append([]int(nil), r.counts...), Token: r.token}
	if !w.timeoutAt.IsZero() {
		t := w.timeoutAt
		s.Task.TimeoutAt = &t
	}
	if w.heartbeat > 0 {
		w.hbMu.Lock()
		t := w.heartbeatAt
		w.hbMu.Unlock()
		s.Task.HeartbeatS = int64(w.heartbeat / time.Second)
		s.Task.HeartbeatAt = &t
	}
	return s, true
}

// Restore brings a parked execution back into this engine, for machine m (the same definition).
func (e *Engine) Restore(m *Machine, s *Snapshot) (*Execution, error) {
	st, v, err := restoredValues(m, s)
	if err != nil {
		return nil, err
	}
	smName := s.StateMachineArn[strings.LastIndex(s.StateMachineArn, ":")+1:]
	x := &Execution{eng: e, ARN: s.ExecutionArn, Name: s.Name, MachineARN: s.StateMachineArn, machine: m, input: v.input,
		inputJSON: s.Input, startTime: s.StartTime, status: StatusRunning, done: make(chan struct{})}
	x.role = snapshotRole(s, e.cfg.RoleArn)
	x.ctxExec = map[string]any{"Id": x.ARN, "Input": v.input, "Name": x.Name, "RoleArn": x.role,
		"StartTime": formatTime(x.startTime), "RedriveCount": int64(0)}
	x.ctxMachine = map[string]any{"Id": x.MachineARN, "Name": smName}
	for _, ev := range s.Events {
		x.hist.records = append(x.hist.records, record{at: ev.Timestamp, typ: ev.Type, id: ev.ID, prev: ev.PreviousEventID, d: ev.details()})
	}
	x.chain.last = s.LastEventID
	x.ctx, x.cancel = context.WithCancelCause(context.Background())

	e.mu.Lock()
	if _, dup := e.execs[x.ARN]; dup {
		e.mu.Unlock()
		return nil, &fault.Error{Kind: fault.Conflict, Field: "executionArn", Msg: "Execution Already Exists: '" + x.ARN + "'"}
	}
	e.execs[x.ARN] = x
	e.mu.Unlock()

	scope := newScope(nil)
	scope.set(v.vars)
	f := &frame{top: true, x: x, m: m, chain: &x.chain, scope: scope}
	now := e.clock.Now()
	if m.TimeoutSeconds > 0 {
		left := x.startTime.Add(time.Duration(m.TimeoutSeconds) * time.Second).Sub(now)
		x.stopTimer = e.clock.AfterFunc(max(left, 0), func() { x.abort(&abortCause{status: StatusTimedOut, err: newErr(ErrTimeout, "")}) })
	}
	if s.Wait != nil {
		r := &stateRun{f: f, st: st, raw: v.raw, eff: v.eff, entered: s.Wait.EnteredID, enteredAt: s.Wait.EnteredTime}
		e.restoreWait(x, r, s.Wait.Until, now)
		return x, nil
	}
	r := &stateRun{f: f, st: st, raw: v.raw, eff: v.eff, entered: s.Task.EnteredID, enteredAt: s.Task.EnteredTime,
		retryCount: s.Task.RetryCount, counts: append([]int(nil), s.Task.Counts...), token: s.Task.Token}
	if len(r.counts) != len(st.Retry) {
		r.counts = make([]int, len(st.Retry))
	}
	e.restoreTask(x, r, s.Task, now)
	return x, nil
}

// restored are a snapshot's JSON texts decoded: the execution's input, the parked state's raw and
// effective input, and the variables in scope.
type restored struct {
	input, raw, eff any
	vars            map[string]any
}

// restoredValues checks that s parks in a Task or Wait state of m and decodes its values.
func restoredValues(m *Machine, s *Snapshot) (*State, restored, error) {
	var v restored
	var stateName, rawText, effText string
	switch {
	case s.Task != nil:
		stateName, rawText, effText = s.Task.State, s.Task.RawInput, s.Task.EffInput
	case s.Wait != nil:
		stateName, rawText, effText = s.Wait.State, s.Wait.RawInput, s.Wait.EffInput
	default:
		return nil, v, fault.Invalid("snapshot", "the snapshot has neither a task nor a wait")
	}
	st, ok := m.States[stateName]
	if !ok || (s.Task != nil && st.Type != TypeTask) || (s.Wait != nil && st.Type != TypeWait) {
		return nil, v, fault.Invalid("snapshot", "the snapshot's state %q is not a %s of this machine", stateName, map[bool]string{true: "Task", false: "Wait"}[s.Task != nil])
	}
	dec := func(field, text string, into *any) error {
		val, err := jsonv.DecodeString(text)
		if err != nil {
			return fault.Invalid("snapshot", "%s is not JSON: %v", field, err)
		}
		*into = val
		return nil
	}
	if err := dec("input", s.Input, &v.input); err != nil {
		return nil, v, err
	}
	if err := dec("rawInput", rawText, &v.raw); err != nil {
		return nil, v, err
	}
	if err := dec("effectiveInput", effText, &v.eff); err != nil {
		return nil, v, err
	}
	v.vars = map[string]any{}
	for k, text := range s.Variables {
		var val any
		if err := dec("variable "+k, text, &val); err != nil {
			return nil, v, err
		}
		v.vars[k] = val
	}
	if s.Task != nil && !validTokenShape(s.Task.Token) {
		return nil, v, fault.Invalid("snapshot", "the snapshot's task token is malformed")
	}
	return st, v, nil
}

// restoreWait parks x in the Wait state of r again, woken at until.
func (e *Engine) restoreWait(x *Execution, r *stateRun, until, now time.Time) {
	w := &parkedWait{until: until, input: r.eff, unwound: make(chan struct{})}
	close(w.unwound) // nothing to unwind: no goroutine ran this execution here
	w.woke = func(aborted bool) { x.resumeWait(r, w, aborted) }
	r.pwait = w
	x.setParked(r)
	stop := e.clock.WaitFunc(max(w.until.Sub(now), 0), func() { w.wake(false) })
	w.mu.Lock()
	w.stop = stop
	w.mu.Unlock()
}

// restoreTask parks x in the Task state of r again, waiting on its token with the timeout and
// heartbeat deadlines t recorded.
func (e *Engine) restoreTask(x *Execution, r *stateRun, t *ParkedTask, now time.Time) {
	p := &pendingTask{x: x}
	e.tokMu.Lock()
	e.pending[r.token] = p
	e.tokMu.Unlock()
	w := &waiting{p: p, unwound: make(chan struct{})}
	close(w.unwound) // nothing to unwind: no goroutine ran this execution here
	r.waiting = w
	if t.TimeoutAt != nil {
		w.timeoutAt = *t.TimeoutAt
		w.stopTimeout = e.clock.AfterFunc(max(w.timeoutAt.Sub(now), 0), func() { p.deliver(taskOutcome{timedOut: true}) })
	}
	if t.HeartbeatS > 0 && t.HeartbeatAt != nil {
		w.heartbeat = time.Duration(t.HeartbeatS) * time.Second
		w.armHeartbeat(e.clock, max(t.HeartbeatAt.Sub(now), 0))
		p.heartbeat = func() { w.armHeartbeat(e.clock, w.heartbeat) }
	}
	x.setParked(r)
	p.setHandler(func(o taskOutcome) { go x.resume(r, w, o) })
}

// snapshotRole is the role the snapshotted execution started with, as its ExecutionStarted event
// shows it.
func snapshotRole(s *Snapshot, def string) string {
	for _, ev := range s.Events {
		if d := ev.ExecutionStartedEventDetails; d != nil && d.RoleArn != "" {
			return d.RoleArn
		}
	}
	return def
}
