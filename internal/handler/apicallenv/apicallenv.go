// Package apicallenv builds the apicall Lambda's dependencies from the environment. It is apart
// from package handler because it links the KMS client (package sealer) that opens setup.
package apicallenv

import (
	"context"

	"sinew/internal/apicall"
	"sinew/internal/dispatch"
	"sinew/internal/handler"
	"sinew/internal/handler/sealer"
	"sinew/internal/netguard"
	"sinew/internal/secrets"
)

// Deps builds the dependencies from the environment; red is the redactor of the process's log
// handler.
func Deps(ctx context.Context, red *secrets.Redactor) (handler.APICallDeps, error) {
	env, err := handler.Load(ctx)
	if err != nil {
		return handler.APICallDeps{}, err
	}
	sl, err := sealer.New(env)
	if err != nil {
		return handler.APICallDeps{}, err
	}
	s := env.Store(sl)
	return handler.APICallDeps{
		Executor: handler.Executor{Store: s, Guard: &dispatch.Guard{Records: s}, Redactor: red},
		APICall:  apicall.New(netguard.New(netguard.WithAllowlist(env.Config.APICallAllow))),
	}, nil
}
