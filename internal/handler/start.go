package handler

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"sinew/internal/secrets"
)

// Start is a Lambda's main: it builds the function with ctor from the process's environment and
// serves it. Every log line passes the redactor, which knows the setup values and resolved secrets
// of the calls in flight (package secrets).
func Start(ctor Constructor) {
	red := secrets.NewRedactor()
	log := slog.New(red.Handler(slog.NewJSONHandler(os.Stderr, nil)))
	slog.SetDefault(log)
	h, err := ctor(context.Background(), Env{Getenv: os.Getenv, Log: log, Redactor: red})
	if err != nil {
		// Fail the cold start on a bad configuration: every invocation would fail the same way.
		log.Error("invalid configuration", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(h)
}
