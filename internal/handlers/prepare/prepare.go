// Package prepare is the handler of the prepare Lambda, tool_call's first state (DESIGN §3.8).
package prepare

import (
	"context"

	"sinew/internal/handlers/common"
	"sinew/internal/workflow"
)

// Deps are the handler's dependencies.
type Deps struct {
	Workflow *workflow.Service // needs Store
}

// New is the handler: the tool_call input plus execution_id → {call, tool, context, wait}.
func New(d Deps) func(context.Context, workflow.PrepareInput) (*workflow.Prepared, error) {
	return d.Workflow.Prepare
}

// FromEnv builds the dependencies from the environment.
func FromEnv(ctx context.Context) (Deps, error) {
	env, err := common.Load(ctx)
	if err != nil {
		return Deps{}, err
	}
	return Deps{Workflow: &workflow.Service{Store: env.Store(common.NoKey{})}}, nil
}
