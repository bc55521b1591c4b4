// Command function is the function Lambda: it only builds the handler's dependencies from the
// environment and starts it behind the Lambda error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	"sinew/internal/handler"
	"sinew/internal/handler/functionenv"
	"sinew/internal/lambdaboundary"
)

func main() {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	deps, err := functionenv.Deps(context.Background())
	if err != nil {
		// Fail the cold start: every invocation would fail the same way.
		slog.Error("invalid configuration", "error", err.Error())
		os.Exit(1)
	}
	lambdaboundary.Start(handler.NewFunction(deps))
}
