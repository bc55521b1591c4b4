// Package api is the api Lambda: every HTTP route but chat (package app's router, shared with
// local mode), over the table with the secrets envelope. The catalogue routes and the MCP server's
// tools read the generated catalogue (package schemas), so the function links no provider.
package api

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"sinew/internal/app"
	"sinew/internal/handler"
	"sinew/internal/handler/sealer"
	"sinew/internal/integrations/schemas"
	"sinew/internal/lambdaboundary"
)

// New builds the api Lambda from env.
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	sl, err := sealer.IfKeyed(l)
	if err != nil {
		return nil, err
	}
	rt := app.APIRouter(app.Deps{Config: l.Config, AWS: l.AWS, Store: l.Store(sl), Integrations: schemas.New(), Logger: env.Logger()})
	return lambdaboundary.Handler(rt.ServeEvent), nil
}
