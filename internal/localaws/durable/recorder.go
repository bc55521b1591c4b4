package durable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"sinew/internal/asl"
)

type ctxKey struct{}

// WithExecution marks ctx as belonging to execution arn. The engine keeps the values of the
// context an execution was started with, so every invocation and sleep of the execution carries it.
func WithExecution(ctx context.Context, arn string) context.Context {
	return context.WithValue(ctx, ctxKey{}, arn)
}

// ExecutionOf gives the execution ctx belongs to, or "".
func ExecutionOf(ctx context.Context) string {
	s, _ := ctx.Value(ctxKey{}).(string)
	return s
}

// tokenRE finds the engine's task tokens ("AQ" + 48 bytes in unpadded base64url) in a payload.
var tokenRE = regexp.MustCompile(`AQ[A-Za-z0-9_-]{64}`)

// ErrAnswered is Answer's error for a token whose task was already answered.
var ErrAnswered = errors.New("durable: the task was already answered")

// Recorder journals and replays executions. It stands between the engine and the real Lambda
// invoker and clock: give the engine Recorder as its LambdaInvoker and Clock (an asl.TimerClock).
type Recorder struct {
	st    *Store
	inner asl.LambdaInvoker
	clock asl.Clock
	log   *slog.Logger

	mu       sync.Mutex
	execs    map[string]*execState
	tokens   map[string]tokenRef // every token a running execution's calls were given
	closed   closedSet           // the tokens of ended executions, kept TombstoneSpan
	deliver  func(token string, o Outcome) error
	dirty    map[string]*execState // executions with entries queued for the background writer
	flushing bool                  // the background writer runs
	flushMu  sync.Mutex            // held while a batch of queued entries is written
}

type tokenRef struct{ exec, key string }

type execState struct {
	j         *Journal
	occ       map[string]int    // occurrences of each call's, timer's and child's base key, in this run
	current   map[string]string // call key -> the token the engine knows now
	delivered map[string]bool   // call keys whose outcome went to the engine in this run
	diverged  bool              // the replay emitted an event the journal does not have at its id
	pending   map[string][]byte // journal entries queued for the background writer
	pendAt    time.Time         // when the first of pending was queued
	callGen   uint64            // completed invocations queued so far
	syncedGen uint64            // of which durable
	tokens    []string          // the tokens r.tokens maps to this execution, for End to drop
}

// NewRecorder wraps inner and clock (nil clock: asl.RealClock).
func NewRecorder(st *Store, inner asl.LambdaInvoker, clock asl.Clock, log *slog.Logger) *Recorder {
	if clock == nil {
		clock = asl.RealClock{}
	}
	if log == nil {
		log = slog.Default()
	}
	r := &Recorder{st: st, inner: inner, clock: clock, log: log, execs: map[string]*execState{}, tokens: map[string]tokenRef{},
		dirty: map[string]*execState{}}
	r.loadClosed()
	return r
}

// SetDeliver sets how a journaled answer reaches the engine on replay (the engine's SendTask*).
func (r *Recorder) SetDeliver(f func(token string, o Outcome) error) {
	r.mu.Lock()
	r.deliver = f
	r.mu.Unlock()
}

// Begin starts journaling execution arn, replaying its journal if it has one. Call it after its
// running record (Store.PutExecution) has opened the journal, and before the engine starts the
// execution.
func (r *Recorder) Begin(arn string) error {
	j, err := r.st.LoadJournal(arn)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	es := &execState{j: j, occ: map[string]int{}, current: map[string]string{}, delivered: map[string]bool{}}
	if prev := r.execs[arn]; prev != nil {
		es.tokens = prev.tokens // begun again without an end: its tokens stay End's to drop
	}
	r.execs[arn] = es
	for key, c := range j.Calls {
		if c.Token != "" {
			r.addToken(arn, es, c.Token, key)
		}
	}
	return nil
}

// addToken maps tok to arn's call key; r.mu is held.
func (r *Recorder) addToken(arn string, es *execState, tok, key string) {
	r.tokens[tok] = tokenRef{exec: arn, key: key}
	es.tokens = append(es.tokens, tok)
}

// End stops journaling arn (its closed record has dropped the journal). It drops arn's tokens by
// its own list: a scan of every token would cost each end as many steps as executions wait.
func (r *Recorder) End(arn string) {
	r.mu.Lock()
	var ended []string
	if es := r.execs[arn]; es != nil {
		for _, tok := range es.tokens {
			if r.tokens[tok].exec == arn {
				delete(r.tokens, tok)
				ended = append(ended, tok)
			}
		}
	}
	delete(r.execs, arn)
	delete(r.dirty, arn) // its journal is gone
	r.mu.Unlock()
	r.closeTokens(arn, ended)
}

// Invoke implements asl.LambdaInvoker: a journaled invocation is answered from the journal, any
// other runs and is journaled.
func (r *Recorder) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	arn := ExecutionOf(ctx)
	tok := string(tokenRE.Find(req.Payload))
	r.mu.Lock()
	es := r.execs[arn]
	if es == nil {
		r.mu.Unlock()
		return r.inner.Invoke(ctx, req)
	}
	key := r.callKey(es, req, tok)
	c, done := es.j.Calls[key]
	var pending *Outcome
	if tok != "" {
		es.current[key] = tok
		if _, known := r.tokens[tok]; !known {
			r.addToken(arn, es, tok, key)
		}
		if o, ok := es.j.Outcomes[key]; ok && done && !es.delivered[key] {
			pending = &o
			es.delivered[key] = true
		}
	}
	deliver := r.deliver
	r.mu.Unlock()

	if !done && ctx.Err() != nil {
		// Spent before it started (a task timeout already past on replay): it does not run.
		return nil, ctx.Err()
	}
	if done {
		if pending != nil && deliver != nil {
			// The engine registered the token before this call and keeps an early answer.
			if err := deliver(tok, *pending); err != nil {
				r.log.Warn("replaying a task answer", "execution", arn, "error", err)
			}
		}
		if c.ServiceCode != "" {
			return nil, &asl.LambdaServiceError{Code: c.ServiceCode, Message: c.ServiceMsg}
		}
		return &asl.LambdaResponse{Payload: c.Payload, FunctionError: c.FunctionError}, nil
	}

	// Write-ahead: the invocations this execution completed before are durable before it makes
	// another (whose effects may depend on them).
	r.syncCalls(arn, es)
	resp, err := r.inner.Invoke(ctx, req)
	call := Call{Token: tok}
	var se *asl.LambdaServiceError
	switch {
	case err == nil:
		call.Payload, call.FunctionError = resp.Payload, resp.FunctionError
	case errors.As(err, &se):
		call.ServiceCode, call.ServiceMsg = se.Code, se.Message
	default:
		return resp, err // not an answer of the function: the next run tries again
	}
	if ctx.Err() != nil {
		// The task timed out (or the execution stopped) meanwhile: the engine discards the answer,
		// and so does the journal, so a replay times out as this run did.
		return resp, err
	}
	data, jerr := json.Marshal(call)
	if jerr == nil && tok != "" {
		// A task token is a promise to whoever holds it: its call is durable before the engine
		// waits on it.
		jerr = r.st.RecordCall(arn, key, call)
	}
	if jerr != nil {
		r.log.Error("journaling an invocation; it would run again after a restart", "execution", arn, "error", jerr)
	}
	r.mu.Lock()
	es.j.Calls[key] = call
	if jerr == nil && tok == "" {
		// Group commit: the entry joins the execution's next durable write (its next invocation,
		// timer, child or answer, a history read) or the background writer's, and an execution
		// that ends first drops it with its journal in its closing record's transaction.
		es.callGen++
		r.pendLocked(arn, es, "c/"+key, data)
	}
	if o, ok := es.j.Outcomes[key]; ok && tok != "" && !es.delivered[key] {
		// Answered before the crash while the call was still running: deliver it to the new token.
		pending = &o
		es.delivered[key] = true
	}
	r.mu.Unlock()
	if pending != nil && deliver != nil {
		if derr := deliver(tok, *pending); derr != nil {
			r.log.Warn("replaying a task answer", "execution", arn, "error", derr)
		}
	}
	return resp, err
}

// callKey names an invocation within its execution: the function, the payload without its task
// token, and how many identical invocations came before it in this run (retries, loops).
func (r *Recorder) callKey(es *execState, req asl.LambdaRequest, tok string) string {
	h := sha256.New()
	h.Write([]byte(req.FunctionName))
	h.Write([]byte{0})
	h.Write([]byte(req.Qualifier))
	h.Write([]byte{0})
	if tok != "" {
		h.Write(tokenRE.ReplaceAll(req.Payload, []byte("AQ")))
	} else {
		h.Write(req.Payload)
	}
	base := hex.EncodeToString(h.Sum(nil)[:16])
	es.occ[base]++
	return fmt.Sprintf("%s#%d", base, es.occ[base])
}

// Answer gives a task token's answer: journaled first, then delivered to the engine when the task
// waits there now (probe checks the engine still accepts that token). handled is false when the
// token is none of a running execution's: the caller asks the engine directly.
func (r *Recorder) Answer(token string, o Outcome, probe func(current string) error) (handled bool, err error) {
	r.mu.Lock()
	ref, ok := r.tokens[token]
	es := r.execs[ref.exec]
	if !ok || es == nil {
		_, ended := r.closed.tokens[token]
		r.mu.Unlock()
		if ended {
			return true, ErrAnswered // its execution ended: AWS answers TaskTimedOut
		}
		return false, nil
	}
	if _, answered := es.j.Outcomes[ref.key]; answered {
		r.mu.Unlock()
		return true, ErrAnswered
	}
	cur := es.current[ref.key]
	es.j.Outcomes[ref.key] = o
	deliver := r.deliver
	if cur != "" && deliver != nil {
		// Claimed now, so an invocation returning meanwhile does not deliver it a second time.
		es.delivered[ref.key] = true
	}
	r.mu.Unlock()
	undo := func() {
		r.mu.Lock()
		delete(es.j.Outcomes, ref.key)
		delete(es.delivered, ref.key)
		r.mu.Unlock()
	}
	if cur != "" {
		if err := probe(cur); err != nil {
			undo()
			return true, err
		}
	}
	r.syncCalls(ref.exec, es)
	if err := r.st.RecordOutcome(ref.exec, ref.key, o); err != nil {
		undo()
		return true, err
	}
	if cur == "" || deliver == nil {
		return true, nil // the replay delivers it when it reaches the task
	}
	if err := deliver(cur, o); err != nil {
		_ = r.st.ForgetOutcome(ref.exec, ref.key)
		undo()
		return true, err
	}
	return true, nil
}

// Now implements asl.Clock.
func (r *Recorder) Now() time.Time { return r.clock.Now() }

// AfterFunc implements asl.Clock. The engine arms a task's timeout and heartbeat at the deadline
// Deadline gives, so a replayed one fires when it was first due.
func (r *Recorder) AfterFunc(d time.Duration, f func()) func() bool { return r.clock.AfterFunc(d, f) }

// WaitFunc implements asl.Clock (a parked Wait state, for the time Deadline left it).
func (r *Recorder) WaitFunc(d time.Duration, f func()) func() bool { return r.clock.WaitFunc(d, f) }

// Sleep implements asl.Clock. Back-offs and Wait states inside Map and Parallel sleep for the time
// Deadline left them.
func (r *Recorder) Sleep(ctx context.Context, d time.Duration) error { return r.clock.Sleep(ctx, d) }

// Deadline implements asl.TimerClock: a timer of a journaled execution ends at the deadline of its
// first run. Waits and back-offs are journaled before they start (a crash must not start a long
// wait over); task timeouts and heartbeats, armed on every attempt, are journaled in the
// background (one lost in a crash re-arms in full).
func (r *Recorder) Deadline(ctx context.Context, kind asl.TimerKind, state string, d time.Duration) (time.Time, func(time.Duration) time.Time) {
	arn := ExecutionOf(ctx)
	now := r.clock.Now()
	r.mu.Lock()
	es := r.execs[arn]
	if es == nil {
		r.mu.Unlock()
		return now.Add(d), func(d time.Duration) time.Time { return r.clock.Now().Add(d) }
	}
	base := "t\x00" + string(kind) + "\x00" + state
	es.occ[base]++
	key := fmt.Sprintf("%s %s#%d", kind, state, es.occ[base])
	at, replay := es.j.Timers[key]
	r.mu.Unlock()
	background := kind == asl.TimerTimeout || kind == asl.TimerHeartbeat
	record := func(at time.Time) {
		if background {
			r.mu.Lock()
			r.pendLocked(arn, es, "t/"+key, encodeTime(at))
			r.mu.Unlock()
			return
		}
		r.syncCalls(arn, es)
		if err := r.st.RecordTimer(arn, key, at); err != nil {
			r.log.Error("journaling a deadline; it would start over after a restart", "execution", arn, "timer", key, "error", err)
		}
	}
	renew := func(d time.Duration) time.Time {
		at := r.clock.Now().Add(d)
		record(at)
		return at
	}
	if replay {
		return at, renew
	}
	at = now.Add(d)
	record(at)
	r.mu.Lock()
	es.j.Timers[key] = at
	r.mu.Unlock()
	return at, renew
}

// EventTime implements asl.TimerClock: a replayed event keeps the time it was first given, as long
// as the replay emits the events of the journal in the same order (the first event that differs
// ends that; Map iterations and Parallel branches may interleave differently).
func (r *Recorder) EventTime(ctx context.Context, id int64, typ string, now time.Time) time.Time {
	arn := ExecutionOf(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	es := r.execs[arn]
	if es == nil {
		return now
	}
	if s, ok := es.j.Events[id]; ok {
		if !es.diverged && s.Type == typ {
			return s.At
		}
		es.diverged = true
	}
	s := Stamp{At: now, Type: typ}
	es.j.Events[id] = s
	r.pendLocked(arn, es, "e/"+strconv.FormatInt(id, 10), encodeStamp(s))
	return now
}

// Child gives the name of the child execution that the execution of ctx starts now with a
// states:startExecution task of machine: name, or a new one when name is "". key is the start's
// place in its execution (asl.StartInput.Key). When the execution is replayed, it is the name of
// the child that the same start gave the first time, and replayed is true: the task re-attaches
// to the child it started before, even when its input differs now (a time in it). The name is
// journaled before the child starts, so a crash in between starts it on replay, and never twice.
// A task token in input (.waitForTaskToken) is journaled with it: the child answers the token it
// was given, which then reaches the replayed task's token.
func (r *Recorder) Child(ctx context.Context, machine, input, name, key string) (child string, replayed bool, err error) {
	arn := ExecutionOf(ctx)
	tok := tokenRE.FindString(input)
	r.mu.Lock()
	es := r.execs[arn]
	if es == nil {
		r.mu.Unlock()
		if name == "" {
			name = uuid.NewString()
		}
		return name, false, nil
	}
	jkey := childKey(es, machine, input, name, key)
	got, ok := es.j.Children[jkey]
	var pending *Outcome
	if ok && tok != "" {
		pending = r.reattachLocked(arn, es, jkey, tok)
	}
	deliver := r.deliver
	r.mu.Unlock()
	if ok {
		if pending != nil && deliver != nil {
			if err := deliver(tok, *pending); err != nil {
				r.log.Warn("replaying a task answer", "execution", arn, "error", err)
			}
		}
		return got, true, nil
	}
	if name == "" {
		name = uuid.NewString()
	}
	r.syncCalls(arn, es)
	if tok != "" {
		// The token is a promise to the child: journaled before the child can answer it.
		if err := r.st.RecordCall(arn, jkey, Call{Token: tok}); err != nil {
			return "", false, err
		}
	}
	if err := r.st.RecordChild(arn, jkey, name); err != nil {
		return "", false, err
	}
	r.mu.Lock()
	es.j.Children[jkey] = name
	if tok != "" {
		es.j.Calls[jkey] = Call{Token: tok}
		es.current[jkey] = tok
		r.addToken(arn, es, tok, jkey)
	}
	r.mu.Unlock()
	return name, false, nil
}

// childKey is the journal key of a child's start: by its place (key), or, without one, by its
// machine, name and input and how many identical starts came before it in this run.
func childKey(es *execState, machine, input, name, key string) string {
	h := sha256.New()
	parts := []string{machine, name, input}
	if key != "" {
		parts = []string{machine, name, "\x00at", key}
	}
	for _, part := range parts {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	base := "x" + hex.EncodeToString(h.Sum(nil)[:16])
	if key != "" {
		return base
	}
	es.occ[base]++
	return fmt.Sprintf("%s#%d", base, es.occ[base])
}

// reattachLocked points the journaled child start jkey at tok, the token its replayed task has
// now, and gives the child's answer to deliver to it, if one was journaled and not delivered yet.
// Call with r.mu held.
func (r *Recorder) reattachLocked(arn string, es *execState, jkey, tok string) *Outcome {
	es.current[jkey] = tok
	if _, known := r.tokens[tok]; !known {
		r.addToken(arn, es, tok, jkey)
	}
	if o, ok := es.j.Outcomes[jkey]; ok && !es.delivered[jkey] {
		es.delivered[jkey] = true
		return &o
	}
	return nil
}

// pendLocked queues a journal entry for the background writer. Call with r.mu held.
func (r *Recorder) pendLocked(arn string, es *execState, key string, v []byte) {
	if es.pending == nil {
		es.pending = map[string][]byte{}
		es.pendAt = time.Now()
	}
	es.pending[key] = v
	r.dirty[arn] = es
	if !r.flushing {
		r.flushing = true
		// The writer lingers a moment first, so that a short execution's closing record, which drops
		// its journal, usually comes before and its entries need no transaction of their own.
		time.AfterFunc(flushLinger, r.flushLoop)
	}
}

// flushLinger is how long queued journal entries wait for the background writer at least, unless
// a durable write of their execution takes them along first. The writer takes only entries that
// have waited that long: under a steady load a young execution's entries would otherwise cost a
// commit of their own (an fdatasync beside the requests' own) before its end drops them.
const flushLinger = 10 * time.Millisecond

// syncCalls makes the completed invocations queued for execution arn durable (with every entry
// queued so far, in one transaction). A failure is logged: those invocations would run again
// after a restart, as one that was running at a crash does.
func (r *Recorder) syncCalls(arn string, es *execState) {
	r.mu.Lock()
	synced := es.syncedGen >= es.callGen
	r.mu.Unlock()
	if synced {
		return
	}
	if err := r.Flush(); err != nil {
		r.log.Error("journaling invocations; they would run again after a restart", "execution", arn, "error", err)
	}
}

// batch is queued journal entries taken for one transaction, by execution, and the count of
// completed invocations of each execution that are durable once it commits.
type batch struct {
	entries map[string]map[string][]byte
	gens    map[*execState]uint64
}

// takeLocked gives the queued entries of every execution whose first one was queued at or before
// cutoff (every one with a zero cutoff), by execution, and when the oldest left was queued. Call
// with r.mu held.
func (r *Recorder) takeLocked(cutoff time.Time) (*batch, time.Time) {
	var b *batch
	var oldest time.Time
	for arn, es := range r.dirty {
		if !cutoff.IsZero() && es.pendAt.After(cutoff) {
			if oldest.IsZero() || es.pendAt.Before(oldest) {
				oldest = es.pendAt
			}
			continue
		}
		if b == nil {
			b = &batch{entries: map[string]map[string][]byte{}, gens: map[*execState]uint64{}}
		}
		b.entries[arn] = es.pending
		b.gens[es] = es.callGen
		es.pending = nil
		delete(r.dirty, arn)
	}
	return b, oldest
}

// write commits b; then its invocations count as durable.
func (r *Recorder) write(b *batch) error {
	if err := r.st.recordLate(b.entries); err != nil {
		return err
	}
	r.mu.Lock()
	for es, gen := range b.gens {
		es.syncedGen = max(es.syncedGen, gen)
	}
	r.mu.Unlock()
	return nil
}

// flushLoop writes the entries that have waited flushLinger, all of them in one transaction, and
// comes back when the next ones will have: event times cost no fsync of their own under load.
func (r *Recorder) flushLoop() {
	for {
		r.flushMu.Lock()
		r.mu.Lock()
		b, oldest := r.takeLocked(time.Now().Add(-flushLinger))
		if b == nil {
			if oldest.IsZero() {
				r.flushing = false
			} else {
				time.AfterFunc(time.Until(oldest.Add(flushLinger)), r.flushLoop)
			}
			r.mu.Unlock()
			r.flushMu.Unlock()
			return
		}
		r.mu.Unlock()
		if err := r.write(b); errors.Is(err, ErrClosed) {
			r.log.Debug("journal closed (shutting down): event times and timeouts not journaled", "error", err)
		} else if err != nil {
			r.log.Error("journaling event times and timeouts; a restart would re-arm or re-time them", "error", err)
		}
		r.flushMu.Unlock()
	}
}

// Flush makes every journal entry queued so far durable (GetExecutionHistory calls it before it
// shows event times, so a restart shows the same).
func (r *Recorder) Flush() error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	b, _ := r.takeLocked(time.Time{})
	r.mu.Unlock()
	if b == nil {
		return nil
	}
	return r.write(b)
}

// Current gives the token the engine knows now for tok: tok itself, or, for a token issued before
// a restart, the one its task got when it was replayed. waiting is true when that task has not
// been replayed yet (it is still waiting, so a heartbeat has nothing to reset).
func (r *Recorder) Current(tok string) (current string, waiting bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, ok := r.tokens[tok]
	es := r.execs[ref.exec]
	if !ok || es == nil {
		return tok, false
	}
	if _, answered := es.j.Outcomes[ref.key]; answered {
		return tok, false
	}
	if cur := es.current[ref.key]; cur != "" {
		return cur, false
	}
	return tok, true
}

// TokenExecution gives the execution a task token was issued to ("" for a token of no running
// execution): Step Functions authorizes SendTask* against that execution's state machine, so the
// IAM recording of local mode asks it before the answer ends the task.
func (r *Recorder) TokenExecution(tok string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tokens[tok].exec
}
