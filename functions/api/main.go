// Command api is the Lambda behind every HTTP route but chat (DESIGN §2). It only wires: the
// configuration, the router with its routes, and the Lambda error boundary.
package main

import (
	"log/slog"
	"os"

	"sinew/internal/config"
	"sinew/internal/httpapi"
	"sinew/internal/lambdaboundary"
)

func main() {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	cfg, err := config.FromEnv()
	if err != nil {
		// Fail the cold start: every request would fail the same way.
		slog.Error("invalid configuration", "error", err.Error())
		os.Exit(1)
	}
	rt := httpapi.New(httpapi.Options{JWTClaim: cfg.JWTClaim})
	// The routes of later items are registered here; GET /healthz and GET /openapi.json come with New.
	lambdaboundary.Start(rt.ServeEvent)
}
