// Package apicall is the apicall Lambda: the executor of api_call calls (executor.APICall), its
// requests sent through the guarded dialer with SINEW_APICALL_ALLOW. It links the KMS client
// (package sealer) that opens setup.
package apicall

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	apicallpkg "sinew/internal/apicall"
	"sinew/internal/executor"
	"sinew/internal/handler"
	"sinew/internal/handler/sealer"
	"sinew/internal/lambdaboundary"
	"sinew/internal/netguard"
)

// New builds the apicall Lambda from env.
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	sl, err := sealer.New(l)
	if err != nil {
		return nil, err
	}
	x := &executor.APICall{Runner: executor.Runner{Store: l.Store(sl), Redactor: env.Redactor},
		APICall: apicallpkg.New(netguard.New(netguard.WithAllowlist(l.Config.APICallAllow)))}
	return lambdaboundary.Handler(executor.Handler(x, executor.NewTokens(l.AWS))), nil
}
