// Package system is the system function's handler (DESIGN §4): the event {"call", "tool",
// "context"} → the result object; failures are typed errors the Lambda boundary names. It is
// importable so local mode runs the same handler in-process.
package handler

import (
	"context"
	"fmt"
	"log/slog"

	"sinew/internal/chat"
	"sinew/internal/dispatch"
	"sinew/internal/fault"
	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/system"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// SystemEvent is the system function's input (API.md "Lambda events").
type SystemEvent struct {
	Call    tool.Call      `json:"call"`
	Tool    *tool.Tool     `json:"tool"`
	Context system.Context `json:"context"`
}

// NewSystem is the handler running one system call with x. Like the other executors it runs a call once
// per (developer, call id) (DESIGN §3.9): a Lambda retry of agent.create answers the agent made,
// not a second one; and a large answer (a long list) travels by reference, as theirs do.
func NewSystem(x *system.Executor) func(context.Context, SystemEvent) (tool.Result, error) {
	guard := &dispatch.Guard{Records: x.Resources.Store}
	return func(ctx context.Context, ev SystemEvent) (tool.Result, error) {
		if err := ev.Call.Validate(); err != nil {
			return tool.Result{}, err
		}
		if ev.Call.Type != tool.TypeSystem {
			return tool.Result{}, fault.Invalid("call.type", "the system function runs system calls, not %q", ev.Call.Type)
		}
		dev := ev.Context.DeveloperID
		if dev == "" {
			return tool.Result{}, fault.Invalid("context.developer_id", "context.developer_id is required")
		}
		out, err := guard.Run(ctx, dev, ev.Call.ID, "system/"+ev.Call.Name(), func(ctx context.Context) (any, error) {
			out, err := x.Run(ctx, ev.Context, ev.Call.System)
			if err != nil {
				return nil, err
			}
			return x.Resources.Store.StoreValue(ctx, dev, out, workflow.PayloadTTL)
		})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.ResultOf(&ev.Call, out), nil
	}
}

// SystemFromEnv builds the executor from the environment, with session.chat and task.execution.create
// run by the chat service (DESIGN §4): the system role also holds what chat needs (the stack's
// alsoRuns), and a chat's own system calls come back here one level deeper, bounded by MaxDepth.
func SystemFromEnv(ctx context.Context) (*system.Executor, error) {
	env, err := Load(ctx)
	if err != nil {
		return nil, err
	}
	var sealer store.Sealer = resources.SealerUnavailable{}
	if env.Config.SecretsKey != "" {
		if sealer, err = env.Sealer(); err != nil {
			return nil, err
		}
	} else {
		slog.Warn("SINEW_SECRETS_KEY is not set: writes that carry setup secrets will be refused")
	}
	st := env.Store(sealer)
	svc, _, err := ChatFromEnv(ctx, slog.Default())
	if err != nil {
		return nil, fmt.Errorf("session.chat's chat service: %w", err)
	}
	sys := chat.NewSystem(svc)
	return &system.Executor{Resources: &resources.Service{Store: st, FlagDefaults: env.Config.FlagDefaults}, Chat: sys, Executions: sys}, nil
}
