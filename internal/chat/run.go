package chat

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	"sinew/internal/executor"
	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// run steps the loop within the time budget, until deadline; when the next step would not fit
// (judged by the longest step so far), a model call runs out of time, or tools are still running
// when it ends, agent_loop takes over. A nil reply and error: the loop is done.
func (r *chatRun) run(ctx context.Context, deadline time.Time) (*Reply, error) {
	s := r.s
	bctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var longest time.Duration
	for !r.st.Done {
		if s.d.Starter != nil && longest > 0 && deadline.Sub(s.d.Now()) < longest {
			return r.handoff(ctx, nil)
		}
		t0 := s.d.Now()
		over, reply, err := r.step(ctx, bctx)
		if over {
			return reply, err
		}
		longest = max(longest, s.d.Now().Sub(t0))
		if err != nil {
			return r.stepFailed(ctx, bctx, err)
		}
	}
	return nil, nil
}

// stepFailed answers a step's failure: a model call the budget cut off hands the loop to
// agent_loop; anything else ends the turn with what it has (failed).
func (r *chatRun) stepFailed(ctx, bctx context.Context, err error) (*Reply, error) {
	if r.s.d.Starter != nil && bctx.Err() != nil && ctx.Err() == nil && len(r.st.Turn) == 0 {
		return r.handoff(ctx, nil)
	}
	return nil, r.failed(ctx, err)
}

// step is one iteration of the loop under the budget's context bctx: the model asked (unless a
// resumed turn's calls are still to run), the calls run and fed back. It is over when the turn was
// cut short and handed off: reply and err are then the chat's answer. Else err is the step's
// failure.
func (r *chatRun) step(ctx, bctx context.Context) (over bool, reply *Reply, err error) {
	s, st := r.s, r.st
	if len(st.Turn) == 0 {
		if err := r.lp.Prompt(bctx, st); err != nil {
			return false, nil, err
		}
		if len(st.Turn) > 0 {
			if err := r.stepBegun(ctx); err != nil {
				return false, nil, err
			}
		}
	}
	if st.Done {
		return false, nil, nil
	}
	results := r.lp.Execute(bctx, st)
	if s.d.Starter != nil && bctx.Err() != nil && ctx.Err() == nil {
		if cut := r.unfinished(results); len(cut) > 0 {
			reply, err := r.cutShort(ctx, results, cut)
			return true, reply, err
		}
	}
	// Outputs stored by reference are read back under the request's own context: the budget
	// may be spent, the Lambda's time is not.
	if err := r.lp.Feed(ctx, st, results); err != nil {
		if s.d.Starter == nil || ctx.Err() != nil {
			return false, nil, err
		}
		// An output could not be read back: agent_loop runs the turn's calls again under their
		// ids (the executors answer their recorded results) and reads them, retrying.
		s.d.Log.WarnContext(ctx, "chat: feeding the turn's results failed; handing off", "error", err.Error())
		reply, err := r.cutShort(ctx, results, r.unsavedCalls(results))
		return true, reply, err
	}
	return false, nil, r.stepDone(ctx)
}

// failed keeps what the loop produced before err, up to its last whole turn (every call it ran
// is answered in it, so a repeat never runs it again), ends the turn, and gives err. A turn whose
// model reply is saved already has its calls answered with the failure.
func (r *chatRun) failed(ctx context.Context, err error) error {
	var open []tool.Call
	for _, c := range plannedCalls(r.st.Turn) {
		if !r.savedEarly(c.ID) {
			open = append(open, c)
		}
	}
	end := len(r.st.Messages)
	if len(r.st.Turn) > 0 {
		end-- // the turn's assistant message, whose calls have no answers
	}
	var closing []llm.Message
	if len(r.st.Turn) > 0 && r.saved > end {
		closing = closeTurn(open, err)
	}
	if serr := r.end(ctx, end, closing, nil); serr != nil {
		return serr
	}
	return err
}

// plannedCalls are the envelopes of a turn's calls (a rejected call's made from its model id).
func plannedCalls(turn []loop.Planned) []tool.Call {
	out := make([]tool.Call, 0, len(turn))
	for _, p := range turn {
		if p.Call != nil {
			out = append(out, *p.Call)
		}
	}
	return out
}

// unfinished gives the ids of the calls whose result is an error: with the budget spent, such a
// call may have been cut off rather than failed, and agent_loop runs it again under its id (a call
// that did fail answers the same failure from the executor's record). A result saved as it came
// is an answer already.
func (r *chatRun) unfinished(results []tool.Result) map[string]bool {
	cut := map[string]bool{}
	for _, res := range results {
		if res.Error != nil && !r.savedEarly(res.ID) {
			cut[res.ID] = true
		}
	}
	return cut
}

// runner sends each call to its executor Lambda, with the definition's snapshot without setup.
func (s *Service) runner(cc workflow.Context) loop.Runner {
	return loop.RunnerFunc(func(ctx context.Context, call *tool.Call, def *tool.Tool) tool.Result {
		if s.d.Dispatcher == nil {
			return tool.ErrorResult(call, string(fault.Internal), "no executors are configured")
		}
		snap := *def
		if def.Integration != nil {
			in := *def.Integration
			in.Setup = nil
			snap.Integration = &in
		}
		return s.d.Dispatcher.Dispatch(ctx, executor.Envelope{Call: *call, Tool: &snap, Context: cc}, call)
	})
}

// callIDs derives the sinew call ids of turnKey's calls from the session, the turn and the
// model's call id in its iteration.
func callIDs(dev, sessionID, turnKey string) func(int, string) string {
	return func(iteration int, modelCallID string) string {
		h := sha256.Sum256([]byte("sinew/chat\x00" + dev + "\x00" + sessionID + "\x00" + turnKey + "\x00" + strconv.Itoa(iteration) + "\x00" + modelCallID))
		return "call_" + base64.RawURLEncoding.EncodeToString(h[:18])
	}
}

// turnKey names r's turn: its Idempotency-Key, else its turn id.
func (r *chatRun) turnKey() string {
	if r.idem != nil {
		return "key:" + r.idem.key
	}
	return "turn:" + r.turnID
}

// turnBudget is the turn's budget of tool calls (loop.CallBudget). A chat that starts its turn
// keeps the count itself and writes it with the step that runs the calls it grants (stepBegun), so
// the count costs no request of its own: nothing else draws on the turn before its calls run. Once
// a system call may have started a chat or an execution on the turn (session.chat,
// task.execution.create), and for a chat drawing on a turn begun elsewhere, the count is the
// store's (loop.StoreBudget).
type turnBudget struct {
	shared  loop.StoreBudget
	own     bool // the count is this chat's
	taken   int
	unsaved int // counted here, not written yet
}

func (r *chatRun) newBudget() *turnBudget {
	return &turnBudget{own: r.c.TurnID == "", shared: loop.StoreBudget{Store: r.s.d.Store, DeveloperID: r.c.DeveloperID, TurnID: r.turnID, Max: r.s.d.MaxCallsPerTurn}}
}

// Take implements loop.CallBudget, as StoreBudget does.
func (b *turnBudget) Take(ctx context.Context, n int) (int, error) {
	if !b.own {
		return b.shared.Take(ctx, n)
	}
	before := b.taken
	b.taken, b.unsaved = b.taken+n, b.unsaved+n
	return min(max(b.Limit()-before, 0), n), nil
}

// Limit implements loop.CallBudget.
func (b *turnBudget) Limit() int { return b.shared.Limit() }

// pending is the count a write takes with it (nil: none).
func (b *turnBudget) pending() *store.TurnCalls {
	if !b.own || b.unsaved == 0 {
		return nil
	}
	return &store.TurnCalls{Turn: b.shared.TurnID, N: b.unsaved, TTL: loop.BudgetTTL}
}

// share writes the count before something else may draw on the turn, and leaves it to the store.
func (b *turnBudget) share(ctx context.Context) error {
	if b.own && b.unsaved > 0 {
		if _, err := b.shared.Store.TakeCalls(ctx, b.shared.DeveloperID, b.shared.TurnID, b.unsaved, loop.BudgetTTL); err != nil {
			return fmt.Errorf("chat: the turn's count of tool calls: %w", err)
		}
	}
	b.own, b.unsaved = false, 0
	return nil
}
