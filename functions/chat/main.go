// Command chat is the Lambda behind POST /sessions/{session_id}/chat: the model-tool loop within
// the request's time budget. It only wires: the router built from the environment
// (chatenv.Router) and the Lambda error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	"sinew/internal/handler/chatenv"
	"sinew/internal/lambdaboundary"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	slog.SetDefault(log)
	rt, err := chatenv.Router(context.Background(), log)
	if err != nil {
		// Fail the cold start: every request would fail the same way.
		slog.Error("chat configuration", "error", err.Error())
		os.Exit(1)
	}
	lambdaboundary.Start(rt.ServeEvent)
}
