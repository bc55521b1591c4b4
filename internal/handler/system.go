package handler

import (
	"context"

	"sinew/internal/dispatch"
	"sinew/internal/fault"
	"sinew/internal/system"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// SystemEvent is the system Lambda's input: {"call", "tool", "context"}, and record and held as
// in workflow.Envelope.
type SystemEvent struct {
	Call    tool.Call      `json:"call"`
	Tool    *tool.Tool     `json:"tool"`
	Context system.Context `json:"context"`
	Record  bool           `json:"record,omitempty"`
	Held    bool           `json:"held,omitempty"`
}

// NewSystem is the system Lambda's handler, running one system call with x; failures are typed
// errors the Lambda boundary names. Like the other executors it runs a call once per (developer,
// call id): a Lambda retry of agent.create answers the agent made, not a second one; and a large
// answer (a long list) travels by reference, as theirs do.
func NewSystem(x *system.Executor) func(context.Context, SystemEvent) (map[string]any, error) {
	guard := &dispatch.Guard{Records: x.Resources.Store}
	return func(ctx context.Context, ev SystemEvent) (map[string]any, error) {
		if err := ev.Call.Validate(); err != nil {
			return nil, err
		}
		if ev.Call.Type != tool.TypeSystem {
			return nil, fault.Invalid("call.type", "the system function runs system calls, not %q", ev.Call.Type)
		}
		dev := ev.Context.DeveloperID
		if dev == "" {
			return nil, fault.Invalid("context.developer_id", "context.developer_id is required")
		}
		env := workflow.Envelope{Call: ev.Call, Record: ev.Record, Held: ev.Held, Context: workflow.Context{DeveloperID: dev,
			AgentID: ev.Context.AgentID, TaskID: ev.Context.TaskID, SessionID: ev.Context.SessionID, ExecutionID: ev.Context.ExecutionID}}
		out, err := runGuarded(x.Resources.Store, guard, env, "system/"+ev.Call.Name())(ctx, dev, ev.Call.ID, func(ctx context.Context) (any, error) {
			out, err := x.Run(ctx, ev.Context, ev.Call.System)
			if err != nil {
				return nil, err
			}
			return x.Resources.Store.StoreValue(ctx, dev, out, workflow.PayloadTTL)
		})
		if err != nil {
			return nil, err
		}
		return workflow.ResultObject(tool.ResultOf(&ev.Call, out)), nil
	}
}
