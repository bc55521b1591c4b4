package durable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

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
// invoker and clock: give the engine Recorder as its LambdaInvoker and Clock.
type Recorder struct {
	st    *Store
	inner asl.LambdaInvoker
	clock asl.Clock
	log   *slog.Logger

	mu      sync.Mutex
	execs   map[string]*execState
	tokens  map[string]tokenRef // every token a running execution's calls were given
	deliver func(token string, o Outcome) error
}

type tokenRef struct{ exec, key string }

type execState struct {
	j         *Journal
	occ       map[string]int    // occurrences of each call's base key, in this run
	sleeps    uint64            // sleeps so far, in this run
	current   map[string]string // call key -> the token the engine knows now
	delivered map[string]bool   // call keys whose outcome went to the engine in this run
}

// NewRecorder wraps inner and clock (nil clock: asl.RealClock).
func NewRecorder(st *Store, inner asl.LambdaInvoker, clock asl.Clock, log *slog.Logger) *Recorder {
	if clock == nil {
		clock = asl.RealClock{}
	}
	if log == nil {
		log = slog.Default()
	}
	return &Recorder{st: st, inner: inner, clock: clock, log: log, execs: map[string]*execState{}, tokens: map[string]tokenRef{}}
}

// SetDeliver sets how a journaled answer reaches the engine on replay (the engine's SendTask*).
func (r *Recorder) SetDeliver(f func(token string, o Outcome) error) {
	r.mu.Lock()
	r.deliver = f
	r.mu.Unlock()
}

// Begin starts journaling execution arn, replaying its journal if it has one. Call it before the
// engine starts the execution.
func (r *Recorder) Begin(arn string) error {
	j, err := r.st.LoadJournal(arn)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.execs[arn] = &execState{j: j, occ: map[string]int{}, current: map[string]string{}, delivered: map[string]bool{}}
	for key, c := range j.Calls {
		if c.Token != "" {
			r.tokens[c.Token] = tokenRef{exec: arn, key: key}
		}
	}
	return nil
}

// End stops journaling arn (its closed record has dropped the journal).
func (r *Recorder) End(arn string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.execs, arn)
	for tok, ref := range r.tokens {
		if ref.exec == arn {
			delete(r.tokens, tok)
		}
	}
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
			r.tokens[tok] = tokenRef{exec: arn, key: key}
		}
		if o, ok := es.j.Outcomes[key]; ok && done && !es.delivered[key] {
			pending = &o
			es.delivered[key] = true
		}
	}
	deliver := r.deliver
	r.mu.Unlock()

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
	if jerr := r.st.RecordCall(arn, key, call); jerr != nil {
		r.log.Error("journaling an invocation; it would run again after a restart", "execution", arn, "error", jerr)
	}
	r.mu.Lock()
	es.j.Calls[key] = call
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
		r.mu.Unlock()
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

// AfterFunc implements asl.Clock. Task timeouts and heartbeats are re-armed in full on replay.
func (r *Recorder) AfterFunc(d time.Duration, f func()) func() bool { return r.clock.AfterFunc(d, f) }

// Sleep implements asl.Clock: Wait states and retry back-offs of a journaled execution end at the
// deadline of their first run, so a back-off that a crash interrupted takes only the time left.
func (r *Recorder) Sleep(ctx context.Context, d time.Duration) error {
	arn := ExecutionOf(ctx)
	r.mu.Lock()
	es := r.execs[arn]
	if es == nil {
		r.mu.Unlock()
		return r.clock.Sleep(ctx, d)
	}
	es.sleeps++
	n := es.sleeps
	deadline, replay := es.j.Sleeps[n]
	r.mu.Unlock()
	now := r.clock.Now()
	if replay {
		return r.clock.Sleep(ctx, max(deadline.Sub(now), 0))
	}
	deadline = now.Add(d)
	if err := r.st.RecordSleep(arn, n, deadline); err != nil {
		r.log.Error("journaling a sleep; it would start over after a restart", "execution", arn, "error", err)
	}
	r.mu.Lock()
	es.j.Sleeps[n] = deadline
	r.mu.Unlock()
	return r.clock.Sleep(ctx, d)
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

// WaitFunc implements asl.Clock. A parked Wait state's wake-up carries no execution, so it is not
// journaled: after a restart a relative Wait (Seconds) starts over; a Timestamp wait is exact.
// TODO(asl): journal it too once the engine passes the execution (see the report).
func (r *Recorder) WaitFunc(d time.Duration, f func()) func() bool { return r.clock.WaitFunc(d, f) }
