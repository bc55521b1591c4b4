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
	// WholeResult: the token is answered with the result object (workflow.Envelope).
	WholeResult bool `json:"whole_result,omitempty"`
	// TaskToken: the call came through tool_call's Dispatch state, and its outcome goes to the token.
	TaskToken string `json:"task_token,omitempty"`
}

// NewSystem is the system Lambda's handler, running one system call with x; failures are typed
// errors the Lambda boundary names. Like the other executors it runs a call once per (developer,
// call id): a Lambda retry of agent.create answers the agent made, not a second one; and a large
// answer (a long list) travels by reference, as theirs do. tk answers a Dispatch state's token
// (none: one client per process from the environment).
func NewSystem(x *system.Executor, tk ...*Tokens) func(context.Context, SystemEvent) (map[string]any, error) {
	guard := &dispatch.Guard{Records: x.Resources.Store}
	tokens := defaultTokens
	if len(tk) > 0 {
		tokens = tk[0]
	}
	return func(ctx context.Context, ev SystemEvent) (map[string]any, error) {
		out, err := runSystem(ctx, x, guard, ev)
		return answerOrReturn(ctx, tokens, ev.TaskToken, ev.WholeResult, &ev.Call, out, err)
	}
}

func runSystem(ctx context.Context, x *system.Executor, guard *dispatch.Guard, ev SystemEvent) (any, error) {
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
	return runGuarded(x.Resources.Store, guard, env, "system/"+ev.Call.Name())(ctx, dev, ev.Call.ID, func(ctx context.Context) (any, error) {
		out, err := x.Run(ctx, ev.Context, ev.Call.System)
		if err != nil {
			return nil, err
		}
		return x.Resources.Store.StoreValue(ctx, dev, out, workflow.PayloadTTL)
	})
}
