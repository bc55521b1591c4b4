package executor

import (
	"context"

	"sinew/internal/executor/guard"
	"sinew/internal/fault"
	"sinew/internal/system"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// System runs system calls with its executor. Like the other executors it runs a call once per
// (developer, call id): a Lambda retry of agent.create answers the agent made, not a second one;
// and a large answer (a long list) travels by reference, as theirs do.
type System struct {
	System *system.Executor
	Guard  *guard.Guard // nil: one over the resources' store
}

var _ Executor = (*System)(nil)

// Run runs in's system call; the tool's definition is not needed (the call names the operation).
func (x *System) Run(ctx context.Context, in Envelope) (any, error) {
	if err := in.Call.Validate(); err != nil {
		return nil, err
	}
	if in.Call.Type != tool.TypeSystem {
		return nil, fault.Invalid("call.type", "the system function runs system calls, not %q", in.Call.Type)
	}
	c := in.Context
	if c.DeveloperID == "" {
		return nil, fault.Invalid("context.developer_id", "context.developer_id is required")
	}
	st := x.System.Resources.Store
	cc := system.Context{DeveloperID: c.DeveloperID, AgentID: c.AgentID, TaskID: c.TaskID, SessionID: c.SessionID,
		ExecutionID: c.ExecutionID, Depth: c.Depth, TurnID: c.TurnID}
	return runGuarded(st, x.Guard, in)(ctx, func(ctx context.Context) (any, error) {
		out, err := x.System.Run(ctx, cc, in.Call.System)
		if err != nil {
			return nil, err
		}
		return st.StoreValue(ctx, c.DeveloperID, out, workflow.PayloadTTL)
	})
}
