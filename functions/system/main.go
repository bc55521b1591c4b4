// Command system is the Lambda of system tool calls (DESIGN §4): the event {"call", "tool",
// "context"} → the result object {"id", "type", "name", "output"}; failures are Lambda errors named
// as DESIGN §3.3. It only wires: the configuration, the store, the executor and the error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/lambdaboundary"
	"sinew/internal/resources"
	"sinew/internal/secrets"
	"sinew/internal/store"
	"sinew/internal/system"
	"sinew/internal/tool"
)

// Event is the system function's input (API.md "Lambda events"); Tool is the definition without
// setup, which a system call does not need beyond its envelope.
type Event struct {
	Call    tool.Call      `json:"call"`
	Tool    *tool.Tool     `json:"tool"`
	Context system.Context `json:"context"`
}

// handler runs one system call with x.
func handler(x *system.Executor) func(context.Context, Event) (tool.Result, error) {
	return func(ctx context.Context, ev Event) (tool.Result, error) {
		if err := ev.Call.Validate(); err != nil {
			return tool.Result{}, err
		}
		if ev.Call.Type != tool.TypeSystem {
			return tool.Result{}, fault.Invalid("call.type", "the system function runs system calls, not %q", ev.Call.Type)
		}
		out, err := x.Run(ctx, ev.Context, ev.Call.System)
		if err != nil {
			return tool.Result{}, err
		}
		return tool.ResultOf(&ev.Call, out), nil
	}
}

func main() {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	cfg, err := config.FromEnv()
	if err != nil {
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
	x := &system.Executor{
		Resources: &resources.Service{Store: st, FlagDefaults: cfg.FlagDefaults},
		// TODO(chat item): Executions and Chat, once agent_loop starts and chat exist; until then
		// task.execution.create and session.chat answer "not available yet".
	}
	lambdaboundary.Start(handler(x))
}

// sealer is the KMS envelope over SINEW_SECRETS_KEY (local mode's KMS answers through
// AWS_ENDPOINT_URL_KMS); without the key, writes that carry setup secrets are refused and the rest
// works.
func sealer(awsCfg awsv2.Config, cfg *config.Config) store.Sealer {
	if cfg.SecretsKey == "" {
		slog.Warn("SINEW_SECRETS_KEY is not set: writes that carry setup secrets will be refused")
		return resources.SealerUnavailable{}
	}
	env, err := secrets.NewEnvelopeFromConfig(awsCfg, cfg.SecretsKey)
	if err != nil {
		slog.Error("secrets key", "error", err.Error())
		os.Exit(1)
	}
	return env
}
