package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Event source and detail type of the event announcing a pending function call.
const (
	EventSource       = "sinew"
	DetailTypePending = "ToolCallPending"
)

// RecordPending is the function executor: it records the call with this attempt's task
// token and marks the execution awaiting_input (a retry of the Task has a new token and overwrites
// the record), then publishes ToolCallPending with the pending call, less its token, as its detail. The execution
// then waits on the token until the client answers or the wait ends.
func (s *Service) RecordPending(ctx context.Context, in Envelope) (*store.PendingCall, error) {
	if err := in.Call.Validate(); err != nil {
		return nil, err
	}
	if in.Call.Type != tool.TypeFunction {
		return nil, fault.Invalid("call.type", "the function executor runs function calls, not %s", in.Call.Type)
	}
	if in.TaskToken == "" {
		return nil, fault.Invalid("task_token", "task_token is required (the state machine passes $$.Task.Token)")
	}
	if in.Context.DeveloperID == "" || in.Context.ExecutionID == "" {
		return nil, fault.Invalid("context", "context.developer_id and context.execution_id are required")
	}
	timeout := tool.DefaultFunctionTimeoutSeconds
	if in.Tool != nil {
		w, err := WaitOf(in.Tool)
		if err != nil {
			return nil, err
		}
		if w.TimeoutSeconds != nil {
			timeout = *w.TimeoutSeconds
		}
	}
	pc, err := s.Store.PutPendingCall(ctx, in.Context.DeveloperID, store.PendingCall{
		CallID: in.Call.ID, ExecutionID: in.Context.ExecutionID, ModelCallID: in.Call.ModelCallID,
		Tool: in.Call.Name(), Type: tool.TypeFunction, Arguments: in.Call.Arguments(),
		ExpiresAt: time.Now().Add(time.Duration(timeout) * time.Second), TaskToken: in.TaskToken,
	}, store.Execution{Workflow: ToolCall, AgentID: in.Context.AgentID, TaskID: in.Context.TaskID, SessionID: in.Context.SessionID})
	if err != nil {
		return nil, fmt.Errorf("record pending call %s: %w", in.Call.ID, err)
	}
	if err := s.publishPending(ctx, pc); err != nil {
		// The call is recorded and listed by GET /calls; a lost announcement must not fail the
		// wait, but a retry would issue a new token, so the failure is only logged.
		s.log().ErrorContext(ctx, "publishing ToolCallPending failed", "call_id", pc.CallID, "execution_id", pc.ExecutionID, "error", err)
	}
	return pc, nil
}

// pendingEvent is the detail of ToolCallPending: the pending call without its task token. Whoever
// may add a rule to the bus could otherwise collect every token; the owner gets the token from
// GET /calls, which is scoped to the developer.
type pendingEvent struct {
	*store.PendingCall
	TaskToken string `json:"task_token,omitempty"` // always empty: shadows the call's own field
}

func (s *Service) publishPending(ctx context.Context, pc *store.PendingCall) error {
	if s.Events == nil {
		return nil
	}
	detail, err := json.Marshal(pendingEvent{PendingCall: pc})
	if err != nil {
		return err
	}
	bus := s.EventBus
	if bus == "" {
		bus = "default"
	}
	if err := s.Events.Publish(ctx, Event{Bus: bus, Source: EventSource, DetailType: DetailTypePending, Detail: detail}); err != nil {
		return fmt.Errorf("put ToolCallPending: %w", err)
	}
	return nil
}
