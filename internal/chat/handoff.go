package chat

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// handoff gives the rest of the loop to agent_loop (202). turn holds the calls of a turn cut
// short (the budget ran out while they ran): agent_loop runs them first, under the same call ids,
// so an executor that did finish one answers its recorded result.
func (r *chatRun) handoff(ctx context.Context, turn []tool.Call) (*Reply, error) {
	st := r.st
	in, err := r.handoffInput(turn)
	if err != nil {
		return nil, err
	}
	// What this request added and is not saved yet is saved by agent_loop's first step (once), so
	// a hand-off that never starts leaves no message of it unanswered in the history. The answers
	// to a dead turn's calls come before it, and are saved here.
	end := r.base
	if r.anyEarly() {
		// Some of the turn's answers are saved: the rest are saved here, for agent_loop saves
		// only a tail of the conversation.
		end = len(st.Messages)
	}
	if end > r.saved {
		w, err := r.write(end, nil)
		if err != nil {
			return nil, err
		}
		if err := r.commit(ctx, w, end); err != nil {
			return nil, err
		}
	}
	in.Unsaved = len(st.Messages) - r.saved
	// agent_loop draws on the turn's count of calls from the table.
	if err := r.budget.share(ctx); err != nil {
		return nil, err
	}
	name := uuid.Must(uuid.NewV7()).String()
	if err := r.noteHandoff(ctx, name); err != nil {
		return nil, err
	}
	reply, err := r.startHandoff(ctx, name, in, st.Messages[r.sys:])
	if err != nil {
		return nil, r.handoffFailed(ctx, turn, err)
	}
	// agent_loop owns the turn now.
	if err := r.end(ctx, r.saved, nil, r.answerRecord(ctx, reply)); err != nil {
		r.s.d.Log.WarnContext(ctx, "chat: ending a turn handed off", "execution_id", name, "error", err.Error())
	}
	return reply, nil
}

// handoffFailed ends a turn agent_loop could not take over, and gives err. What ran is kept (its
// calls are not run again by a repeat), and a turn cut short is answered with what happened.
func (r *chatRun) handoffFailed(ctx context.Context, turn []tool.Call, err error) error {
	if r.st.Iterations == 0 {
		// Nothing ran: the request's messages stay unsaved, as if it never came.
		if rerr := r.s.d.Store.ReleaseSessionTurn(context.WithoutCancel(ctx), r.c.DeveloperID, r.sessionID, r.token, true); rerr != nil {
			r.s.d.Log.WarnContext(ctx, "chat: releasing the session's turn", "error", rerr.Error())
		}
		r.released = true
		return err
	}
	if serr := r.end(context.WithoutCancel(ctx), len(r.st.Messages), closeTurn(turn, err), nil); serr != nil {
		return serr
	}
	return err
}

// handoffInput is agent_loop's input going on from r: the request's choices, the iterations left,
// and the cut-short turn's calls.
func (r *chatRun) handoffInput(turn []tool.Call) (agentloop.Input, error) {
	req, st := r.req, r.st
	sessionID := r.sessionID
	in := agentloop.Input{DeveloperID: r.c.DeveloperID, AgentID: r.agent.ID, SessionID: &sessionID, ToolChoice: req.rawToolChoice,
		Settings: req.Settings, AutoRunTools: r.auto, Depth: r.c.Depth, TurnID: r.turnID}
	if req.Model != "" {
		in.Model = &req.Model
	}
	if st.Iterations > 0 {
		// A forced tool_choice held for the first model call only (package loop), which ran here.
		in.ToolChoice = nil
	}
	if req.Tools != nil {
		var tl any
		if err := jsonv.Convert(req.Tools, &tl); err != nil {
			return in, fmt.Errorf("chat: encoding the tools: %w", err)
		}
		in.Tools = tl
	}
	maxIter := req.MaxIterations
	if maxIter == 0 {
		maxIter = loop.DefaultMaxIterations
	}
	left := maxIter - st.Iterations
	if len(turn) > 0 {
		// agent_loop counts the adopted turn's model call (loop.Adopt) among its iterations.
		left++
		var tv any
		if err := jsonv.Convert(turn, &tv); err != nil {
			return in, fmt.Errorf("chat: encoding the turn: %w", err)
		}
		in.Turn = tv
	}
	left = max(left, 1)
	in.MaxIterations = &left
	return in, nil
}

// cutShort hands off a turn whose tools were still running when the budget ran out: the results
// of the calls that finished are fed, and the others (cut, or every run call when cut is nil) and
// the turn's pending calls go to agent_loop.
func (r *chatRun) cutShort(ctx context.Context, results []tool.Result, cut map[string]bool) (*Reply, error) {
	var finished []tool.Result
	if cut != nil {
		for _, res := range results {
			if !cut[res.ID] {
				finished = append(finished, res)
			}
		}
	}
	if err := r.lp.FeedPartial(ctx, r.st, finished); err != nil {
		// A finished output could not be read back: agent_loop takes those calls too.
		if err := r.lp.FeedPartial(ctx, r.st, nil); err != nil {
			return nil, err
		}
	}
	turn := plannedCalls(r.st.Turn)
	r.s.d.Log.InfoContext(ctx, "chat: the time budget ran out while tools ran; agent_loop takes the turn over", "calls", len(turn))
	return r.handoff(ctx, turn)
}

// handoffTTL keeps a session's hand-off mark at least as long as an agent_loop execution may wait
// on a function call (timeout_seconds is at most a year).
const handoffTTL = 400 * 24 * time.Hour

// handoffKey is the idempotency record that names a session's latest hand-off to agent_loop.
func handoffKey(sessionID string) string { return "chat-handoff#" + sessionID }

// startHandoff marks the session with the execution it names, starts agent_loop, and then records
// the execution (its first step records it too, whichever comes first). Nothing is recorded for
// an execution that has not started: a mark naming one that does not exist leaves the session
// free (refuseWhileHandedOff), so a crash anywhere in between never keeps the session busy.
func (r *chatRun) startHandoff(ctx context.Context, name string, in agentloop.Input, msgs []llm.Message) (*Reply, error) {
	s, dev := r.s, r.c.DeveloperID
	// The chat holding the session's turn is the mark's only writer: it replaces the last one.
	now := s.d.Now().UTC()
	mark := &store.IdemRecord{Key: handoffKey(r.sessionID), Value: map[string]any{"execution_id": name}, CreatedAt: now, ExpiresAt: now.Add(handoffTTL)}
	if err := s.d.Store.WriteIdempotency(ctx, dev, mark); err != nil {
		return nil, fmt.Errorf("chat: marking the hand-off: %w", err)
	}
	r.dropMark = false
	started, err := s.d.Starter.Start(ctx, name, in, msgs)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.d.Store.CreateExecution(context.WithoutCancel(ctx), dev, store.Execution{ExecutionID: name, Workflow: workflow.AgentLoop,
		AgentID: r.agent.ID, SessionID: r.sessionID}); err != nil {
		// The execution runs, and its first step records it.
		s.d.Log.WarnContext(ctx, "chat: recording the hand-off", "execution_id", name, "error", err.Error())
	}
	return &Reply{Status: http.StatusAccepted, Started: started}, nil
}

// refuseWhileHandedOff refuses a chat in a session whose loop agent_loop is still running: its
// history is not whole until that execution ends (409, naming it). A mark whose execution has
// ended, or never started, goes with the turn's next write, so later chats need not look again.
func (r *chatRun) refuseWhileHandedOff(ctx context.Context) error {
	if r.handoffMark == nil {
		return nil
	}
	m, _ := r.handoffMark.Value.(map[string]any)
	id, _ := m["execution_id"].(string)
	if id == "" {
		return nil
	}
	s, dev := r.s, r.c.DeveloperID
	x, err := s.d.Store.GetExecution(ctx, dev, id)
	if fault.Is(err, fault.NotFound) {
		return r.refuseWhileStarting(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("chat: the session's hand-off: %w", err)
	}
	if x, err = s.d.Liveness.Check(ctx, dev, x); err != nil {
		return fmt.Errorf("chat: the session's hand-off: %w", err)
	}
	if x.Status.Final() {
		r.dropMark = true
		return nil
	}
	return fault.New(fault.Conflict, "session %s is being continued by agent_loop execution %s (status %s): chat again once it has ended (GET /executions/%s)%s",
		r.sessionID, id, x.Status, id, pendingHint(x))
}

// refuseWhileStarting is the busy check of a mark whose execution has no record yet: the hand-off
// either never started (its chat died before starting it: the session is free) or started and its
// first step has not recorded it yet (busy).
func (r *chatRun) refuseWhileStarting(ctx context.Context, id string) error {
	if r.s.d.Liveness == nil {
		return nil
	}
	exists, err := r.s.d.Liveness.Exists(ctx, workflow.AgentLoop, id)
	if err != nil {
		return fmt.Errorf("chat: the session's hand-off: %w", err)
	}
	if !exists {
		r.dropMark = true
		return nil
	}
	return fault.New(fault.Conflict, "session %s is being continued by agent_loop execution %s, which is starting: chat again once it has ended (GET /executions/%s)",
		r.sessionID, id, id)
}

func pendingHint(x *store.Execution) string {
	if len(x.PendingCalls) == 0 {
		return ""
	}
	ids := make([]string, len(x.PendingCalls))
	for i, c := range x.PendingCalls {
		ids[i] = c.CallID
	}
	return fmt.Sprintf("; it waits for the function calls %s (POST /executions/%s/calls/{call_id}/result)", strings.Join(ids, ", "), x.ExecutionID)
}
