// Package chat is the chat service and its route: POST /sessions/{session_id}/chat runs the
// model-tool loop (package loop) inside the chat Lambda over the session's history in DynamoDB,
// reaching the executor Lambdas through the dispatcher (Lambda Invoke API, retrying Transient), with
// function calls handed back to the caller as pending calls under the model's ids. When a turn
// outlives the request's time budget, the loop goes on as the agent_loop state machine (package
// agentloop). Register adds the route to the chat function's router; System gives the system
// executor session.chat and task.execution.create.
//
// Each chat request is one turn with one budget of tool calls (package loop's StoreBudget under a
// turn id): a chat started by a system tool's session.chat (Caller.TurnID), and the agent_loop a
// chat hands off to, draw on the budget of the turn that started them.
package chat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"sinew/internal/dispatch"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// FlagAutoRun is the developer flag that gives auto_run_tools's default on the chat path.
const FlagAutoRun = "auto_run_tools_chat"

// DefaultBudget is the time a chat may take before API Gateway's 30 s limit (SINEW_CHAT_BUDGET_S).
const DefaultBudget = 25 * time.Second

// idemTTL is how long an Idempotency-Key's answer is kept.
const idemTTL = 24 * time.Hour

// Deps are the service's dependencies.
type Deps struct {
	Store     *store.Store
	Model     llm.Model
	Formatter *toolfmt.Formatter
	// Dispatcher runs integration, api_call and system calls through their Lambdas.
	Dispatcher   *dispatch.Dispatcher
	FlagDefaults map[string]bool
	Budget       time.Duration // DefaultBudget when 0
	Log          *slog.Logger
	// Starter starts agent_loop for async chats and chats past the budget; nil: the loop runs
	// until the budget and then fails with a timeout.
	Starter *agentloop.Starter
	// Liveness tells a hand-off that never started from one that runs, so a session is never kept
	// busy by a dead execution (nil: a hand-off's record is taken as it reads).
	Liveness *workflow.Liveness
	Now      func() time.Time // time.Now when nil
	// MaxCallsPerReply and MaxCallsPerTurn bound the tool calls a model starts (package loop;
	// SINEW_MAX_CALLS_PER_REPLY and SINEW_MAX_CALLS_PER_TURN), their defaults when 0.
	MaxCallsPerReply int
	MaxCallsPerTurn  int
}

// Service runs chats.
type Service struct{ d Deps }

// New makes a Service.
func New(d Deps) *Service {
	if d.Budget <= 0 {
		d.Budget = DefaultBudget
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Formatter == nil {
		d.Formatter = &toolfmt.Formatter{}
	}
	return &Service{d: d}
}

// Request is the chat request, parsed and checked.
type Request struct {
	Messages      []llm.Message
	Tools         []*tool.Tool // nil: the session agent's stored tools
	ToolChoice    llm.ToolChoice
	AutoRunTools  *bool
	Model         string
	Settings      map[string]any
	MaxIterations int
	Async         bool
	rawToolChoice any // as sent, for agent_loop's input
}

// wire is the request body as sent.
type wire struct {
	Messages      []json.RawMessage `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	ToolChoice    any               `json:"tool_choice"`
	AutoRunTools  *bool             `json:"auto_run_tools"`
	Model         *string           `json:"model"`
	Settings      map[string]any    `json:"settings"`
	MaxIterations *int              `json:"max_iterations"`
	Async         *bool             `json:"async"`
	Stream        *bool             `json:"stream"`
}

var wireKeys = map[string]bool{"messages": true, "tools": true, "tool_choice": true, "auto_run_tools": true, "model": true,
	"settings": true, "max_iterations": true, "async": true, "stream": true}

var roles = map[llm.Role]bool{llm.RoleSystem: true, llm.RoleUser: true, llm.RoleAssistant: true, llm.RoleTool: true}

// ParseRequest checks a chat request body: every broken rule is a fault.InvalidInput naming the field.
func ParseRequest(body []byte) (*Request, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, fault.Invalid("", "the body must be a JSON object: the chat request")
	}
	for k := range top {
		if !wireKeys[k] {
			return nil, fault.Invalid(k, "unknown field %q: a chat request has messages, tools, tool_choice, auto_run_tools, model, settings, max_iterations, async and stream", k)
		}
	}
	var w wire
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "the chat request does not fit its schema: %v", err)
	}
	if w.Stream != nil && *w.Stream {
		return nil, fault.Invalid("stream", "stream: true is not supported: API Gateway's HTTP API cannot stream a Lambda's answer")
	}
	if len(w.Messages) == 0 {
		return nil, fault.Invalid("messages", "messages must hold at least one message")
	}
	r := &Request{AutoRunTools: w.AutoRunTools, Settings: w.Settings}
	for i, raw := range w.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		var m llm.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fault.Invalid(field, "%s is not a message {role, content, tool_call_id?, name?}: %v", field, err)
		}
		if !roles[m.Role] {
			return nil, fault.Invalid(field+".role", "%s.role must be one of system, user, assistant, tool", field)
		}
		if m.Role == llm.RoleTool && m.ToolCallID == "" {
			return nil, fault.Invalid(field+".tool_call_id", "%s is a tool message: tool_call_id names the call it answers", field)
		}
		// Refused before the model runs: a turn whose message cannot be saved would run for nothing.
		if n := storedBytes(m); n > store.MaxMessageBytes {
			return nil, &fault.Error{Kind: fault.TooLarge, Field: field, Msg: fmt.Sprintf("%s is %d bytes as stored; a session's history keeps messages of at most %d bytes: send it shorter, or store the text as a doc and refer to it", field, n, store.MaxMessageBytes)}
		}
		r.Messages = append(r.Messages, m)
	}
	if w.Tools != nil {
		r.Tools = []*tool.Tool{}
		for i, raw := range w.Tools {
			field := fmt.Sprintf("tools[%d]", i)
			t, err := tool.Decode(raw)
			if err != nil {
				return nil, fault.Wrap(fault.InvalidInput, err, "%s: %v", field, err)
			}
			// Inline tools are not stored, so their setup would travel in envelopes.
			if t.Integration != nil && len(t.Integration.Setup) > 0 {
				return nil, fault.Invalid(field+".integration.setup", "%s: an inline tool may not carry setup: store the tool, or put the setup in the session's metadata", field)
			}
			r.Tools = append(r.Tools, t)
		}
	}
	if w.ToolChoice != nil {
		tc, err := llm.ParseToolChoice("tool_choice", w.ToolChoice)
		if err != nil {
			return nil, err
		}
		r.ToolChoice, r.rawToolChoice = tc, w.ToolChoice
	}
	if w.Model != nil {
		r.Model = *w.Model
	}
	if w.MaxIterations != nil {
		if *w.MaxIterations < 1 || *w.MaxIterations > loop.MaxIterations {
			return nil, fault.Invalid("max_iterations", "max_iterations must be between 1 and %d", loop.MaxIterations)
		}
		r.MaxIterations = *w.MaxIterations
	}
	if w.Async != nil {
		r.Async = *w.Async
	}
	return r, nil
}

// storedBytes is the size m takes in the session's history (its id and time included).
func storedBytes(m llm.Message) int {
	sm := store.Message{ID: "00000000-0000-0000-0000-000000000000", Role: string(m.Role), Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID, CreatedAt: time.Now()}
	if len(m.ToolCalls) > 0 {
		sm.ToolCalls = m.ToolCalls
	}
	return store.MessageBytes(sm)
}

// Response is the 200 answer.
type Response struct {
	ID          string        `json:"id"`
	SessionID   string        `json:"session_id"`
	CreatedAt   time.Time     `json:"created_at"`
	Choices     []Choice      `json:"choices"`
	Usage       llm.Usage     `json:"usage"`
	ToolResults []tool.Result `json:"tool_results"`
	Pending     []PendingCall `json:"pending_calls"`
	Model       string        `json:"model,omitempty"`
	Scripted    bool          `json:"scripted,omitempty"`
}

// Reply is a chat's answer: 200 with the chat, or 202 when the loop was handed to agent_loop.
type Reply struct {
	Status  int               `json:"status"`
	Chat    *Response         `json:"chat,omitempty"`
	Started *workflow.Started `json:"started,omitempty"`
}

// Body is what the route answers.
func (r *Reply) Body() any {
	if r.Started != nil {
		return r.Started
	}
	return r.Chat
}

// Choice is the one choice of a chat answer.
type Choice struct {
	Index        int              `json:"index"`
	FinishReason llm.FinishReason `json:"finish_reason"`
	Message      llm.Message      `json:"message"`
}

// PendingCall is a function call handed back to the caller.
type PendingCall struct {
	CallID      string `json:"call_id"`
	ModelCallID string `json:"model_call_id"`
	Tool        string `json:"tool"`
	Arguments   any    `json:"arguments"`
}

// Caller is who asks: the developer, how deep in system-tool chats the request is, and the turn
// whose budget of tool calls a nested chat shares ("" for a chat of its own: a new turn).
type Caller struct {
	DeveloperID string
	Depth       int
	TurnID      string
}

// Chat runs one chat request in a session. idemKey is the Idempotency-Key ("" for none): a repeat
// answers the first answer, and a repeat while the first still runs is a 409.
func (s *Service) Chat(ctx context.Context, c Caller, sessionID string, req *Request, idemKey string) (*Reply, error) {
	if idemKey == "" {
		return s.chat(ctx, c, sessionID, req, nil)
	}
	key := idemRecordKey(c.DeveloperID, sessionID, idemKey)
	turn := &idemTurn{key: idemKey, rec: key, from: -1}
	rec, created, err := s.d.Store.PutIdempotency(ctx, c.DeveloperID, key, s.running(nil), idemTTL)
	if err != nil {
		return nil, fmt.Errorf("chat: idempotency record: %w", err)
	}
	if !created {
		m, _ := rec.Value.(map[string]any)
		switch {
		case m["response"] != nil:
			v, err := s.d.Store.LoadValue(ctx, c.DeveloperID, m["response"])
			if err != nil {
				return nil, fmt.Errorf("chat: the recorded answer: %w", err)
			}
			var out Reply
			if err := jsonv.Convert(v, &out); err != nil {
				return nil, fmt.Errorf("chat: the recorded answer: %w", err)
			}
			return &out, nil
		case m["error"] != nil:
			e, _ := m["error"].(map[string]any)
			typ, _ := e["type"].(string)
			msg, _ := e["message"].(string)
			return nil, fault.New(fault.Kind(typ), "%s", msg)
		case m["retry"] == true:
			// The first try failed in a way worth trying again: this repeat runs it.
			if _, err := s.d.Store.UpdateIdempotency(ctx, c.DeveloperID, key, s.running(nil)); err != nil {
				return nil, fmt.Errorf("chat: idempotency record: %w", err)
			}
		case m["running"] == true && s.lapsed(rec, m):
			// The first try stopped (its lease lapsed) after handing the turn off: the repeat
			// answers that hand-off, and never hands the same turn off twice.
			if out, err := s.handedOff(ctx, c.DeveloperID, m); out != nil || err != nil {
				if err != nil {
					return nil, err
				}
				return s.recordAnswer(ctx, c.DeveloperID, key, out, nil)
			}
			// Else it stopped mid-turn: this repeat takes the turn over from its last saved step.
			turn = takeOver(idemKey, key, m)
			if _, err := s.d.Store.UpdateIdempotency(ctx, c.DeveloperID, key, s.running(turn)); err != nil {
				return nil, fmt.Errorf("chat: idempotency record: %w", err)
			}
		default:
			return nil, fault.New(fault.Conflict, "a chat request with this Idempotency-Key is still running; repeat it once it has answered")
		}
	}
	out, err := s.chat(ctx, c, sessionID, req, turn)
	return s.recordAnswer(ctx, c.DeveloperID, key, out, err)
}

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

func (s *Service) chat(ctx context.Context, c Caller, sessionID string, req *Request, idem *idemTurn) (*Reply, error) {
	start := s.d.Now()
	dev := c.DeveloperID
	sess, err := s.d.Store.GetSession(ctx, dev, sessionID)
	if err != nil {
		return nil, err
	}
	if err := s.refuseWhileHandedOff(ctx, dev, sessionID); err != nil {
		return nil, err
	}
	release, err := s.claimTurn(ctx, dev, sessionID)
	if err != nil {
		return nil, err
	}
	defer release()
	r, err := s.begin(ctx, c, sess, req, idem)
	if err != nil {
		return nil, err
	}
	if req.Async {
		if s.d.Starter == nil {
			return nil, fault.Invalid("async", "async chats need agent_loop, which is not configured here")
		}
		return r.handoff(ctx, nil)
	}
	if reply, err := r.run(ctx, start.Add(s.d.Budget)); reply != nil || err != nil {
		return reply, err
	}
	return r.answer(ctx)
}

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

// answer saves the finished loop's messages and gives the response. Outputs stored by reference
// are answered as values up to the HTTP API's inline limit, in the order the calls ran; larger
// ones stay references for GET /payloads/{ref}.
func (r *chatRun) answer(ctx context.Context) (*Reply, error) {
	s, dev := r.s, r.c.DeveloperID
	if err := r.persist(ctx); err != nil {
		return nil, err
	}
	resp := s.response(r.sessionID, r.st)
	left := int64(store.AnswerInlineLimit)
	for i, tr := range resp.ToolResults {
		n, ok := store.RefSize(tr.Output)
		if !ok {
			continue
		}
		out, err := s.d.Store.InlineRefs(ctx, dev, tr.Output, left)
		if err != nil {
			return nil, err
		}
		if _, still := store.RefOf(out); !still {
			left -= n
		}
		resp.ToolResults[i].Output = out
	}
	return &Reply{Status: http.StatusOK, Chat: resp}, nil
}

// handoffWith is handoff under ctx, for cutShort.
func (r *chatRun) handoffWith(ctx context.Context) func([]tool.Call) (*Reply, error) {
	return func(turn []tool.Call) (*Reply, error) { return r.handoff(ctx, turn) }
}

// handoff gives the rest of the loop to agent_loop (202). turn holds the calls of a turn cut
// short (the budget ran out while they ran): agent_loop runs them first, under the same call ids,
// so an executor that did finish one answers its recorded result.
func (r *chatRun) handoff(ctx context.Context, turn []tool.Call) (*Reply, error) {
	s, dev, st := r.s, r.c.DeveloperID, r.st
	in, err := r.handoffInput(turn)
	if err != nil {
		return nil, err
	}
	// What this request added and is not saved yet is saved by agent_loop's first step (once), so
	// a hand-off that never starts leaves no message of it unanswered in the history.
	if r.anyEarly() {
		// Some of the turn's answers are saved: the rest are saved here, for agent_loop saves
		// only a tail of the conversation.
		if err := r.persist(ctx); err != nil {
			return nil, err
		}
	}
	in.Unsaved = len(st.Messages) - r.saved
	name := uuid.Must(uuid.NewV7()).String()
	if err := r.noteHandoff(ctx, name); err != nil {
		return nil, err
	}
	reply, err := s.startHandoff(ctx, dev, name, r.agent.ID, r.sessionID, in, st.Messages[r.sys:])
	// agent_loop owns the turn now, or it has ended here.
	defer r.closeOpen(ctx)
	if err == nil {
		return reply, nil
	}
	if st.Iterations > 0 {
		// What ran is kept (its calls are not run again by a repeat), and a turn cut short is
		// answered with what happened.
		if serr := r.persist(ctx); serr != nil {
			return nil, serr
		}
		if len(turn) > 0 {
			s.closeTurn(ctx, dev, r.sessionID, turn, err)
		}
	}
	return nil, err
}

// persist saves the messages of the conversation not saved yet.
func (r *chatRun) persist(ctx context.Context) error {
	if err := r.s.save(ctx, r.c.DeveloperID, r.sessionID, r.unsavedOf(r.st.Messages[r.saved:])); err != nil {
		return err
	}
	r.saved = len(r.st.Messages)
	r.forgetEarly()
	return nil
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

// cutShort hands off a turn whose tools were still running when the budget ran out: the results
// of the calls that finished are fed, and the others (cut, or every run call when cut is nil) and
// the turn's pending calls go to agent_loop.
func (s *Service) cutShort(ctx context.Context, lp *loop.Loop, st *loop.State, results []tool.Result, cut map[string]bool,
	handoff func([]tool.Call) (*Reply, error)) (*Reply, error) {
	var finished []tool.Result
	if cut != nil {
		for _, r := range results {
			if !cut[r.ID] {
				finished = append(finished, r)
			}
		}
	}
	if err := lp.FeedPartial(ctx, st, finished); err != nil {
		// A finished output could not be read back: agent_loop takes those calls too.
		if err := lp.FeedPartial(ctx, st, nil); err != nil {
			return nil, err
		}
	}
	turn := make([]tool.Call, 0, len(st.Turn))
	for _, p := range st.Turn {
		if p.Call != nil {
			turn = append(turn, *p.Call)
		}
	}
	s.d.Log.InfoContext(ctx, "chat: the time budget ran out while tools ran; agent_loop takes the turn over", "calls", len(turn))
	return handoff(turn)
}

// closeTurn answers, in the history, the calls of a turn cut short that agent_loop could not take
// over: the session's history stays whole (no call left unanswered, which would refuse every later
// chat with a 422 the caller cannot answer), and the model is told what happened on the next chat.
func (s *Service) closeTurn(ctx context.Context, dev, sessionID string, turn []tool.Call, cause error) {
	msgs := make([]llm.Message, 0, len(turn))
	for _, c := range turn {
		msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ModelCallID, Name: c.Name(),
			Content: jsonv.EncodeString(map[string]any{"type": string(fault.Timeout),
				"error": "the call did not finish within the chat's time budget, and handing it over to agent_loop failed (" + faultMessage(cause) + ")"})})
	}
	if err := s.save(context.WithoutCancel(ctx), dev, sessionID, msgs); err != nil {
		s.d.Log.WarnContext(ctx, "chat: answering a turn that could not be handed off", "error", err.Error())
	}
}

// handoffTTL keeps a session's hand-off mark at least as long as an agent_loop execution may wait
// on a function call (timeout_seconds is at most a year).
const handoffTTL = 400 * 24 * time.Hour

// turnKey is the record a chat holds while it answers in a session; turnMargin is how long past
// the budget the claim lasts (the hand-off and the final writes run after the budget).
func turnKey(sessionID string) string { return "chat-turn#" + sessionID }

const turnMargin = 30 * time.Second

// handoffKey is the idempotency record that names a session's latest hand-off to agent_loop.
func handoffKey(sessionID string) string { return "chat-handoff#" + sessionID }

// startHandoff marks the session with the execution it names, starts agent_loop, and then records
// the execution (its first step records it too, whichever comes first). Nothing is recorded for
// an execution that has not started: a mark naming one that does not exist leaves the session
// free (refuseWhileHandedOff), so a crash anywhere in between never keeps the session busy.
func (s *Service) startHandoff(ctx context.Context, dev, name, agentID, sessionID string, in agentloop.Input, msgs []llm.Message) (*Reply, error) {
	mark := map[string]any{"execution_id": name}
	if _, created, err := s.d.Store.PutIdempotency(ctx, dev, handoffKey(sessionID), mark, handoffTTL); err != nil {
		return nil, fmt.Errorf("chat: marking the hand-off: %w", err)
	} else if !created {
		// An earlier hand-off's mark (it ended: refuseWhileHandedOff let this chat through).
		if _, err := s.d.Store.UpdateIdempotency(ctx, dev, handoffKey(sessionID), mark); err != nil {
			return nil, fmt.Errorf("chat: marking the hand-off: %w", err)
		}
	}
	started, err := s.d.Starter.Start(ctx, name, in, msgs)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.d.Store.CreateExecution(context.WithoutCancel(ctx), dev, store.Execution{ExecutionID: name, Workflow: workflow.AgentLoop,
		AgentID: agentID, SessionID: sessionID}); err != nil {
		// The execution runs, and its first step records it.
		s.d.Log.WarnContext(ctx, "chat: recording the hand-off", "execution_id", name, "error", err.Error())
	}
	return &Reply{Status: http.StatusAccepted, Started: started}, nil
}

// refuseWhileHandedOff refuses a chat in a session whose loop agent_loop is still running: its
// history is not whole until that execution ends (409, naming it).
func (s *Service) refuseWhileHandedOff(ctx context.Context, dev, sessionID string) error {
	rec, err := s.d.Store.GetIdempotency(ctx, dev, handoffKey(sessionID))
	if fault.Is(err, fault.NotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("chat: the session's hand-off: %w", err)
	}
	m, _ := rec.Value.(map[string]any)
	id, _ := m["execution_id"].(string)
	if id == "" {
		return nil
	}
	x, err := s.d.Store.GetExecution(ctx, dev, id)
	if fault.Is(err, fault.NotFound) {
		return s.refuseWhileStarting(ctx, sessionID, id)
	}
	if err != nil {
		return fmt.Errorf("chat: the session's hand-off: %w", err)
	}
	if x, err = s.d.Liveness.Check(ctx, dev, x); err != nil {
		return fmt.Errorf("chat: the session's hand-off: %w", err)
	}
	if x.Status.Final() {
		return nil
	}
	return fault.New(fault.Conflict, "session %s is being continued by agent_loop execution %s (status %s): chat again once it has ended (GET /executions/%s)%s",
		sessionID, id, x.Status, id, pendingHint(x))
}

// refuseWhileStarting is the busy check of a mark whose execution has no record yet: the hand-off
// either never started (its chat died before starting it: the session is free) or started and its
// first step has not recorded it yet (busy).
func (s *Service) refuseWhileStarting(ctx context.Context, sessionID, id string) error {
	if s.d.Liveness == nil {
		return nil
	}
	exists, err := s.d.Liveness.Exists(ctx, workflow.AgentLoop, id)
	if err != nil {
		return fmt.Errorf("chat: the session's hand-off: %w", err)
	}
	if !exists {
		return nil
	}
	return fault.New(fault.Conflict, "session %s is being continued by agent_loop execution %s, which is starting: chat again once it has ended (GET /executions/%s)",
		sessionID, id, id)
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

// answersKnown refuses a tool message that answers no call of the conversation.
func answersKnown(history, msgs []llm.Message) error {
	asked := map[string]bool{}
	for _, m := range history {
		for _, c := range m.ToolCalls {
			asked[c.ID] = true
		}
	}
	for i, m := range msgs {
		for _, c := range m.ToolCalls {
			asked[c.ID] = true
		}
		if m.Role == llm.RoleTool && !asked[m.ToolCallID] {
			return fault.Invalid(fmt.Sprintf("messages[%d].tool_call_id", i), "messages[%d] answers %q, which no assistant message of the session asked for", i, m.ToolCallID)
		}
	}
	return nil
}

func (s *Service) response(sessionID string, st *loop.State) *Response {
	last := st.Last()
	last.Role = llm.RoleAssistant
	out := &Response{
		ID: uuid.Must(uuid.NewV7()).String(), SessionID: sessionID, CreatedAt: s.d.Now().UTC(),
		Choices:     []Choice{{Index: 0, FinishReason: st.FinishReason, Message: last}},
		Usage:       st.Usage,
		ToolResults: st.Results, Pending: []PendingCall{}, Model: st.Model, Scripted: st.Scripted,
	}
	if out.ToolResults == nil {
		out.ToolResults = []tool.Result{}
	}
	for _, p := range st.Pending {
		out.Pending = append(out.Pending, PendingCall{CallID: p.CallID, ModelCallID: p.ModelCallID, Tool: p.Tool, Arguments: p.Arguments})
	}
	return out
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

func (s *Service) save(ctx context.Context, dev, sessionID string, msgs []llm.Message) error {
	if err := agentloop.AppendHistory(ctx, s.d.Store, dev, sessionID, "", msgs); err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	return nil
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
