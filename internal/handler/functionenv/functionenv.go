// Package functionenv builds the function executor's dependencies from the environment. It is
// apart from package handler because it links the EventBridge client (package eventbus), which
// only the function executor, the one that announces pending calls, needs.
package functionenv

import (
	"context"

	"sinew/internal/executor"
	"sinew/internal/executor/eventbus"
	"sinew/internal/handler"
)

// Deps builds the dependencies from the environment: the store (the function executor never opens
// setup) and the bus of SINEW_EVENT_BUS (AWS_ENDPOINT_URL_EVENTBRIDGE finds local mode's).
func Deps(ctx context.Context) (handler.FunctionDeps, error) {
	env, err := handler.Load(ctx)
	if err != nil {
		return handler.FunctionDeps{}, err
	}
	return handler.FunctionDeps{Function: &executor.Function{
		Store: env.Store(handler.NoKey{}), Events: eventbus.New(env.AWS), EventBus: env.Config.EventBus,
	}}, nil
}
