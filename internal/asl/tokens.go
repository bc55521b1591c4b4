package asl

import (
	"encoding/base64"
	"strings"
	"sync"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// APIError is a Step Functions API error: Code is the `__type` (TaskDoesNotExist, InvalidToken,
// TaskTimedOut, InvalidOutput, ...), Message its text. It travels inside a *fault.Error whose Kind
// gives the HTTP class.
type APIError struct {
	Code    string
	Message string
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

func apiErr(kind fault.Kind, code, msg string) error {
	return &fault.Error{Kind: kind, Field: "taskToken", Msg: msg, Err: &APIError{Code: code, Message: msg}}
}

// taskOutcome is how a waiting task ends.
type taskOutcome struct {
	output    any
	err       *StatesError
	timedOut  bool
	heartbeat bool // the timeout was a missed heartbeat
	aborted   bool // the execution was stopped or timed out
}

// pendingTask is a task waiting on its token. The first outcome wins: it goes to the handler, or
// is kept until one is set (an answer can arrive while the integration call is still returning).
type pendingTask struct {
	x         *Execution
	mu        sync.Mutex
	outcome   *taskOutcome
	handler   func(taskOutcome)
	fired     bool
	heartbeat func() // re-arms the heartbeat timer; nil without HeartbeatSeconds
}

func (p *pendingTask) deliver(o taskOutcome) {
	p.mu.Lock()
	if p.outcome != nil {
		p.mu.Unlock()
		return
	}
	p.outcome = &o
	h := p.handler
	if h != nil {
		p.fired = true
	}
	p.mu.Unlock()
	if h != nil {
		h(o)
	}
}

func (p *pendingTask) setHandler(h func(taskOutcome)) {
	p.mu.Lock()
	p.handler = h
	if p.outcome != nil && !p.fired {
		p.fired = true
		o := *p.outcome
		p.mu.Unlock()
		h(o)
		return
	}
	p.mu.Unlock()
}

func (e *Engine) registerToken(x *Execution) (string, *pendingTask) {
	tok := newToken()
	p := &pendingTask{x: x}
	e.tokMu.Lock()
	e.pending[tok] = p
	e.tokMu.Unlock()
	return tok, p
}

// closeToken forgets a token, answered, timed out or of a stopped execution. Later calls with it
// get TaskTimedOut, as AWS answers for each of those, for as long as the engine remembers it
// (tombstones).
func (e *Engine) closeToken(tok string) {
	e.tokMu.Lock()
	delete(e.pending, tok)
	e.closed.add(tok, e.clock.Now())
	e.tokMu.Unlock()
}

// tombstoneSpan is how long a closed token is remembered at least, and half of how long at most:
// later answers with it get TaskTimedOut, then TaskDoesNotExist. Local mode's durable recorder
// keeps the tokens of its journaled executions across restarts; the engine's memory is all there
// is of the others. Kept forever, they grew the engine's memory by an entry per task token for as
// long as the process ran.
const tombstoneSpan = 24 * time.Hour

// tombstones are the closed tokens of the current span and of the one before it; a span older
// than that is dropped whole, so remembering costs O(1) a token and memory bounded by two spans.
type tombstones struct {
	cur, prev map[string]struct{}
	since     time.Time // when cur began
}

func (t *tombstones) add(tok string, now time.Time) {
	t.rotate(now)
	t.cur[tok] = struct{}{}
}

func (t *tombstones) has(tok string, now time.Time) bool {
	t.rotate(now)
	_, inCur := t.cur[tok]
	_, inPrev := t.prev[tok]
	return inCur || inPrev
}

func (t *tombstones) rotate(now time.Time) {
	age := now.Sub(t.since)
	switch {
	case t.cur == nil:
		t.cur, t.since = map[string]struct{}{}, now
	case age >= 2*tombstoneSpan:
		t.cur, t.prev, t.since = map[string]struct{}{}, nil, now
	case age >= tombstoneSpan:
		t.cur, t.prev, t.since = map[string]struct{}{}, t.cur, now
	}
}

func (e *Engine) lookupToken(tok string) (*pendingTask, error) {
	if !validTokenShape(tok) {
		return nil, apiErr(fault.InvalidInput, "InvalidToken", "Invalid Token: 'Invalid token'")
	}
	e.tokMu.Lock()
	defer e.tokMu.Unlock()
	if p, ok := e.pending[tok]; ok {
		return p, nil
	}
	if e.closed.has(tok, e.clock.Now()) {
		return nil, apiErr(fault.Gone, "TaskTimedOut", "Task Timed Out: 'Provided task does not exist anymore'")
	}
	return nil, apiErr(fault.NotFound, "TaskDoesNotExist", "Task Does Not Exist: 'Provided task does not exist anymore'")
}

func validTokenShape(tok string) bool {
	if len(tok) < 3 || len(tok) > 2048 || !strings.HasPrefix(tok, "AQ") {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(tok[2:])
	return err == nil && len(b) == 48
}

func deliver(p *pendingTask, o taskOutcome) { p.deliver(o) }

// SendTaskSuccess completes a waiting task with output (JSON text).
func (e *Engine) SendTaskSuccess(token, output string) error {
	p, err := e.lookupToken(token)
	if err != nil {
		return err
	}
	if len(output) > MaxPayloadBytes {
		return &fault.Error{Kind: fault.TooLarge, Field: "output", Msg: "Invalid Output: the output is larger than 262144 bytes",
			Err: &APIError{Code: "InvalidOutput", Message: "the output is larger than 262144 bytes"}}
	}
	v, derr := jsonv.DecodeString(output)
	if derr != nil {
		return &fault.Error{Kind: fault.InvalidInput, Field: "output", Msg: "Invalid Output: '" + derr.Error() + "'",
			Err: &APIError{Code: "InvalidOutput", Message: derr.Error()}}
	}
	deliver(p, taskOutcome{output: v})
	return nil
}

// SendTaskFailure fails a waiting task; error and cause may be empty (AWS then omits them).
func (e *Engine) SendTaskFailure(token, errName, cause string) error {
	p, err := e.lookupToken(token)
	if err != nil {
		return err
	}
	if len(errName) > 256 || len(cause) > 32768 {
		return fault.Invalid("error", "ValidationException: error is at most 256 and cause at most 32768 characters")
	}
	deliver(p, taskOutcome{err: &StatesError{Name: errName, Cause: cause, hasName: errName != "", hasCause: cause != ""}})
	return nil
}

// SendTaskHeartbeat tells a waiting task its worker is alive.
func (e *Engine) SendTaskHeartbeat(token string) error {
	p, err := e.lookupToken(token)
	if err != nil {
		return err
	}
	p.mu.Lock()
	hb := p.heartbeat
	p.mu.Unlock()
	if hb != nil {
		hb()
	}
	return nil
}

// PendingTokens is how many tasks wait on a token.
func (e *Engine) PendingTokens() int {
	e.tokMu.Lock()
	defer e.tokMu.Unlock()
	return len(e.pending)
}
