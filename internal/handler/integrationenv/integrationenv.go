// Package integrationenv builds the integration Lambda's dependencies from the environment: every
// provider of package all, which only this function (and the catalogue's schemas) links.
package integrationenv

import (
	"context"

	"sinew/internal/executor"
	"sinew/internal/handler"
	"sinew/internal/handler/sealer"
	"sinew/internal/integrations/all"
	"sinew/internal/netguard"
	"sinew/internal/secrets"
)

// Handler builds the handler from the environment: every provider of package all, each set up at
// its first call (all.Lazy), connecting through the guarded dialer with SINEW_APICALL_ALLOW; red
// is the redactor of the process's log handler.
func Handler(ctx context.Context, red *secrets.Redactor) (func(context.Context, executor.Envelope) (map[string]any, error), error) {
	env, err := handler.Load(ctx)
	if err != nil {
		return nil, err
	}
	reg := all.NewLazy(netguard.New(netguard.WithAllowlist(env.Config.APICallAllow)))
	sl, err := sealer.New(env)
	if err != nil {
		return nil, err
	}
	x := &executor.Integration{Runner: executor.Runner{Store: env.Store(sl), Redactor: red}, Providers: reg}
	return executor.Handler(x, executor.NewTokens(env.AWS)), nil
}
