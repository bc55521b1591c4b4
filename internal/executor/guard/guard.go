// Package guard runs a tool call once per (developer, call id).
//
// A repeated invocation of the same call (a Lambda retry, a crash and restart, the chat path trying
// again) answers the recorded result instead of sending the email twice. Its claim format is shared
// with the route that writes a call's first claim with its execution's record (Running).
package guard

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Records is the part of the store the guard uses: idempotency records with a TTL.
type Records interface {
	PutIdempotency(ctx context.Context, dev, key string, value any, ttl time.Duration) (*store.IdemRecord, bool, error)
	UpdateIdempotency(ctx context.Context, dev, key string, value any) (*store.IdemRecord, error)
	// TakeOverIdempotency replaces the value only if the record still holds held (its Raw form):
	// false, no error, when another writer changed it since it was read.
	TakeOverIdempotency(ctx context.Context, dev, key string, held *store.IdemRecord, value any) (*store.IdemRecord, bool, error)
}

var _ Records = (*store.Store)(nil)

// Defaults of a Guard.
const (
	// DefaultTTL keeps a call's record as long as its pending-call record is kept after a wait.
	DefaultTTL = store.CallRetention
	// DefaultLease is how long a run holds a call without renewing it before another invocation
	// may take over. A live run renews it every third of the lease, so a crashed run's call is
	// free again within it: shorter than the state machines' Retry budget, which a lease as long
	// as the longest executor (11 minutes) outlasted, turning a crash into an error result.
	DefaultLease = 30 * time.Second
	// DefaultWait is how long an invocation that finds the call claimed waits for the claim to
	// lapse before answering Transient. The Retry budget alone cannot be trusted to outlast a
	// lease: with full jitter its six back-offs add up to under 30 s in about one run in twenty.
	// A Task gets seven attempts, so seven waits of a sixth of the lease outlast it whatever the
	// jitter draws, and the call of a crashed run ends with its result, not an error.
	DefaultWait = DefaultLease / 6
)

// Record states.
const (
	stateRunning = "running" // a run holds the call until "until" (Unix ms)
	stateDone    = "done"    // output holds the result's output
	stateFailed  = "failed"  // error holds {type, message}: a permanent failure, answered again as is
	stateRetry   = "retry"   // the last run failed transiently: the next one runs again
)

// Guard makes an executor idempotent by call id.
type Guard struct {
	Records Records
	TTL     time.Duration    // DefaultTTL when 0
	Lease   time.Duration    // DefaultLease when 0
	Wait    time.Duration    // DefaultWait when 0; no wait when negative
	Now     func() time.Time // time.Now when nil
}

func (g *Guard) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Key is the record key of a call.
func Key(callID string) string { return "call#" + callID }

// What names a call in its claim: its type and tool ("integration/echo"), so a record made for
// another call under the same id is never taken for this one's.
func What(c tool.Call) string { return string(c.Type) + "/" + c.Name() }

// Run runs fn for the call unless it already ran: a completed run's output is answered as
// recorded, a permanent failure is answered again as the same typed error, and a run still in
// progress elsewhere is Transient (try again later) once Wait has passed without its claim lapsing. A transient failure is recorded so that the
// next invocation runs again. fn's output must be small enough for a record (store large outputs
// first and return their reference).
//
// what names the call (its type and tool, e.g. "integration/echo"): a record made for another call
// under the same id is a Conflict, never another call's result.
func (g *Guard) Run(ctx context.Context, dev, callID, what string, fn func(context.Context) (any, error)) (any, error) {
	return g.run(ctx, dev, callID, what, false, fn)
}

// RunHeld is Run for a call whose claim the caller holds already: one made for this invocation
// when the call was started (the first attempt of a tool_call execution, whose route wrote the
// claim with its record). It skips the claim's write and runs fn, renewing the claim and recording
// the outcome as Run does.
func (g *Guard) RunHeld(ctx context.Context, dev, callID, what string, fn func(context.Context) (any, error)) (any, error) {
	return g.run(ctx, dev, callID, what, true, fn)
}

// Running is the claim a run holds until lease from now: what a route writes for the first
// attempt it starts (RunHeld).
func Running(what string, until time.Time) map[string]any {
	return map[string]any{"state": stateRunning, "call": what, "until": until.UnixMilli()}
}

// Done gives the output of a claim that records a completed run.
func Done(claim any) (output any, ok bool) {
	v, _ := claim.(map[string]any)
	if v["state"] != stateDone {
		return nil, false
	}
	return v["output"], true
}

// WithoutOutput is a completed run's claim less its output, for a record that keeps the output
// beside it (a tool_call execution's, in its result object): nil for any other claim.
func WithoutOutput(claim any) map[string]any {
	if _, ok := Done(claim); !ok {
		return nil
	}
	lean := map[string]any{}
	for k, v := range claim.(map[string]any) {
		if k != "output" {
			lean[k] = v
		}
	}
	return lean
}

// Lean reports whether claim is a completed run's claim without its output (WithoutOutput's).
func Lean(claim any) bool {
	v, _ := claim.(map[string]any)
	_, has := v["output"]
	return v["state"] == stateDone && !has
}

// WithOutput is a lean claim with output put back.
func WithOutput(claim any, output any) map[string]any {
	v, _ := claim.(map[string]any)
	out := make(map[string]any, len(v)+1)
	for k, x := range v {
		out[k] = x
	}
	out["output"] = output
	return out
}

func (g *Guard) run(ctx context.Context, dev, callID, what string, held bool, fn func(context.Context) (any, error)) (any, error) {
	if callID == "" {
		return nil, fault.Invalid("call.id", "call.id is required")
	}
	ttl, lease := g.TTL, g.Lease
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if lease <= 0 {
		lease = DefaultLease
	}
	key := Key(callID)
	var mine *store.IdemRecord // the claim as this run wrote it; nil when the caller wrote it
	if !held {
		out, rec, err := g.claim(ctx, dev, callID, key, what, lease, ttl)
		if rec == nil || err != nil {
			return out, err
		}
		mine = rec
	}
	stop := g.keepClaim(ctx, dev, key, what, lease, mine)
	out, runErr := fn(ctx)
	stop()
	var final map[string]any
	switch k := fault.KindOf(runErr); {
	case runErr == nil:
		final = map[string]any{"state": stateDone, "call": what, "output": out}
	case k == fault.Transient || k == fault.Internal:
		// Worth another run (Internal: a fault of sinew's own, perhaps fixed by a deploy).
		final = map[string]any{"state": stateRetry, "call": what}
	default:
		final = map[string]any{"state": stateFailed, "call": what, "error": map[string]any{"type": string(k), "message": fault.Message(runErr)}}
	}
	if err := g.record(ctx, dev, key, mine, final); err != nil {
		// The outcome stands: failing a run whose side effect happened would make the caller
		// retry it. The record stays "running" until its lease ends.
		slog.WarnContext(ctx, "recording a call's outcome failed", "call_id", callID, "error", err)
	}
	return out, runErr
}

// replacer is the write of a record's value by a caller that holds the record (store.Store's
// ReplaceIdempotency): one request where UpdateIdempotency reads the record first.
type replacer interface {
	ReplaceIdempotency(ctx context.Context, dev, key string, held *store.IdemRecord, value any) (*store.IdemRecord, error)
}

// record writes a run's outcome over its claim. mine, the claim as this run wrote it, gives the
// record's expiry, which renewals keep.
func (g *Guard) record(ctx context.Context, dev, key string, mine *store.IdemRecord, final any) error {
	if r, ok := g.Records.(replacer); ok && mine != nil && !mine.ExpiresAt.IsZero() {
		_, err := r.ReplaceIdempotency(ctx, dev, key, mine, final)
		return err
	}
	_, err := g.Records.UpdateIdempotency(ctx, dev, key, final)
	return err
}

// claim takes the call for this run and answers the claim it wrote (mine). mine is nil when the
// call's record answers it instead (a completed run's output, a permanent failure, or a run in
// progress elsewhere as err).
func (g *Guard) claim(ctx context.Context, dev, callID, key, what string, lease, ttl time.Duration) (_ any, mine *store.IdemRecord, _ error) {
	running := Running(what, g.now().Add(lease))
	rec, created, err := g.Records.PutIdempotency(ctx, dev, key, running, ttl)
	if err != nil {
		return nil, nil, fmt.Errorf("claim call %s: %w", callID, err)
	}
	if created {
		return nil, rec, nil
	}
	v, _ := rec.Value.(map[string]any)
	if v["call"] != what {
		return nil, nil, fault.New(fault.Conflict, "call id %s was already used for another call (%v); every call needs its own id", callID, v["call"])
	}
	switch v["state"] {
	case stateDone:
		return v["output"], nil, nil
	case stateFailed:
		e, _ := v["error"].(map[string]any)
		typ, _ := e["type"].(string)
		msg, _ := e["message"].(string)
		return nil, nil, &fault.Error{Kind: fault.Kind(typ), Msg: msg}
	case stateRunning:
		if until, _ := v["until"].(int64); g.now().UnixMilli() < until {
			if g.waitLapse(ctx, until) {
				// Waited: look again (the claim may have been renewed, or taken, meanwhile).
				w := *g
				w.Wait = -1
				return w.claim(ctx, dev, callID, key, what, lease, ttl)
			}
			return nil, nil, inProgress(callID)
		}
		// The run that held it is gone (a crash): run again. Whether its side effect
		// happened cannot be known; this is the at-least-once edge of a crash.
	}
	// Take the lapsed or retry claim only as read: another invocation that read it too (a waiter
	// woken at the same lapse, an orphaned attempt beside the Retry's next) may take it first,
	// and then this one must not run the call as well.
	mine, took, err := g.Records.TakeOverIdempotency(ctx, dev, key, rec, running)
	if err != nil {
		return nil, nil, fmt.Errorf("claim call %s: %w", callID, err)
	}
	if !took {
		return nil, nil, inProgress(callID)
	}
	return nil, mine, nil
}

func inProgress(callID string) error {
	return fault.New(fault.Transient, "call %s is being run by another invocation; try again shortly", callID)
}

// waitLapse waits for a claim held until untilMs (Unix ms) to lapse, at most g's Wait and never
// past ctx's deadline; it reports whether it waited.
func (g *Guard) waitLapse(ctx context.Context, untilMs int64) bool {
	wait := g.Wait
	if wait == 0 {
		wait = DefaultWait
	}
	wait = min(wait, time.UnixMilli(untilMs).Sub(g.now())+10*time.Millisecond)
	if dl, ok := ctx.Deadline(); wait <= 0 || ok && time.Until(dl) < wait+time.Second {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// keepClaim renews the run's claim on the call every third of the lease until stop is called (which
// waits for a renewal under way, so the outcome is written after the last renewal, never before).
// mine is the claim as this run wrote it (nil when the caller wrote it): a renewal replaces only
// that, so a run that stalled past its lease does not take back a claim another invocation has
// taken over since.
func (g *Guard) keepClaim(ctx context.Context, dev, key, what string, lease time.Duration, mine *store.IdemRecord) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				var ok bool
				if mine, ok = g.renew(ctx, dev, key, Running(what, g.now().Add(lease)), mine); !ok {
					return
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// renew writes next over mine and answers the claim as now written (nil when unknown, which makes
// the next renewal unconditional); ok is false when another invocation has taken the call over.
func (g *Guard) renew(ctx context.Context, dev, key string, next map[string]any, mine *store.IdemRecord) (_ *store.IdemRecord, ok bool) {
	var rec *store.IdemRecord
	var err error
	if mine == nil || mine.Raw == "" {
		rec, err = g.Records.UpdateIdempotency(ctx, dev, key, next)
	} else {
		var took bool
		rec, took, err = g.Records.TakeOverIdempotency(ctx, dev, key, mine, next)
		if err == nil && !took {
			slog.WarnContext(ctx, "a call's claim was taken over by another invocation while this run held it; "+
				"the call may run twice", "key", key)
			return nil, false
		}
	}
	if err != nil {
		// Whether the write landed is unknown: the next renewal is unconditional, as a
		// conditional one on a claim that did change would read as a takeover.
		if ctx.Err() == nil {
			slog.WarnContext(ctx, "renewing a call's claim failed", "key", key, "error", err)
		}
		return nil, true
	}
	return rec, true
}
