// Command chat is the Lambda behind POST /sessions/{session_id}/chat:
// the model-tool loop within the request's time budget. It only wires: the configuration, the
// chat service, its route and the Lambda error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	chathttp "sinew/internal/handlers/chat"
	"sinew/internal/httpapi"
	"sinew/internal/lambdaboundary"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	slog.SetDefault(log)
	svc, cfg, err := chathttp.FromEnv(context.Background(), log)
	if err != nil {
		// Fail the cold start: every request would fail the same way.
		slog.Error("chat configuration", "error", err.Error())
		os.Exit(1)
	}
	rt := httpapi.New(httpapi.Options{JWTClaim: cfg.JWTClaim})
	chathttp.Register(rt, svc)
	lambdaboundary.Start(rt.ServeEvent)
}
