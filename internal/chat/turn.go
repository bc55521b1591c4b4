package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/toolsearch"
	"sinew/internal/workflow"
)

// turnMargin is how long past the budget a claim on the session's turn lasts: the hand-off and the
// last writes run after the budget.
const turnMargin = 30 * time.Second

// chatRun is one chat request under way: its claim on the session's turn, what it read, and the
// loop running over the conversation.
type chatRun struct {
	s         *Service
	c         Caller
	req       *Request
	sessionID string
	token     string // the claim on the session's turn
	released  bool   // a write gave the turn back
	lost      bool   // the claim lapsed and another chat took the turn
	sess      *store.Session
	open      string // the open-turn mark the claim found: a turn that stopped mid-step
	// handoffMark is the session's latest hand-off to agent_loop (nil: none), read with the turn;
	// dropMark deletes it with the turn's next write, once its execution has ended, and dropOpen
	// the open-turn record an earlier sinew kept apart from the session (legacyOpenKey).
	handoffMark *store.IdemRecord
	dropMark    bool
	dropOpen    bool
	agent       *store.Agent
	stored      []tool.Tool // the agent's tools, unless the request brings its own
	history     []llm.Message
	flags       map[string]bool
	auto        *bool
	turnID      string // the turn whose budget of tool calls this chat draws on
	budget      *turnBudget
	lp          *loop.Loop
	st          *loop.State
	sys         int  // the agent's system messages at the head of st.Messages, never stored
	base        int  // where the messages this request adds begin in st.Messages
	saved       int  // how many of st.Messages are in the history (or are the agent's, never stored)
	stepOpen    bool // the current step's calls run: its answers are saved before the turn goes on
	idem        *idemTurn
	early       early
}

func (s *Service) newRun(c Caller, sessionID string, req *Request, idemKey string) *chatRun {
	r := &chatRun{s: s, c: c, req: req, sessionID: sessionID, token: uuid.Must(uuid.NewV7()).String()}
	if idemKey != "" {
		r.idem = &idemTurn{key: idemKey, rec: idemRecordKey(c.DeveloperID, sessionID, idemKey), from: -1}
	}
	return r
}

// claim takes the session's turn: two chats at once would each read the history and append their
// own turn after it. The claim lapses on its own if this process dies mid-turn; the turn's last
// write gives it back, else release. A turn held is a 409, unless the Idempotency-Key's record
// answers this request (answerHeld).
func (r *chatRun) claim(ctx context.Context) (*Reply, error) {
	c := store.TurnClaim{Token: r.token, TTL: r.s.d.Budget + turnMargin}
	if r.idem != nil {
		c.IdemKey = r.idem.rec
	}
	st, holder, err := r.s.d.Store.ClaimSessionTurn(ctx, r.c.DeveloperID, r.sessionID, c)
	if fault.Is(err, fault.Conflict) && r.idem != nil {
		return r.answerHeld(ctx, holder, err)
	}
	if err != nil {
		return nil, err
	}
	r.sess, r.open = st.Session, st.Open
	return nil, nil
}

// release gives the session's turn back when no write did, leaving the open-turn mark as it is:
// calls a step began and no write answered are closed by the next chat.
func (r *chatRun) release(ctx context.Context) {
	if r.released || r.sess == nil {
		return
	}
	if err := r.s.d.Store.ReleaseSessionTurn(context.WithoutCancel(ctx), r.c.DeveloperID, r.sessionID, r.token, false); err != nil {
		r.s.d.Log.WarnContext(ctx, "chat: releasing the session's turn", "error", err.Error())
	}
}

// legacyOpenKey is the open-turn record of a session as an earlier sinew kept it, apart from the
// session's item: read with the turn (it costs no request) and closed as the session's own mark is.
func legacyOpenKey(sessionID string) string { return "chat-open#" + sessionID }

// load reads what the turn needs besides the session, at once: the agent, the flag that gives
// auto_run_tools, the session's hand-off mark and the Idempotency-Key's record in one BatchGetItem,
// and the agent's tools (unless the request brings its own) and the history in one Query each.
func (r *chatRun) load(ctx context.Context) (idemRec *store.IdemRecord, err error) {
	dev := r.c.DeveloperID
	keys := store.TurnKeys{AgentID: r.sess.AgentID, Idem: []string{handoffKey(r.sessionID), legacyOpenKey(r.sessionID)}}
	if r.req.AutoRunTools == nil {
		keys.Flags = []string{FlagAutoRun}
	}
	if r.idem != nil {
		keys.Idem = append(keys.Idem, r.idem.rec)
	}
	var (
		wg        sync.WaitGroup
		items     *store.TurnItems
		hist      []store.Message
		errs      [3]error
		wantTools = r.req.Tools == nil
	)
	wg.Go(func() { items, errs[0] = r.s.d.Store.ReadTurn(ctx, dev, keys) })
	if wantTools {
		wg.Go(func() { r.stored, errs[1] = r.s.d.Store.AgentTools(ctx, dev, r.sess.AgentID) })
	}
	wg.Go(func() { hist, errs[2] = r.s.d.Store.History(ctx, dev, r.sessionID) })
	wg.Wait()
	for i, what := range []string{"the session's agent", "the agent's tools", "history"} {
		if errs[i] != nil {
			return nil, fmt.Errorf("chat: %s: %w", what, errs[i])
		}
	}
	r.agent, r.flags, r.handoffMark = items.Agent, items.Flags, items.Idem[handoffKey(r.sessionID)]
	if items.Idem[legacyOpenKey(r.sessionID)] != nil {
		r.open = cmp.Or(r.open, "legacy")
		r.dropOpen = true
	}
	if r.history, err = fromStoredAll(hist); err != nil {
		return nil, err
	}
	if r.idem != nil {
		idemRec = items.Idem[r.idem.rec]
	}
	return idemRec, nil
}

// begin checks the request's messages against the history and builds the loop over the
// conversation. The calls a turn that stopped mid-step left unanswered are answered first
// (closeDead), saved with the turn's first write.
func (r *chatRun) begin(ctx context.Context) error {
	if r.idem != nil && r.idem.from >= 0 && r.idem.from <= len(r.history) {
		return r.resume(ctx)
	}
	history := slices.Concat(r.history, r.closeDead())
	convo := slices.Concat(history, r.req.Messages)
	// A pending call left unanswered would leave the model a call without its result.
	if ids := loop.Unanswered(convo); len(ids) > 0 && len(r.req.Messages) > 0 {
		return fault.New(fault.Unprocessable, "the tool calls %s are pending: answer each with {\"role\": \"tool\", \"tool_call_id\": <model_call_id>, \"content\": ...} in messages", strings.Join(ids, ", "))
	}
	if err := answersKnown(history, r.req.Messages); err != nil {
		return err
	}
	var err error
	if r.lp, err = r.newLoop(ctx); err != nil {
		return err
	}
	// The system prompt is the agent's, given to the model each time and never stored.
	sys := agentloop.Instructions(r.agent.Instructions)
	r.st = loop.NewState(append(sys, convo...))
	r.sys, r.base, r.saved = len(sys), len(sys)+len(history), len(sys)+len(r.history)
	return nil
}

// resume goes on with a turn a try under the same Idempotency-Key saved part of before it
// stopped: the conversation is the history (the request's messages are in it), the turn's
// messages begin at idem.from, and the calls its last step left unanswered run again under their
// ids.
func (r *chatRun) resume(ctx context.Context) error {
	var err error
	if r.lp, err = r.newLoop(ctx); err != nil {
		return err
	}
	sys := agentloop.Instructions(r.agent.Instructions)
	r.st = loop.NewState(append(sys, r.history...))
	r.st.Iterations = r.idem.iterations
	r.sys, r.base, r.saved = len(sys), len(sys)+r.idem.from, len(sys)+len(r.history)
	r.lp.Replan(r.st)
	r.stepOpen = len(r.st.Turn) > 0
	return nil
}

// newLoop builds the loop of r: the request's tools (else the agent's) formatted for the model,
// auto_run_tools (else the developer's flag), the merged settings and the model.
func (r *chatRun) newLoop(ctx context.Context) (*loop.Loop, error) {
	s, dev, req, agent := r.s, r.c.DeveloperID, r.req, r.agent
	tools := req.Tools
	if tools == nil {
		for i := range r.stored {
			tools = append(tools, &r.stored[i])
		}
	}
	formatted, err := s.d.Formatter.FormatAll(tools, agentloop.IntegrationArgs(agent.Metadata, r.sess.Metadata))
	if err != nil {
		return nil, err
	}
	ts := toolsearch.NewSelector(formatted, s.d.ToolSearchThreshold)
	var offer func(*loop.State) []llm.Function
	if ts != nil {
		formatted, offer = ts.WithSearch(formatted), ts.Offer
	}
	r.auto = req.AutoRunTools
	if r.auto == nil {
		v, set := r.flags[FlagAutoRun]
		if !set {
			v = s.d.FlagDefaults[FlagAutoRun]
		}
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
	r.budget = r.newBudget()
	cc := workflow.Context{DeveloperID: dev, AgentID: agent.ID, SessionID: r.sessionID, Depth: r.c.Depth, TurnID: r.turnID}
	var runner = s.runner(cc)
	if ts != nil {
		runner = ts.Runner(runner)
	}
	return loop.New(loop.Config{
		Model: s.d.Model, Runner: r.savingEach(runner), Tools: formatted, ModelID: model, Offer: offer,
		ToolChoice: req.ToolChoice, Settings: settings, AutoRun: *r.auto,
		MaxIterations: req.MaxIterations, Log: s.d.Log, MaxCallsPerReply: s.d.MaxCallsPerReply,
		Budget: r.budget,
		// Outputs stored by reference reach the model as values (bounded: loop.MaxToolContent).
		Resolve: func(ctx context.Context, v any) (any, error) { return s.d.Store.LoadValue(ctx, dev, v) },
		CallID:  callIDs(dev, r.sessionID, r.turnKey()),
	})
}

// fromStoredAll converts a history read from the table.
func fromStoredAll(msgs []store.Message) ([]llm.Message, error) {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		lm, err := fromStored(m)
		if err != nil {
			return nil, err
		}
		out = append(out, lm)
	}
	return out, nil
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
