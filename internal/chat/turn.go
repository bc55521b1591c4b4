package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// claimTurn takes the session's turn: two chats at once would each read the history and append
// their own turn after it. The claim lapses on its own if this process dies mid-turn; release
// gives it back.
func (s *Service) claimTurn(ctx context.Context, dev, sessionID string) (release func(), err error) {
	claim, held, err := s.d.Store.PutIdempotency(ctx, dev, turnKey(sessionID), map[string]any{"turn": "running"}, s.d.Budget+turnMargin)
	if err != nil {
		return nil, fmt.Errorf("chat: the session's turn: %w", err)
	}
	if !held {
		return nil, fault.New(fault.Conflict, "session %s is answering another chat request; send this one once that has answered", sessionID)
	}
	return func() {
		if err := s.d.Store.ReleaseIdempotency(context.WithoutCancel(ctx), dev, turnKey(sessionID), claim); err != nil {
			s.d.Log.WarnContext(ctx, "chat: releasing the session's turn", "error", err.Error())
		}
	}, nil
}

// chatRun is one chat request under way: what it read, and the loop running over the
// conversation.
type chatRun struct {
	s         *Service
	c         Caller
	req       *Request
	sessionID string
	agent     *store.Agent
	auto      *bool
	turnID    string // the turn whose budget of tool calls this chat draws on
	lp        *loop.Loop
	st        *loop.State
	sys       int // the agent's system messages at the head of st.Messages, never stored
	base      int // where the messages this request adds begin in st.Messages
	saved     int // how many of st.Messages are in the history (or are the agent's, never stored)
	idem      *idemTurn
	early     early
}

// begin reads what the request needs (the agent, the history, the tools and flags), checks the
// request's messages against the history, and builds the loop over the conversation.
func (s *Service) begin(ctx context.Context, c Caller, sess *store.Session, req *Request, idem *idemTurn) (*chatRun, error) {
	dev := c.DeveloperID
	agent, err := s.d.Store.GetAgent(ctx, dev, sess.AgentID)
	if err != nil {
		return nil, fmt.Errorf("chat: the session's agent: %w", err)
	}
	history, err := s.history(ctx, dev, sess.ID)
	if err != nil {
		return nil, err
	}
	r := &chatRun{s: s, c: c, req: req, sessionID: sess.ID, agent: agent, idem: idem}
	if idem != nil && idem.from >= 0 && idem.from <= len(history) {
		return r.resume(ctx, sess, history)
	}
	if history, err = s.closeDead(ctx, dev, sess.ID, history); err != nil {
		return nil, fmt.Errorf("chat: closing an interrupted turn: %w", err)
	}
	convo := append(append([]llm.Message{}, history...), req.Messages...)
	// A pending call left unanswered would leave the model a call without its result.
	if ids := loop.Unanswered(convo); len(ids) > 0 && len(req.Messages) > 0 {
		return nil, fault.New(fault.Unprocessable, "the tool calls %s are pending: answer each with {\"role\": \"tool\", \"tool_call_id\": <model_call_id>, \"content\": ...} in messages", strings.Join(ids, ", "))
	}
	if err := answersKnown(history, req.Messages); err != nil {
		return nil, err
	}
	if r.lp, err = s.newLoop(ctx, r, sess); err != nil {
		return nil, err
	}
	// The system prompt is the agent's, given to the model each time and never stored.
	sys := agentloop.Instructions(agent.Instructions)
	r.st = loop.NewState(append(sys, convo...))
	r.sys, r.base = len(sys), len(sys)+len(history)
	r.saved = r.base
	return r, nil
}

// resume goes on with a turn a try under the same Idempotency-Key saved part of before it
// stopped: the conversation is the history (the request's messages are in it), the turn's
// messages begin at idem.from, and the calls its last step left unanswered run again under their
// ids.
func (r *chatRun) resume(ctx context.Context, sess *store.Session, history []llm.Message) (*chatRun, error) {
	var err error
	if r.lp, err = r.s.newLoop(ctx, r, sess); err != nil {
		return nil, err
	}
	sys := agentloop.Instructions(r.agent.Instructions)
	r.st = loop.NewState(append(sys, history...))
	r.st.Iterations = r.idem.iterations
	r.sys, r.base, r.saved = len(sys), len(sys)+r.idem.from, len(sys)+len(history)
	r.lp.Replan(r.st)
	return r, nil
}

// newLoop builds the loop of r: the request's tools (else the agent's) formatted for the model,
// auto_run_tools (else the developer's flag), the merged settings and the model.
func (s *Service) newLoop(ctx context.Context, r *chatRun, sess *store.Session) (*loop.Loop, error) {
	dev, req, agent := r.c.DeveloperID, r.req, r.agent
	tools := req.Tools
	if tools == nil {
		stored, err := s.d.Store.ToolsFor(ctx, dev, agent.ID, "")
		if err != nil {
			return nil, fmt.Errorf("chat: the agent's tools: %w", err)
		}
		for i := range stored {
			tools = append(tools, &stored[i])
		}
	}
	formatted, err := s.d.Formatter.FormatAll(tools, agentloop.IntegrationArgs(agent.Metadata, sess.Metadata))
	if err != nil {
		return nil, err
	}
	r.auto = req.AutoRunTools
	if r.auto == nil {
		flags, err := s.d.Store.Flags(ctx, dev, s.d.FlagDefaults)
		if err != nil {
			return nil, fmt.Errorf("chat: flags: %w", err)
		}
		v := flags[FlagAutoRun]
		r.auto = &v
	}
	settings, err := mergedSettings(agent.DefaultSettings, req.Settings)
	if err != nil {
		return nil, err
	}
	model := req.Model
	if model == "" {
		model = agent.Model
	}
	// A nested chat draws on its caller's turn; a chat of its own starts one.
	r.turnID = r.c.TurnID
	if r.turnID == "" {
		r.turnID = uuid.Must(uuid.NewV7()).String()
	}
	cc := workflow.Context{DeveloperID: dev, AgentID: agent.ID, SessionID: r.sessionID, Depth: r.c.Depth, TurnID: r.turnID}
	return loop.New(loop.Config{
		Model: s.d.Model, Runner: r.savingEach(s.runner(cc)), Tools: formatted, ModelID: model,
		ToolChoice: req.ToolChoice, Settings: settings, AutoRun: *r.auto,
		MaxIterations: req.MaxIterations, Log: s.d.Log, MaxCallsPerReply: s.d.MaxCallsPerReply,
		Budget: loop.StoreBudget{Store: s.d.Store, DeveloperID: dev, TurnID: r.turnID, Max: s.d.MaxCallsPerTurn},
		// Outputs stored by reference reach the model as values (bounded: loop.MaxToolContent).
		Resolve: func(ctx context.Context, v any) (any, error) { return s.d.Store.LoadValue(ctx, dev, v) },
		CallID:  callIDs(dev, r.sessionID, r.turnKey()),
	})
}

// turnKey is the record a chat holds while it answers in a session; turnMargin is how long past
// the budget the claim lasts (the hand-off and the final writes run after the budget).
func turnKey(sessionID string) string { return "chat-turn#" + sessionID }

const turnMargin = 30 * time.Second

// history reads the session's whole history, oldest first.
func (s *Service) history(ctx context.Context, dev, sessionID string) ([]llm.Message, error) {
	var out []llm.Message
	cursor := ""
	for {
		l, err := s.d.Store.ListMessages(ctx, dev, sessionID, store.Page{Limit: 100, Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("chat: history: %w", err)
		}
		for _, m := range l.Items {
			lm, err := fromStored(m)
			if err != nil {
				return nil, err
			}
			out = append(out, lm)
		}
		if l.NextCursor == nil || *l.NextCursor == "" {
			return out, nil
		}
		cursor = *l.NextCursor
	}
}

// fromStored converts through the message's JSON form, which is what the history keeps.
func fromStored(sm store.Message) (llm.Message, error) {
	v := map[string]any{"role": sm.Role, "content": sm.Content}
	if sm.Name != "" {
		v["name"] = sm.Name
	}
	if sm.ToolCallID != "" {
		v["tool_call_id"] = sm.ToolCallID
	}
	if sm.ToolCalls != nil {
		v["tool_calls"] = sm.ToolCalls
	}
	b, err := json.Marshal(v)
	if err != nil {
		return llm.Message{}, fmt.Errorf("chat: history message %s: %w", sm.ID, err)
	}
	var m llm.Message
	if err := json.Unmarshal(b, &m); err != nil {
		return llm.Message{}, fmt.Errorf("chat: history message %s: %w", sm.ID, err)
	}
	return m, nil
}

// mergedSettings are the agent's default settings overridden key by key by the request's.
func mergedSettings(defaults, req map[string]any) (llm.Settings, error) {
	m := map[string]any{}
	for k, v := range defaults {
		m[k] = v
	}
	for k, v := range req {
		m[k] = v
	}
	return llm.ParseSettings("settings", m)
}
