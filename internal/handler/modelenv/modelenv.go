// Package modelenv builds agent_loop's model step from the environment, and the configured model
// and tool formatter that the chat service shares with it: the functions that link the model
// clients are the ones that import it.
package modelenv

import (
	"context"
	"fmt"
	"log/slog"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"sinew/internal/handler"
	"sinew/internal/integrations/schemas"
	"sinew/internal/llm"
	"sinew/internal/llm/models"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/system"
)

// NewModel is the model Lambda's handler: agent_loop's model step (package agentloop), one per
// invocation.
func NewModel(s *agentloop.Stepper) func(context.Context, agentloop.Event) (*agentloop.Output, error) {
	return func(ctx context.Context, ev agentloop.Event) (*agentloop.Output, error) {
		out, err := s.Step(ctx, ev)
		if err != nil {
			return nil, fmt.Errorf("agent_loop %s: %w", ev.ExecutionID, err)
		}
		return out, nil
	}
}

// Stepper builds the model step from the environment: the store (the model step never opens
// setup), the configured model and the formatter; log is the stepper's logger.
func Stepper(ctx context.Context, log *slog.Logger) (*agentloop.Stepper, error) {
	env, err := handler.Load(ctx)
	if err != nil {
		return nil, err
	}
	cfg := env.Config
	m, err := Model(ctx, env)
	if err != nil {
		return nil, err
	}
	return agentloop.New(agentloop.Deps{
		Store: env.Store(handler.NoKey{}), Model: m, FlagDefaults: cfg.FlagDefaults, Log: log,
		MaxCallsPerReply: cfg.MaxCallsPerReply, MaxCallsPerTurn: cfg.MaxCallsPerTurn, Formatter: Formatter(),
	}), nil
}

// Model is the model SINEW_MODEL configures (package models), its endpoint key read from Secrets
// Manager.
func Model(ctx context.Context, env *handler.Env) (llm.Model, error) {
	m, err := models.FromConfig(ctx, env.Config, models.Deps{AWS: env.AWS, SecretValue: secretValue(env.AWS)})
	if err != nil {
		return nil, fmt.Errorf("the model: %w", err)
	}
	return m, nil
}

// Formatter gives the model every provider's tool schemas, from the generated catalogue (package
// schemas: the model and chat functions run no provider, so they link none), and the system tools'.
func Formatter() *toolfmt.Formatter {
	return &toolfmt.Formatter{Integrations: schemas.New(), System: system.Schema}
}

// secretValue reads a Secrets Manager secret's string (the OpenAI-compatible endpoint's key).
func secretValue(aws awsv2.Config) func(ctx context.Context, name string) (string, error) {
	c := secretsmanager.NewFromConfig(aws)
	return func(ctx context.Context, name string) (string, error) {
		out, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: awsv2.String(name)})
		if err != nil {
			return "", fmt.Errorf("read the secret %s: %w", name, err)
		}
		return awsv2.ToString(out.SecretString), nil
	}
}
