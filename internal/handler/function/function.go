// Package function is the function Lambda: the function executor (executor.Function), which records
// a client-side call with its task token and publishes ToolCallPending; the execution then waits
// for the client. It alone links the EventBridge client (package eventbus).
package function

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"sinew/internal/executor"
	"sinew/internal/executor/eventbus"
	"sinew/internal/handler"
	"sinew/internal/lambdaboundary"
)

// New builds the function Lambda from env: the store (the function executor never opens setup) and
// the bus of SINEW_EVENT_BUS (AWS_ENDPOINT_URL_EVENTBRIDGE finds local mode's), unless
// SINEW_PENDING_EVENTS is off.
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	f := &executor.Function{Store: l.Store(handler.NoKey{}), EventBus: l.Config.EventBus, Log: env.Log}
	if l.Config.PendingEvents {
		f.Events = eventbus.New(l.AWS)
	}
	return lambdaboundary.Handler(Handler(f)), nil
}

// Handler is the function Lambda's handler: {call, tool, context, task_token} → {} (the Task's
// result comes from the client).
func Handler(f *executor.Function) func(context.Context, executor.Envelope) (struct{}, error) {
	return func(ctx context.Context, in executor.Envelope) (struct{}, error) {
		_, err := f.RecordPending(ctx, in)
		return struct{}{}, err
	}
}
