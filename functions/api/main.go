// Command api is the Lambda behind every HTTP route but chat (DESIGN §2). It only wires: the
// configuration, the router with its routes, and the Lambda error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"sinew/internal/config"
	"sinew/internal/httpapi"
	"sinew/internal/lambdaboundary"
	"sinew/internal/resources"
	"sinew/internal/secrets"
	"sinew/internal/store"
)

func main() {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	cfg, err := config.FromEnv()
	if err != nil {
		// Fail the cold start: every request would fail the same way.
		slog.Error("invalid configuration", "error", err.Error())
		os.Exit(1)
	}
	// The SDK finds a local endpoint through AWS_ENDPOINT_URL_DYNAMODB (DESIGN §8).
	awsCfg, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		slog.Error("AWS configuration", "error", err.Error())
		os.Exit(1)
	}
	st := store.NewFromConfig(awsCfg, cfg.Table, sealer(awsCfg, cfg))
	rt := httpapi.New(httpapi.Options{JWTClaim: cfg.JWTClaim})
	// The routes of later items are registered here; GET /healthz and GET /openapi.json come with New.
	resources.Register(rt, &resources.Service{Store: st, FlagDefaults: cfg.FlagDefaults})
	lambdaboundary.Start(rt.ServeEvent)
}

// sealer is the KMS envelope over SINEW_SECRETS_KEY (local mode's KMS answers through
// AWS_ENDPOINT_URL_KMS); without the key, writes that carry setup secrets are refused and the rest
// works.
func sealer(awsCfg awsv2.Config, cfg *config.Config) store.Sealer {
	if cfg.SecretsKey == "" {
		slog.Warn("SINEW_SECRETS_KEY is not set: writes that carry setup secrets will be refused")
		return resources.SealerUnavailable{}
	}
	env, err := secrets.NewEnvelope(kms.NewFromConfig(awsCfg), cfg.SecretsKey)
	if err != nil {
		slog.Error("secrets key", "error", err.Error())
		os.Exit(1)
	}
	return env
}
