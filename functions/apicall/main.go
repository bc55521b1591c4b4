// Command apicall is the apicall Lambda: it only builds the handler's dependencies from the
// environment and starts it behind the Lambda error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	"sinew/internal/handler/apicallenv"
	"sinew/internal/lambdaboundary"
	"sinew/internal/secrets"
)

func main() {
	// Every log line passes the redactor, which knows the setup values and resolved secrets of
	// the calls in flight (package secrets).
	red := secrets.NewRedactor()
	slog.SetDefault(slog.New(red.Handler(slog.NewJSONHandler(os.Stdout, nil))))
	h, err := apicallenv.Handler(context.Background(), red)
	if err != nil {
		// Fail the cold start: every invocation would fail the same way.
		slog.Error("invalid configuration", "error", err.Error())
		os.Exit(1)
	}
	lambdaboundary.Start(h)
}
