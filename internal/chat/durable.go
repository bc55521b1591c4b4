package chat

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// A chat turn is saved step by step, as agent_loop's are: the model's reply when it asks for
// tools (before they run), and their results once fed. While a step's calls run, the session's
// open-turn record names the turn; a process that dies then leaves the record behind. A repeat
// under the same Idempotency-Key takes the turn over once the first try's lease lapses, and goes
// on from what was saved, its calls under the same ids (derived from the turn), so an executor
// that ran one answers its recorded result. Any other request closes the dead turn's unanswered
// calls (an error the model sees) before it runs.

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

// callIDs derives the sinew call ids of turnKey's calls from the session, the turn and the
// model's call id in its iteration.
func callIDs(dev, sessionID, turnKey string) func(int, string) string {
	return func(iteration int, modelCallID string) string {
		h := sha256.Sum256([]byte("sinew/chat\x00" + dev + "\x00" + sessionID + "\x00" + turnKey + "\x00" + strconv.Itoa(iteration) + "\x00" + modelCallID))
		return "call_" + base64.RawURLEncoding.EncodeToString(h[:18])
	}
}

// openKey is the record naming the turn whose step is running in a session.
func openKey(sessionID string) string { return "chat-open#" + sessionID }

const openTTL = 30 * 24 * time.Hour

// turnKey names r's turn: its Idempotency-Key, else its turn id.
func (r *chatRun) turnKey() string {
	if r.idem != nil {
		return "key:" + r.idem.key
	}
	return "turn:" + r.turnID
}

// stepBegun saves the model's reply that asks for tools, with what comes before it, before the
// tools run; the open-turn record names the turn until their results are saved.
func (r *chatRun) stepBegun(ctx context.Context) error {
	dev := r.c.DeveloperID
	mark := map[string]any{"turn": r.turnKey()}
	if _, created, err := r.s.d.Store.PutIdempotency(ctx, dev, openKey(r.sessionID), mark, openTTL); err != nil {
		return err
	} else if !created {
		if _, err := r.s.d.Store.UpdateIdempotency(ctx, dev, openKey(r.sessionID), mark); err != nil {
			return err
		}
	}
	return r.progress(ctx)
}

// stepDone saves the step's tool messages and clears the open-turn record.
func (r *chatRun) stepDone(ctx context.Context) error {
	if err := r.progress(ctx); err != nil {
		return err
	}
	r.closeOpen(ctx)
	return nil
}

// progress saves what is not saved yet and records how far the turn has come.
func (r *chatRun) progress(ctx context.Context) error {
	if err := r.persist(ctx); err != nil {
		return err
	}
	if r.idem == nil {
		return nil
	}
	if r.idem.from < 0 {
		r.idem.from = r.base - r.sys
	}
	r.idem.iterations = r.st.Iterations
	if _, err := r.s.d.Store.UpdateIdempotency(ctx, r.c.DeveloperID, r.idem.rec, r.s.running(r.idem)); err != nil {
		r.s.d.Log.WarnContext(ctx, "chat: recording the turn's progress", "error", err.Error())
	}
	return nil
}

// closeOpen deletes the open-turn record.
func (r *chatRun) closeOpen(ctx context.Context) {
	dev := r.c.DeveloperID
	rec, err := r.s.d.Store.GetIdempotency(ctx, dev, openKey(r.sessionID))
	if err == nil {
		err = r.s.d.Store.ReleaseIdempotency(context.WithoutCancel(ctx), dev, openKey(r.sessionID), rec)
	}
	if err != nil && !fault.Is(err, fault.NotFound) {
		r.s.d.Log.WarnContext(ctx, "chat: clearing the open turn", "error", err.Error())
	}
}

// closeDead answers in the history the unanswered calls of a turn whose process stopped while
// they ran (an open-turn record is left: the caller holds the session's turn, so no live chat
// holds it), so the session goes on: the model is told they were interrupted. It answers the
// history as it now is.
func (s *Service) closeDead(ctx context.Context, dev, sessionID string, history []llm.Message) ([]llm.Message, error) {
	rec, err := s.d.Store.GetIdempotency(ctx, dev, openKey(sessionID))
	if fault.Is(err, fault.NotFound) {
		return history, nil
	}
	if err != nil {
		return nil, err
	}
	var msgs []llm.Message
	open := map[string]bool{}
	for _, id := range loop.Unanswered(history) {
		open[id] = true
	}
	for _, c := range lastAssistant(history).ToolCalls {
		if open[c.ID] {
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name,
				Content: jsonv.EncodeString(map[string]any{"type": string(fault.Transient),
					"error": "the call was interrupted: the process running the chat stopped while it ran, and it may or may not have taken effect"})})
		}
	}
	if err := s.save(ctx, dev, sessionID, msgs); err != nil {
		return nil, err
	}
	if err := s.d.Store.ReleaseIdempotency(ctx, dev, openKey(sessionID), rec); err != nil {
		return nil, err
	}
	return append(history, msgs...), nil
}

func lastAssistant(msgs []llm.Message) llm.Message {
	st := loop.State{Messages: msgs}
	return st.Last()
}

// early are the tool messages of the running step saved as each call completed, while the step's
// other calls still ran: a process that dies mid-step keeps the results that came, and a repeat
// runs only the calls left unanswered. The step's later saves skip them (unsavedOf), so the
// history holds the step's answers in the order they came, the conversation in the model's.
type early struct {
	mu       sync.Mutex
	answered map[string]bool // the model call ids the saved messages answer
	calls    map[string]bool // the sinew call ids of their calls
}

// savingEach wraps the runner so that each result is saved as it comes, under a key of its call
// id (saved once however often it is tried). An error result that comes once the step's context
// is done is not: the budget may have cut the call off, and agent_loop runs it again.
func (r *chatRun) savingEach(next loop.Runner) loop.Runner {
	return loop.RunnerFunc(func(ctx context.Context, call *tool.Call, def *tool.Tool) tool.Result {
		res := next.Run(ctx, call, def)
		if res.Error != nil && ctx.Err() != nil {
			return res
		}
		m, err := r.lp.ToolMessage(ctx, r.st, res)
		if err == nil {
			err = agentloop.AppendHistory(context.WithoutCancel(ctx), r.s.d.Store, r.c.DeveloperID, r.sessionID, "chat-result#"+call.ID, []llm.Message{m})
		}
		if err != nil {
			// The step's own save keeps it once the step's calls have all answered.
			r.s.d.Log.WarnContext(ctx, "chat: saving a tool result as it came", "call_id", call.ID, "error", err.Error())
			return res
		}
		r.early.mu.Lock()
		defer r.early.mu.Unlock()
		if r.early.calls == nil {
			r.early.answered, r.early.calls = map[string]bool{}, map[string]bool{}
		}
		r.early.answered[m.ToolCallID], r.early.calls[call.ID] = true, true
		return res
	})
}

// unsavedOf is msgs without the step's tool messages saved as they came.
func (r *chatRun) unsavedOf(msgs []llm.Message) []llm.Message {
	r.early.mu.Lock()
	defer r.early.mu.Unlock()
	if len(r.early.answered) == 0 {
		return msgs
	}
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role != llm.RoleTool || !r.early.answered[m.ToolCallID] {
			out = append(out, m)
		}
	}
	return out
}

// savedEarly reports whether call's result was saved as it came.
func (r *chatRun) savedEarly(callID string) bool {
	r.early.mu.Lock()
	defer r.early.mu.Unlock()
	return r.early.calls[callID]
}

// anyEarly reports whether a result of the step was saved as it came.
func (r *chatRun) anyEarly() bool {
	r.early.mu.Lock()
	defer r.early.mu.Unlock()
	return len(r.early.calls) > 0
}

// forgetEarly ends the step's early saves, once its messages are saved.
func (r *chatRun) forgetEarly() {
	r.early.mu.Lock()
	defer r.early.mu.Unlock()
	r.early.answered, r.early.calls = nil, nil
}

// unsavedCalls is the calls of results not saved as they came: what cutShort leaves to
// agent_loop when an output cannot be read back.
func (r *chatRun) unsavedCalls(results []tool.Result) map[string]bool {
	cut := map[string]bool{}
	for _, res := range results {
		if !r.savedEarly(res.ID) {
			cut[res.ID] = true
		}
	}
	return cut
}

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
