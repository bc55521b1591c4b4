package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// A chat turn is saved step by step, as agent_loop's are: the model's reply when it asks for
// tools, before they run (stepBegun), each result as it comes (savingEach), and the rest with the
// turn's last write (end). While a step's calls run, the session's open-turn mark names the turn;
// a process that dies then leaves the mark behind. A repeat under the same Idempotency-Key takes
// the turn over once the first try's lease lapses, and goes on from what was saved, its calls under
// the same ids (derived from the turn), so an executor that ran one answers its recorded result.
// Any other request closes the dead turn's unanswered calls (an error the model sees) before it
// runs. Every write but a result's is one transaction under the chat's claim on the session's turn
// (store.TurnWrite), carrying the mark, the Idempotency-Key's record and the turn's count of calls
// with the messages.

// write is a TurnWrite, under the turn's claim, of the conversation's messages not saved yet up to
// end, then extra (messages answering calls outside the conversation).
func (r *chatRun) write(end int, extra []llm.Message) (store.TurnWrite, error) {
	w := store.TurnWrite{Token: r.token, Calls: r.budget.pending()}
	// end may fall before what is saved (a failed step's model reply, saved before its calls ran).
	for _, m := range slices.Concat(r.unsavedOf(r.st.Messages[r.saved:max(end, r.saved)]), extra) {
		sm, err := toStored(m)
		if err != nil {
			return w, err
		}
		w.Messages = append(w.Messages, sm)
	}
	if r.dropMark {
		w.Drop = append(w.Drop, handoffKey(r.sessionID))
	}
	if r.dropOpen {
		w.Drop = append(w.Drop, legacyOpenKey(r.sessionID))
	}
	return w, nil
}

// commit writes w, which saves the conversation up to end. A claim that lapsed (the turn outlasted
// its budget and margin, and another chat took the session) still has its messages saved: the
// history is the turn's only record. Then only what the claim guards is left out.
func (r *chatRun) commit(ctx context.Context, w store.TurnWrite, end int) error {
	if len(w.Messages) > 0 || w.Open != nil || w.Release || len(w.Idem) > 0 || len(w.Drop) > 0 || w.Calls != nil {
		err := r.s.d.Store.WriteTurn(ctx, r.c.DeveloperID, r.sessionID, w)
		if errors.Is(err, store.ErrTurnLost) {
			r.s.d.Log.WarnContext(ctx, "chat: the claim on the session's turn lapsed; saving the turn's messages all the same")
			err = r.s.d.Store.WriteTurn(ctx, r.c.DeveloperID, r.sessionID, store.TurnWrite{Messages: w.Messages, Calls: w.Calls})
			w.Release, w.Drop = true, nil // the turn is another chat's now: nothing to give back
			r.lost = true
		}
		if err != nil {
			return fmt.Errorf("chat: saving the turn: %w", err)
		}
	}
	r.saved = max(r.saved, end)
	r.forgetEarly()
	r.released = r.released || w.Release
	if len(w.Drop) > 0 {
		r.dropMark, r.dropOpen = false, false
	}
	if w.Calls != nil {
		r.budget.unsaved = 0
	}
	return nil
}

// persist saves the conversation's messages not saved yet.
func (r *chatRun) persist(ctx context.Context) error {
	w, err := r.write(len(r.st.Messages), nil)
	if err != nil {
		return err
	}
	return r.commit(ctx, w, len(r.st.Messages))
}

// end is the turn's last write: the messages not saved yet up to end, then extra, the session's
// turn given back with its open-turn mark cleared, and rec (the Idempotency-Key's answer) if any.
func (r *chatRun) end(ctx context.Context, end int, extra []llm.Message, rec *store.IdemRecord) error {
	w, err := r.write(end, extra)
	if err != nil {
		return err
	}
	none := ""
	w.Open, w.Release = &none, true
	if rec != nil {
		w.Idem = []*store.IdemRecord{rec}
	}
	if err := r.commit(ctx, w, end); err != nil {
		return err
	}
	if rec != nil && !r.lost {
		r.idem.done = true
	}
	return nil
}

// stepBegun saves the model's reply that asks for tools, with what comes before it, before the
// tools run, and marks the session's turn open until the turn's last write; with it go the turn's
// count of calls and, under an Idempotency-Key, how far the turn has come. A step that runs no
// call has nothing to keep: its messages wait for the turn's next write.
func (r *chatRun) stepBegun(ctx context.Context) error {
	runs, system := false, false
	for _, p := range r.st.Turn {
		if p.Disposition == loop.DispositionRun {
			runs, system = true, system || p.Call.Type == tool.TypeSystem
		}
	}
	if !runs {
		return nil
	}
	w, err := r.write(len(r.st.Messages), nil)
	if err != nil {
		return err
	}
	open := r.turnKey()
	w.Open = &open
	if r.idem != nil {
		if r.idem.from < 0 {
			r.idem.from = r.base - r.sys
		}
		r.idem.iterations = r.st.Iterations
		w.Idem = []*store.IdemRecord{r.idemRecord(r.s.running(r.idem))}
	}
	if err := r.commit(ctx, w, len(r.st.Messages)); err != nil {
		return err
	}
	r.stepOpen = true
	if system {
		// A system call may start a chat or an execution on the turn: the count is the store's
		// from now on (written just now).
		r.budget.own = false
	}
	return nil
}

// stepDone ends a step once its results are fed. Those saved as they came are in the history;
// the step's other answers (a rejected call's, a result whose save failed) are saved now when its
// calls ran, else with the turn's next write.
func (r *chatRun) stepDone(ctx context.Context) error {
	ran := r.stepOpen
	r.stepOpen = false
	end := len(r.st.Messages)
	if len(r.unsavedOf(r.st.Messages[r.saved:end])) == 0 {
		r.saved = end
		r.forgetEarly()
		return nil
	}
	if !ran && !r.anyEarly() {
		return nil
	}
	return r.persist(ctx)
}

// toStored is m as the history keeps it.
func toStored(m llm.Message) (store.Message, error) {
	sm := store.Message{Role: string(m.Role), Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
	if len(m.ToolCalls) > 0 {
		var tc any
		if err := jsonv.Convert(m.ToolCalls, &tc); err != nil {
			return sm, fmt.Errorf("chat: encoding a message: %w", err)
		}
		sm.ToolCalls = tc
	}
	return sm, nil
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
		if err := r.saveResult(ctx, call, res); err != nil {
			// The step's own save keeps it once the step's calls have all answered.
			r.s.d.Log.WarnContext(ctx, "chat: saving a tool result as it came", "call_id", call.ID, "error", err.Error())
		}
		return res
	})
}

// saveResult saves res's tool message alone, once however often it is tried (its key is the
// call's id), and notes it saved.
func (r *chatRun) saveResult(ctx context.Context, call *tool.Call, res tool.Result) error {
	m, err := r.lp.ToolMessage(ctx, r.st, res)
	if err != nil {
		return err
	}
	if err := agentloop.AppendHistory(context.WithoutCancel(ctx), r.s.d.Store, r.c.DeveloperID, r.sessionID, "chat-result#"+call.ID, []llm.Message{m}); err != nil {
		return err
	}
	r.early.mu.Lock()
	defer r.early.mu.Unlock()
	if r.early.calls == nil {
		r.early.answered, r.early.calls = map[string]bool{}, map[string]bool{}
	}
	r.early.answered[m.ToolCallID], r.early.calls[call.ID] = true, true
	return nil
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
