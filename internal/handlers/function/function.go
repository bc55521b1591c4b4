// Package function is the handler of the function Lambda (DESIGN §4): it records a client-side call
// with its task token and publishes ToolCallPending; the execution then waits for the client.
package function

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"sinew/internal/handlers/common"
	"sinew/internal/workflow"
)

// Deps are the handler's dependencies.
type Deps struct {
	Workflow *workflow.Service // needs Store, Events and EventBus
}

// Out is the handler's answer: nothing (the Task's result comes from the client).
type Out struct{}

// New is the handler: {call, tool, context, task_token} → {}.
func New(d Deps) func(context.Context, workflow.Envelope) (Out, error) {
	return func(ctx context.Context, in workflow.Envelope) (Out, error) {
		_, err := d.Workflow.RecordPending(ctx, in)
		return Out{}, err
	}
}

// FromEnv builds the dependencies from the environment.
func FromEnv(ctx context.Context) (Deps, error) {
	env, err := common.Load(ctx)
	if err != nil {
		return Deps{}, err
	}
	return Deps{Workflow: &workflow.Service{
		Store: env.Store(common.NoKey{}), Events: eventbridge.NewFromConfig(env.AWS), EventBus: env.Config.EventBus,
	}}, nil
}
