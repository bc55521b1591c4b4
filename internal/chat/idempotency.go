package chat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// A chat under an Idempotency-Key has a record (idemRecordKey), read with the turn and written with
// the turn's writes: running with the turn's progress from its first step that runs tools, then
// the answer. A repeat is answered by the record: the first answer, the same refusal, a 409 while
// the first try runs; a first try that stopped is taken over (its lease lapsed), or answered by the
// hand-off it started.

// idemTTL is how long an Idempotency-Key's answer is kept.
const idemTTL = 24 * time.Hour

// errKeyRunning answers a repeat while its first try runs.
var errKeyRunning = fault.New(fault.Conflict, "a chat request with this Idempotency-Key is still running; repeat it once it has answered")

func idemRecordKey(dev, sessionID, key string) string {
	h := sha256.Sum256([]byte(dev + "\x00POST /sessions/" + sessionID + "/chat\x00" + key))
	return "chat#" + hex.EncodeToString(h[:24])
}

// idemTurn is what a chat under an Idempotency-Key knows of its record: from is where the turn's
// messages begin in the history once a step was saved (-1 before), iterations the model calls
// they hold; held is the record as last read or written (nil: none yet), and done that the record
// needs nothing more of this try (its answer is written, or the record was another try's answer).
type idemTurn struct {
	key, rec   string
	from       int
	iterations int
	held       *store.IdemRecord
	done       bool
}

// idempotent heeds the Idempotency-Key's record read with the turn: a repeat of an answered
// request is answered the same, a repeat while the first try runs is a 409, and a first try that
// stopped (its lease lapsed) is answered by its hand-off, or taken over from its last saved step.
func (r *chatRun) idempotent(ctx context.Context, rec *store.IdemRecord) (*Reply, error) {
	if r.idem == nil || rec == nil {
		return nil, nil
	}
	r.idem.held = rec
	m, _ := rec.Value.(map[string]any)
	if reply, err, ok := r.recorded(ctx, m); ok {
		r.idem.done = true
		return reply, err
	}
	switch {
	case m["retry"] == true:
		// The first try failed in a way worth trying again: this repeat runs it.
		return nil, nil
	case m["running"] != true || !r.s.lapsed(rec, m):
		r.idem.done = true
		return nil, errKeyRunning
	}
	// The first try stopped after handing the turn off: the repeat answers that hand-off, and
	// never hands the same turn off twice.
	out, err := r.s.handedOff(ctx, r.c.DeveloperID, m)
	if err != nil {
		r.idem.done = true
		return nil, err
	}
	if out != nil {
		return out, nil
	}
	// Else it stopped mid-turn: this repeat takes the turn over from its last saved step.
	r.idem = takeOver(r.idem, m)
	return nil, nil
}

// answerHeld answers a request under an Idempotency-Key that found the session's turn held (busy):
// by its first try's answer when the record has one, and a 409 naming the key while the first
// try runs; else busy.
func (r *chatRun) answerHeld(ctx context.Context, holder string, busy error) (*Reply, error) {
	if holder == r.idem.rec {
		r.idem.done = true
		return nil, errKeyRunning
	}
	rec, err := r.s.d.Store.GetIdempotency(ctx, r.c.DeveloperID, r.idem.rec)
	if fault.Is(err, fault.NotFound) {
		return nil, busy
	}
	if err != nil {
		return nil, fmt.Errorf("chat: idempotency record: %w", err)
	}
	r.idem.held = rec
	m, _ := rec.Value.(map[string]any)
	if reply, err, ok := r.recorded(ctx, m); ok {
		r.idem.done = true
		return reply, err
	}
	if m["running"] == true && !r.s.lapsed(rec, m) {
		r.idem.done = true
		return nil, errKeyRunning
	}
	return nil, busy
}

// recorded is the answer a record m holds, if it holds one (ok).
func (r *chatRun) recorded(ctx context.Context, m map[string]any) (_ *Reply, _ error, ok bool) {
	switch {
	case m["response"] != nil:
		v, err := r.s.d.Store.LoadValue(ctx, r.c.DeveloperID, m["response"])
		if err != nil {
			return nil, fmt.Errorf("chat: the recorded answer: %w", err), true
		}
		var out Reply
		if err := jsonv.Convert(v, &out); err != nil {
			return nil, fmt.Errorf("chat: the recorded answer: %w", err), true
		}
		return &out, nil, true
	case m["error"] != nil:
		e, _ := m["error"].(map[string]any)
		typ, _ := e["type"].(string)
		msg, _ := e["message"].(string)
		return nil, fault.New(fault.Kind(typ), "%s", msg), true
	}
	return nil, nil, false
}

// idemRecord is the Idempotency-Key's record holding value, keeping its first write's expiry.
func (r *chatRun) idemRecord(value any) *store.IdemRecord {
	rec := &store.IdemRecord{Key: r.idem.rec, Value: value}
	if h := r.idem.held; h != nil {
		rec.CreatedAt, rec.ExpiresAt = h.CreatedAt, h.ExpiresAt
	} else {
		now := r.s.d.Now().UTC()
		rec.CreatedAt, rec.ExpiresAt = now, now.Add(idemTTL)
	}
	r.idem.held = rec
	return rec
}

// answerRecord is the record of out as the Idempotency-Key's answer (nil without a key, or when the
// answer cannot be stored: the record then stays running until its lease lapses, and a repeat
// takes the turn over, which the history has whole).
func (r *chatRun) answerRecord(ctx context.Context, out *Reply) *store.IdemRecord {
	if r.idem == nil {
		return nil
	}
	v, err := r.storeAnswer(ctx, out)
	if err != nil {
		r.s.d.Log.WarnContext(ctx, "chat: storing the answer for its Idempotency-Key", "error", err.Error())
		r.idem.done = true
		return nil
	}
	return r.idemRecord(map[string]any{"response": v})
}

// storeAnswer is out as a record keeps it: by reference when large, for the record is one item
// (400 KB) and the answer up to 1 MiB.
func (r *chatRun) storeAnswer(ctx context.Context, out *Reply) (any, error) {
	var v any
	if err := jsonv.Convert(out, &v); err != nil {
		return nil, err
	}
	return r.s.d.Store.StoreValue(ctx, r.c.DeveloperID, v, idemTTL)
}

// recordAnswer records a chat's answer (out or err) in its Idempotency-Key's record, when the
// turn's last write did not, and gives it.
func (r *chatRun) recordAnswer(ctx context.Context, out *Reply, err error) (*Reply, error) {
	var rec *store.IdemRecord
	switch k := fault.KindOf(err); {
	case err == nil:
		if rec = r.answerRecord(ctx, out); rec == nil {
			return out, nil
		}
	case k == fault.Transient || k == fault.Timeout || k == fault.Internal || k == fault.Conflict || k == "":
		// Conflict: the session was busy (a hand-off still running); a repeat once it ends runs.
		rec = r.idemRecord(map[string]any{"retry": true})
	default:
		// A refusal is answered again as the same refusal.
		rec = r.idemRecord(map[string]any{"error": map[string]any{"type": string(k), "message": faultMessage(err)}})
	}
	if werr := r.s.d.Store.WriteIdempotency(context.WithoutCancel(ctx), r.c.DeveloperID, rec); werr != nil {
		// The turn is saved and answered; a repeat finds the record running until its lease
		// lapses, and then runs (the history has the turn).
		r.s.d.Log.WarnContext(ctx, "chat: recording the idempotency answer", "error", werr.Error())
	}
	return out, err
}

func faultMessage(err error) string {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe.Msg
	}
	return err.Error()
}

// running is the record's value while a try runs: its lease, and the turn's progress.
func (s *Service) running(t *idemTurn) map[string]any {
	m := map[string]any{"running": true, "lease_until": s.d.Now().Add(s.d.Budget + turnMargin).UTC().Format(time.RFC3339Nano)}
	if t != nil && t.from >= 0 {
		m["from"], m["iterations"] = int64(t.from), int64(t.iterations)
	}
	return m
}

// lapsed reports whether a running record's try has stopped (its lease passed): it takes turns
// no longer than the budget and its margin.
func (s *Service) lapsed(rec *store.IdemRecord, m map[string]any) bool {
	until, err := time.Parse(time.RFC3339Nano, str(m["lease_until"]))
	if err != nil {
		until = rec.CreatedAt.Add(s.d.Budget + turnMargin)
	}
	return s.d.Now().After(until)
}

// takeOver is t taking over the turn of a try whose lease lapsed, from what its record m says.
func takeOver(t *idemTurn, m map[string]any) *idemTurn {
	out := &idemTurn{key: t.key, rec: t.rec, from: -1, held: t.held}
	if f, ok := m["from"].(int64); ok {
		out.from = int(f)
		it, _ := m["iterations"].(int64)
		out.iterations = int(it)
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// noteHandoff records in the Idempotency-Key's record the agent_loop execution the turn is about
// to be handed to, before it starts: a try that stops once it has started (its answer lost) is
// answered by a repeat with that execution (handedOff), not handed off again, which would add the
// request's messages to the history twice.
func (r *chatRun) noteHandoff(ctx context.Context, name string) error {
	if r.idem == nil {
		return nil
	}
	v := r.s.running(r.idem)
	v["handoff"] = name
	if err := r.s.d.Store.WriteIdempotency(ctx, r.c.DeveloperID, r.idemRecord(v)); err != nil {
		return fmt.Errorf("chat: recording the hand-off: %w", err)
	}
	return nil
}

// handedOff is the 202 of a try whose record m names a hand-off that started (nil when it names
// none, or one that never started: the repeat then runs the turn).
func (s *Service) handedOff(ctx context.Context, dev string, m map[string]any) (*Reply, error) {
	name, _ := m["handoff"].(string)
	if name == "" {
		return nil, nil
	}
	started := &workflow.Started{ExecutionID: name, Status: store.ExecRunning}
	x, err := s.d.Store.GetExecution(ctx, dev, name)
	switch {
	case err == nil:
		started.Status = x.Status
	case !fault.Is(err, fault.NotFound):
		return nil, fmt.Errorf("chat: the first try's hand-off: %w", err)
	case s.d.Liveness == nil:
		return nil, nil
	default:
		// Started but not recorded yet (the try stopped in between): Step Functions knows it.
		exists, err := s.d.Liveness.Exists(ctx, workflow.AgentLoop, name)
		if err != nil {
			return nil, fmt.Errorf("chat: the first try's hand-off: %w", err)
		}
		if !exists {
			return nil, nil
		}
	}
	return &Reply{Status: http.StatusAccepted, Started: started}, nil
}
