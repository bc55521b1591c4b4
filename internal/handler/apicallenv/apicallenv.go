// Package apicallenv builds the apicall Lambda's dependencies from the environment. It is apart
// from package handler because it links the KMS client (package sealer) that opens setup.
package apicallenv

import (
	"context"

	"sinew/internal/apicall"
	"sinew/internal/executor"
	"sinew/internal/handler"
	"sinew/internal/handler/sealer"
	"sinew/internal/netguard"
	"sinew/internal/secrets"
)

// Handler builds the handler from the environment; red is the redactor of the process's log
// handler.
func Handler(ctx context.Context, red *secrets.Redactor) (func(context.Context, executor.Envelope) (map[string]any, error), error) {
	env, err := handler.Load(ctx)
	if err != nil {
		return nil, err
	}
	sl, err := sealer.New(env)
	if err != nil {
		return nil, err
	}
	x := &executor.APICall{Runner: executor.Runner{Store: env.Store(sl), Redactor: red},
		APICall: apicall.New(netguard.New(netguard.WithAllowlist(env.Config.APICallAllow)))}
	return executor.Handler(x, executor.NewTokens(env.AWS)), nil
}
