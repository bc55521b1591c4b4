// Command system is the Lambda of system tool calls. It only wires: the executor built
// from the environment and the Lambda error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	"sinew/internal/handler/systemenv"
	"sinew/internal/lambdaboundary"
)

func main() {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	h, err := systemenv.Handler(context.Background())
	if err != nil {
		// Fail the cold start: every invocation would fail the same way.
		slog.Error("invalid configuration", "error", err.Error())
		os.Exit(1)
	}
	lambdaboundary.Start(h)
}
