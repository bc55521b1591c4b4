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
	"fmt"
	"log/slog"
	"time"

	"sinew/internal/dispatch"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
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
