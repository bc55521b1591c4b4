package handler

import (
	"context"

	"sinew/internal/workflow"
)

// PrepareDeps are the handler's dependencies.
type PrepareDeps struct {
	Workflow *workflow.Service // needs Store
}

// NewPrepare is the prepare Lambda's handler, tool_call's first state: the tool_call input plus
// execution_id → {call, tool, context, wait}.
func NewPrepare(d PrepareDeps) func(context.Context, workflow.PrepareInput) (*workflow.Prepared, error) {
	return d.Workflow.Prepare
}

// PrepareFromEnv builds the dependencies from the environment.
func PrepareFromEnv(ctx context.Context) (PrepareDeps, error) {
	env, err := Load(ctx)
	if err != nil {
		return PrepareDeps{}, err
	}
	return PrepareDeps{Workflow: &workflow.Service{Store: env.Store(NoKey{})}}, nil
}
