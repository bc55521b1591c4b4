package handler

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"sinew/internal/workflow"
)

// FunctionDeps are the handler's dependencies.
type FunctionDeps struct {
	Workflow *workflow.Service // needs Store, Events and EventBus
}

// FunctionOut is the handler's answer: nothing (the Task's result comes from the client).
type FunctionOut struct{}

// NewFunction is the function Lambda's handler: {call, tool, context, task_token} → {}. It records
// a client-side call with its task token and publishes ToolCallPending; the execution then waits
// for the client.
func NewFunction(d FunctionDeps) func(context.Context, workflow.Envelope) (FunctionOut, error) {
	return func(ctx context.Context, in workflow.Envelope) (FunctionOut, error) {
		_, err := d.Workflow.RecordPending(ctx, in)
		return FunctionOut{}, err
	}
}

// FunctionFromEnv builds the dependencies from the environment.
func FunctionFromEnv(ctx context.Context) (FunctionDeps, error) {
	env, err := Load(ctx)
	if err != nil {
		return FunctionDeps{}, err
	}
	return FunctionDeps{Workflow: &workflow.Service{
		Store: env.Store(NoKey{}), Events: eventbridge.NewFromConfig(env.AWS), EventBus: env.Config.EventBus,
	}}, nil
}
