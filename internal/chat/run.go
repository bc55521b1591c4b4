package chat

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"time"

	"sinew/internal/fault"
	"sinew/internal/loop"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// run steps the loop within the time budget, until deadline; when the next step would not fit
// (judged by the longest step so far), a model call runs out of time, or tools are still running
// when it ends, agent_loop takes over. A nil reply and error: the loop is done.
func (r *chatRun) run(ctx context.Context, deadline time.Time) (*Reply, error) {
	s, st := r.s, r.st
	bctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var longest time.Duration
	for !st.Done {
		if s.d.Starter != nil && longest > 0 && deadline.Sub(s.d.Now()) < longest {
			return r.handoff(ctx, nil)
		}
		t0 := s.d.Now()
		var err error
		if len(st.Turn) == 0 { // else a resumed turn's calls run first
			if err = r.lp.Prompt(bctx, st); err == nil && len(st.Turn) > 0 {
				err = r.stepBegun(ctx)
			}
		}
		if err == nil && !st.Done {
			results := r.lp.Execute(bctx, st)
			if s.d.Starter != nil && bctx.Err() != nil && ctx.Err() == nil {
				if cut := r.unfinished(results); len(cut) > 0 {
					return s.cutShort(ctx, r.lp, st, results, cut, r.handoffWith(ctx))
				}
			}
			// Outputs stored by reference are read back under the request's own context:
			// the budget may be spent, the Lambda's time is not.
			if err = r.lp.Feed(ctx, st, results); err != nil && s.d.Starter != nil && ctx.Err() == nil {
				// An output could not be read back: agent_loop runs the turn's calls again under
				// their ids (the executors answer their recorded results) and reads them, retrying.
				s.d.Log.WarnContext(ctx, "chat: feeding the turn's results failed; handing off", "error", err.Error())
				return s.cutShort(ctx, r.lp, st, results, r.unsavedCalls(results), r.handoffWith(ctx))
			}
			if err == nil {
				err = r.stepDone(ctx)
			}
		}
		longest = max(longest, s.d.Now().Sub(t0))
		if err != nil {
			if s.d.Starter != nil && bctx.Err() != nil && ctx.Err() == nil && len(st.Turn) == 0 {
				return r.handoff(ctx, nil)
			}
			return nil, r.failed(ctx, err)
		}
	}
	return nil, nil
}

// failed keeps what the loop produced before err, up to its last whole turn (every call it ran
// is answered in it, so a repeat never runs it again), and gives err.
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
	if end > r.saved {
		if serr := r.s.save(ctx, r.c.DeveloperID, r.sessionID, r.unsavedOf(r.st.Messages[r.saved:end])); serr != nil {
			return serr
		}
		r.saved = end
	}
	r.forgetEarly()
	if len(r.st.Turn) > 0 && r.saved > end {
		// The turn's assistant message is saved already: its calls are answered with the failure.
		r.s.closeTurn(ctx, r.c.DeveloperID, r.sessionID, open, err)
	}
	r.closeOpen(ctx)
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
		return s.d.Dispatcher.Dispatch(ctx, workflow.Envelope{Call: *call, Tool: &snap, Context: cc}, call)
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
