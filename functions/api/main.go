// Command api is the Lambda behind every HTTP route but chat. It only wires: the
// configuration, the table with the secrets envelope, the provider registry the catalogue
// describes, the router (internal/app, shared with local mode) and the Lambda error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	"sinew/internal/app"
	"sinew/internal/handlers/common"
	"sinew/internal/integrations/all"
	"sinew/internal/lambdaboundary"
	"sinew/internal/netguard"
	"sinew/internal/resources"
	"sinew/internal/store"
)

func main() {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	// Fail the cold start on a bad configuration: every request would fail the same way.
	env, err := common.Load(context.Background())
	if err != nil {
		slog.Error("invalid configuration", "error", err.Error())
		os.Exit(1)
	}
	// Without SINEW_SECRETS_KEY, writes that carry setup secrets are refused and the rest works.
	var sealer store.Sealer = resources.SealerUnavailable{}
	if env.Config.SecretsKey != "" {
		if sealer, err = env.Sealer(); err != nil {
			slog.Error("secrets key", "error", err.Error())
			os.Exit(1)
		}
	} else {
		slog.Warn("SINEW_SECRETS_KEY is not set: writes that carry setup secrets will be refused")
	}
	guard, err := netguard.FromEnv()
	if err != nil {
		slog.Error("invalid configuration", "error", err.Error())
		os.Exit(1)
	}
	reg, err := all.New(guard)
	if err != nil {
		slog.Error("integration registry", "error", err.Error())
		os.Exit(1)
	}
	rt := app.APIRouter(app.Deps{Config: env.Config, AWS: env.AWS, Store: env.Store(sealer), Integrations: reg})
	lambdaboundary.Start(rt.ServeEvent)
}
