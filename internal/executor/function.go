package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Event source and detail type of the event announcing a pending function call.
const (
	EventSource       = "sinew"
	DetailTypePending = "ToolCallPending"
)

// Function is the function executor: it runs nothing, the client does. It records the call with
// this attempt's task token and marks the execution awaiting_input (a retry of the Task has a new
// token and overwrites the record), then publishes ToolCallPending with the pending call, less its
// token, as its detail. The execution then waits on the token until the client answers or the wait
// ends.
type Function struct {
	Store *store.Store // the function executor never opens setup
	// Events announces pending calls on EventBus ("default" when empty); nil announces nothing.
	Events   Events
	EventBus string
	Log      *slog.Logger // nil: slog.Default()
}

var _ Executor = (*Function)(nil)

// Run records in's function call as pending: the *store.PendingCall.
func (f *Function) Run(ctx context.Context, in Envelope) (any, error) {
	return f.RecordPending(ctx, in)
}

// RecordPending records in's call as pending and announces it.
func (f *Function) RecordPending(ctx context.Context, in Envelope) (*store.PendingCall, error) {
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
		w, err := workflow.WaitOf(in.Tool)
		if err != nil {
			return nil, err
		}
		if w.TimeoutSeconds != nil {
			timeout = *w.TimeoutSeconds
		}
	}
	pc, err := f.Store.PutPendingCall(ctx, in.Context.DeveloperID, store.PendingCall{
		CallID: in.Call.ID, ExecutionID: in.Context.ExecutionID, ModelCallID: in.Call.ModelCallID,
		Tool: in.Call.Name(), Type: tool.TypeFunction, Arguments: in.Call.Arguments(),
		ExpiresAt: time.Now().Add(time.Duration(timeout) * time.Second), TaskToken: in.TaskToken,
	}, store.Execution{Workflow: workflow.ToolCall, AgentID: in.Context.AgentID, TaskID: in.Context.TaskID, SessionID: in.Context.SessionID})
	if err != nil {
		return nil, fmt.Errorf("record pending call %s: %w", in.Call.ID, err)
	}
	if err := f.publishPending(ctx, pc); err != nil {
		// The call is recorded and listed by GET /calls; a lost announcement must not fail the
		// wait, but a retry would issue a new token, so the failure is only logged.
		f.log().ErrorContext(ctx, "publishing ToolCallPending failed", "call_id", pc.CallID, "execution_id", pc.ExecutionID, "error", err)
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

func (f *Function) publishPending(ctx context.Context, pc *store.PendingCall) error {
	if f.Events == nil {
		return nil
	}
	detail, err := json.Marshal(pendingEvent{PendingCall: pc})
	if err != nil {
		return err
	}
	bus := f.EventBus
	if bus == "" {
		bus = "default"
	}
	if err := f.Events.Publish(ctx, Event{Bus: bus, Source: EventSource, DetailType: DetailTypePending, Detail: detail}); err != nil {
		return fmt.Errorf("put ToolCallPending: %w", err)
	}
	return nil
}

func (f *Function) log() *slog.Logger {
	if f.Log != nil {
		return f.Log
	}
	return slog.Default()
}

// Events publishes the function executor's announcements on an event bus. Its adapter over
// EventBridge (package eventbus) is built by the function executor alone, so the other functions
// do not link, nor initialise at each cold start, the EventBridge client.
type Events interface {
	Publish(ctx context.Context, e Event) error
}

// Event is one event on the bus: its detail is a JSON object.
type Event struct {
	Bus, Source, DetailType string
	Detail                  []byte
}
