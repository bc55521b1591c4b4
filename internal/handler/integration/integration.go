// Package integration is the integration Lambda: the executor of integration calls
// (executor.Integration) over every provider of package all, which only this function (and the
// catalogue's schemas) links.
package integration

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"sinew/internal/executor"
	"sinew/internal/handler"
	"sinew/internal/handler/sealer"
	"sinew/internal/integrations"
	"sinew/internal/integrations/all"
	"sinew/internal/lambdaboundary"
	"sinew/internal/netguard"
)

// New builds the integration Lambda from env: every provider of package all, each set up at its
// first call (all.Lazy), connecting through the guarded dialer with SINEW_APICALL_ALLOW.
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	reg := all.NewLazy(netguard.New(netguard.WithAllowlist(l.Config.APICallAllow)), integrations.WithAWS(l.AWS))
	sl, err := sealer.New(l)
	if err != nil {
		return nil, err
	}
	x := &executor.Integration{Runner: executor.Runner{Store: l.Store(sl), Redactor: env.Redactor}, Providers: reg}
	return lambdaboundary.Handler(executor.Handler(x, executor.NewTokens(l.AWS))), nil
}
