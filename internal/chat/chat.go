// Package chat is the chat service and its route.
//
// POST /sessions/{session_id}/chat runs the model-tool loop (package loop) inside the chat Lambda
// over the session's history in DynamoDB, reaching the executor Lambdas through the dispatcher
// (Lambda Invoke API, retrying Transient), with function calls handed back to the caller as pending
// calls under the model's ids. When a turn outlives the request's time budget, the loop goes on as
// the agent_loop state machine (package agentloop). Register adds the route to the chat function's
// router; System gives the system executor session.chat and task.execution.create.
//
// Each chat request is one turn with one budget of tool calls (counted under a turn id, see
// turnBudget): a chat started by a system tool's session.chat (Caller.TurnID), and the agent_loop a
// chat hands off to, draw on the budget of the turn that started them.
//
// A turn claims the session with one UpdateItem that reads it too, reads the rest in one
// BatchGetItem and two Queries at once (load), and writes once at its end (answer). A step that runs
// tools adds what durability needs: its model reply saved before the calls run, and each result as
// it comes (persist.go).
package chat

import (
	"context"
	"log/slog"
	"time"

	"sinew/internal/dispatch"
	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// FlagAutoRun is the developer flag that gives auto_run_tools's default on the chat path.
const FlagAutoRun = "auto_run_tools_chat"

// DefaultBudget is the time a chat may take before API Gateway's 30 s limit (SINEW_CHAT_BUDGET_S).
const DefaultBudget = 25 * time.Second

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
	// ToolSearchThreshold: an agent with more tools is shown sinew_search_tools and the tools most
	// relevant to the turn, this many in all (toolsearch.DefaultThreshold when 0).
	ToolSearchThreshold int
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
	r := s.newRun(c, sessionID, req, idemKey)
	out, err := r.chat(ctx)
	if r.idem == nil || r.idem.done {
		return out, err
	}
	return r.recordAnswer(ctx, out, err)
}

// chat is one turn: the session's turn claimed, what it needs read, the Idempotency-Key's record
// heeded, then the loop within the time budget, answered (200) or handed to agent_loop (202).
func (r *chatRun) chat(ctx context.Context) (*Reply, error) {
	start := r.s.d.Now()
	if reply, err := r.claim(ctx); reply != nil || err != nil {
		return reply, err
	}
	defer r.release(ctx)
	rec, err := r.load(ctx)
	if err != nil {
		return nil, err
	}
	if reply, err := r.idempotent(ctx, rec); reply != nil || err != nil {
		return reply, err
	}
	if err := r.refuseWhileHandedOff(ctx); err != nil {
		return nil, err
	}
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	if r.req.Async {
		if r.s.d.Starter == nil {
			return nil, fault.Invalid("async", "async chats need agent_loop, which is not configured here")
		}
		return r.handoff(ctx, nil)
	}
	if reply, err := r.run(ctx, start.Add(r.s.d.Budget)); reply != nil || err != nil {
		return reply, err
	}
	return r.answer(ctx)
}
