package chat

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/loop/agentloop"
	"sinew/internal/tool"
)

// A chat turn is saved step by step, as agent_loop's are: the model's reply when it asks for
// tools (before they run), and their results once fed. While a step's calls run, the session's
// open-turn record names the turn; a process that dies then leaves the record behind. A repeat
// under the same Idempotency-Key takes the turn over once the first try's lease lapses, and goes
// on from what was saved, its calls under the same ids (derived from the turn), so an executor
// that ran one answers its recorded result. Any other request closes the dead turn's unanswered
// calls (an error the model sees) before it runs.

// persist saves the messages of the conversation not saved yet.
func (r *chatRun) persist(ctx context.Context) error {
	if err := r.s.save(ctx, r.c.DeveloperID, r.sessionID, r.unsavedOf(r.st.Messages[r.saved:])); err != nil {
		return err
	}
	r.saved = len(r.st.Messages)
	r.forgetEarly()
	return nil
}

func (s *Service) save(ctx context.Context, dev, sessionID string, msgs []llm.Message) error {
	if err := agentloop.AppendHistory(ctx, s.d.Store, dev, sessionID, "", msgs); err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	return nil
}

// openKey is the record naming the turn whose step is running in a session.
func openKey(sessionID string) string { return "chat-open#" + sessionID }

const openTTL = 30 * 24 * time.Hour

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
