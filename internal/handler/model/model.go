// Package model is the model Lambda.
//
// It is agent_loop's model step (statemachines/agent_loop.asl.json, package agentloop), which feeds
// the previous turn's results, prompts the model once and answers the calls to run next or the
// loop's output; and the configured model and tool formatter that the chat service shares with it.
// The functions that link the model clients are the ones that import it.
package model

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"
	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"sinew/internal/handler"
	"sinew/internal/integrations/schemas"
	"sinew/internal/lambdaboundary"
	"sinew/internal/llm"
	"sinew/internal/llm/models"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/system"
)

// New builds the model Lambda from env: the store (the model step never opens setup), the
// configured model and the formatter.
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	cfg := l.Config
	m, err := Model(ctx, l)
	if err != nil {
		return nil, err
	}
	s := agentloop.New(agentloop.Deps{
		Store: l.Store(handler.NoKey{}), Model: m, FlagDefaults: cfg.FlagDefaults, Log: env.Logger(),
		MaxCallsPerReply: cfg.MaxCallsPerReply, MaxCallsPerTurn: cfg.MaxCallsPerTurn, Formatter: Formatter(),
		ToolSearchThreshold: cfg.ToolSearchThreshold,
	})
	return lambdaboundary.Handler(Handler(s)), nil
}

// Handler is the model Lambda's handler: agent_loop's model step, one per invocation.
func Handler(s *agentloop.Stepper) func(context.Context, agentloop.Event) (*agentloop.Output, error) {
	return func(ctx context.Context, ev agentloop.Event) (*agentloop.Output, error) {
		out, err := s.Step(ctx, ev)
		if err != nil {
			return nil, fmt.Errorf("agent_loop %s: %w", ev.ExecutionID, err)
		}
		return out, nil
	}
}

// Model is the model SINEW_MODEL configures (package models), its endpoint key read from Secrets
// Manager.
func Model(ctx context.Context, l *handler.Loaded) (llm.Model, error) {
	m, err := models.FromConfig(ctx, l.Config, models.Deps{AWS: l.AWS, SecretValue: secretValue(l.AWS)})
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
