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

// idemTTL is how long an Idempotency-Key's answer is kept.
const idemTTL = 24 * time.Hour

// recordAnswer records a chat's answer (out or err) in its Idempotency-Key's record, and gives it.
func (s *Service) recordAnswer(ctx context.Context, dev, key string, out *Reply, err error) (*Reply, error) {
	var value any
	switch k := fault.KindOf(err); {
	case err == nil:
		var v any
		if cerr := jsonv.Convert(out, &v); cerr != nil {
			return nil, fmt.Errorf("chat: recording the answer: %w", cerr)
		}
		// By reference when large: the record is one item (400 KB), the answer up to 1 MiB.
		ref, serr := s.d.Store.StoreValue(ctx, dev, v, idemTTL)
		if serr != nil {
			s.d.Log.WarnContext(ctx, "chat: storing the answer for its Idempotency-Key", "error", serr.Error())
			return out, nil
		}
		value = map[string]any{"response": ref}
	case k == fault.Transient || k == fault.Timeout || k == fault.Internal || k == fault.Conflict || k == "":
		// Conflict: the session was busy (a hand-off still running); a repeat once it ends runs.
		value = map[string]any{"retry": true}
	default:
		// A refusal is answered again as the same refusal.
		value = map[string]any{"error": map[string]any{"type": string(k), "message": faultMessage(err)}}
	}
	if _, uerr := s.d.Store.UpdateIdempotency(ctx, dev, key, value); uerr != nil {
		// The turn is saved and answered; a repeat finds the record running until its lease
		// lapses, and then runs (the history has the turn).
		s.d.Log.WarnContext(ctx, "chat: recording the idempotency answer", "error", uerr.Error())
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

func idemRecordKey(dev, sessionID, key string) string {
	h := sha256.Sum256([]byte(dev + "\x00POST /sessions/" + sessionID + "/chat\x00" + key))
	return "chat#" + hex.EncodeToString(h[:24])
}

// idemTurn is what a chat under an Idempotency-Key knows of its record: from is where the turn's
// messages begin in the history once a step was saved (-1 before), iterations the model calls
// they hold.
type idemTurn struct {
	key, rec   string
	from       int
	iterations int
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

// takeOver is the turn a repeat takes over from a try whose lease lapsed.
func takeOver(key, rec string, m map[string]any) *idemTurn {
	t := &idemTurn{key: key, rec: rec, from: -1}
	if f, ok := m["from"].(int64); ok {
		t.from = int(f)
		it, _ := m["iterations"].(int64)
		t.iterations = int(it)
	}
	return t
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
	if _, err := r.s.d.Store.UpdateIdempotency(ctx, r.c.DeveloperID, r.idem.rec, v); err != nil {
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
