package handler

import (
	"context"

	"sinew/internal/executor"
)

// FunctionDeps are the handler's dependencies.
type FunctionDeps struct {
	Function *executor.Function
}

// FunctionOut is the handler's answer: nothing (the Task's result comes from the client).
type FunctionOut struct{}

// NewFunction is the function Lambda's handler: {call, tool, context, task_token} → {}. It records
// a client-side call with its task token and publishes ToolCallPending; the execution then waits
// for the client.
func NewFunction(d FunctionDeps) func(context.Context, executor.Envelope) (FunctionOut, error) {
	return func(ctx context.Context, in executor.Envelope) (FunctionOut, error) {
		_, err := d.Function.RecordPending(ctx, in)
		return FunctionOut{}, err
	}
}
