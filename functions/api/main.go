// Command api is the Lambda behind every HTTP route but chat. It only wires: the router built from
// the environment (apienv.Router) and the Lambda error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	"sinew/internal/handler/apienv"
	"sinew/internal/lambdaboundary"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	slog.SetDefault(log)
	rt, err := apienv.Router(context.Background(), log)
	if err != nil {
		// Fail the cold start on a bad configuration: every request would fail the same way.
		slog.Error("invalid configuration", "error", err.Error())
		os.Exit(1)
	}
	lambdaboundary.Start(rt.ServeEvent)
}
