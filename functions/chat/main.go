// Command chat is the Lambda behind POST /sessions/{session_id}/chat (DESIGN §1, API.md "Chat"):
// the model-tool loop within the request's time budget. It only wires: the configuration, the
// chat service, its route and the Lambda error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	"sinew/internal/chat"
	"sinew/internal/handler"
	"sinew/internal/httpapi"
	"sinew/internal/lambdaboundary"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	slog.SetDefault(log)
	svc, cfg, err := handler.ChatFromEnv(context.Background(), log)
	if err != nil {
		// Fail the cold start: every request would fail the same way.
		slog.Error("chat configuration", "error", err.Error())
		os.Exit(1)
	}
	rt := httpapi.New(httpapi.Options{JWTClaim: cfg.JWTClaim})
	chat.Register(rt, svc)
	lambdaboundary.Start(rt.ServeEvent)
}
