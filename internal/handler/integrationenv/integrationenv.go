// Package integrationenv builds the integration Lambda's dependencies from the environment: every
// provider of package all, which only this function (and the catalogue's schemas) links.
package integrationenv

import (
	"context"

	"sinew/internal/dispatch"
	"sinew/internal/handler"
	"sinew/internal/handler/sealer"
	"sinew/internal/integrations/all"
	"sinew/internal/netguard"
	"sinew/internal/secrets"
)

// Deps builds the dependencies from the environment: every provider of package all, each set up at
// its first call (all.Lazy), connecting through the guarded dialer with SINEW_APICALL_ALLOW; red
// is the redactor of the process's log handler.
func Deps(ctx context.Context, red *secrets.Redactor) (handler.IntegrationDeps, error) {
	env, err := handler.Load(ctx)
	if err != nil {
		return handler.IntegrationDeps{}, err
	}
	reg := all.NewLazy(netguard.New(netguard.WithAllowlist(env.Config.APICallAllow)))
	sl, err := sealer.New(env)
	if err != nil {
		return handler.IntegrationDeps{}, err
	}
	s := env.Store(sl)
	return handler.IntegrationDeps{Executor: handler.Executor{Store: s, Guard: &dispatch.Guard{Records: s}, Redactor: red}, Providers: reg}, nil
}
