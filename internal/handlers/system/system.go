// Package system is the system function's handler (DESIGN §4): the event {"call", "tool",
// "context"} → the result object; failures are typed errors the Lambda boundary names. It is
// importable so local mode runs the same handler in-process.
package system

import (
	"context"
	"log/slog"

	"sinew/internal/fault"
	"sinew/internal/handlers/common"
	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/system"
	"sinew/internal/tool"
)

// Event is the system function's input (API.md "Lambda events").
type Event struct {
	Call    tool.Call      `json:"call"`
	Tool    *tool.Tool     `json:"tool"`
	Context system.Context `json:"context"`
}

// New is the handler running one system call with x.
func New(x *system.Executor) func(context.Context, Event) (tool.Result, error) {
	return func(ctx context.Context, ev Event) (tool.Result, error) {
		if err := ev.Call.Validate(); err != nil {
			return tool.Result{}, err
		}
		if ev.Call.Type != tool.TypeSystem {
			return tool.Result{}, fault.Invalid("call.type", "the system function runs system calls, not %q", ev.Call.Type)
		}
		out, err := x.Run(ctx, ev.Context, ev.Call.System)
		if err != nil {
			return tool.Result{}, err
		}
		return tool.ResultOf(&ev.Call, out), nil
	}
}

// FromEnv builds the executor from the environment. session.chat and task.execution.create answer
// "not available yet" here: running a chat needs the model's and the executors' permissions, which
// the system role does not hold (see the chat package's System adapter, tested but not wired).
func FromEnv(ctx context.Context) (*system.Executor, error) {
	env, err := common.Load(ctx)
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
	return &system.Executor{Resources: &resources.Service{Store: st, FlagDefaults: env.Config.FlagDefaults}}, nil
}
