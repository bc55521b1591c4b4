// Package apienv builds the api Lambda's router from the environment. It is apart from package
// handler, as are the other *env packages, because a binary links every package its imports
// reach: the router's routes and the integration catalogue belong to the api function alone.
package apienv

import (
	"context"
	"log/slog"

	"sinew/internal/app"
	"sinew/internal/handler"
	"sinew/internal/handler/sealer"
	"sinew/internal/httpapi"
	"sinew/internal/integrations/schemas"
)

// Router builds the api Lambda's router from the environment: every HTTP route but chat
// (package app, shared with local mode), over the table with the secrets envelope; the catalogue
// routes and the MCP server's tools read the generated catalogue (package schemas), so the
// function links no provider. log is the router's logger.
func Router(ctx context.Context, log *slog.Logger) (*httpapi.Router, error) {
	env, err := handler.Load(ctx)
	if err != nil {
		return nil, err
	}
	sl, err := sealer.IfKeyed(env)
	if err != nil {
		return nil, err
	}
	return app.APIRouter(app.Deps{Config: env.Config, AWS: env.AWS, Store: env.Store(sl), Integrations: schemas.New(), Logger: log}), nil
}
