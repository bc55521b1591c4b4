package chat

import (
	"context"
	"encoding/json"
	"fmt"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/loop/agentloop"
	"sinew/internal/system"
)

// System gives the system executor session.chat and task.execution.create (system.Chatter and
// system.ExecutionStarter), answering what the HTTP routes answer.
type System struct {
	Service *Service           // nil: session.chat is not available
	Starter *agentloop.Starter // nil: task.execution.create is not available
}

var (
	_ system.Chatter          = System{}
	_ system.ExecutionStarter = System{}
)

// Chat runs req in the session, cc.Depth deep (the executor has added one already), on the budget
// of tool calls of the turn that called it (cc.TurnID).
func (s System) Chat(ctx context.Context, cc system.Context, sessionID string, req map[string]any) (any, error) {
	if s.Service == nil {
		return nil, fault.New(fault.InvalidInput, "session.chat is not available in this deployment")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fault.Invalid("arguments", "the chat request cannot be written as JSON")
	}
	r, err := ParseRequest(body)
	if err != nil {
		return nil, err
	}
	out, err := s.Service.Chat(ctx, Caller{DeveloperID: cc.DeveloperID, Depth: cc.Depth, TurnID: cc.TurnID}, sessionID, r, "")
	if err != nil {
		return nil, fmt.Errorf("session.chat: %w", err)
	}
	var v any
	if err := jsonv.Convert(out.Body(), &v); err != nil {
		return nil, fmt.Errorf("session.chat: %w", err)
	}
	return v, nil
}

// StartTaskExecution starts agent_loop over the task's prompt and tools, input as the user's message.
func (s System) StartTaskExecution(ctx context.Context, cc system.Context, taskID string, input any) (any, error) {
	if s.Starter == nil {
		return nil, fault.New(fault.InvalidInput, "task.execution.create is not available in this deployment")
	}
	st, err := s.Starter.StartTask(ctx, cc.DeveloperID, taskID, input, "", cc.Depth, cc.TurnID)
	if err != nil {
		return nil, fmt.Errorf("task.execution.create: %w", err)
	}
	var v any
	if err := jsonv.Convert(st, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// NewSystem gives the system executor's Chatter and ExecutionStarter over svc (and its agent_loop
// starter).
func NewSystem(svc *Service) System { return System{Service: svc, Starter: svc.d.Starter} }
