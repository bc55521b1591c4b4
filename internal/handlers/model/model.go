// Package model is the model Lambda's handler: agent_loop's model step (package agentloop), wired
// from the environment.
package model

import (
	"context"
	"fmt"
	"log/slog"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"sinew/internal/agentloop"
	"sinew/internal/handlers/common"
	"sinew/internal/integrations/all"
	"sinew/internal/llm/models"
	"sinew/internal/netguard"
	"sinew/internal/system"
	"sinew/internal/toolfmt"
)

// New is the handler: one model step per invocation.
func New(s *agentloop.Stepper) func(context.Context, agentloop.Event) (*agentloop.Output, error) {
	return func(ctx context.Context, ev agentloop.Event) (*agentloop.Output, error) {
		out, err := s.Step(ctx, ev)
		if err != nil {
			return nil, fmt.Errorf("agent_loop %s: %w", ev.ExecutionID, err)
		}
		return out, nil
	}
}

// FromEnv builds the stepper from the environment: the store (the model step never opens setup),
// the configured model and the formatter over every provider's schemas and the system handlers.
func FromEnv(ctx context.Context, log *slog.Logger) (*agentloop.Stepper, error) {
	env, err := common.Load(ctx)
	if err != nil {
		return nil, err
	}
	cfg := env.Config
	sm := secretsmanager.NewFromConfig(env.AWS)
	m, err := models.FromConfig(ctx, cfg, models.Deps{AWS: env.AWS, SecretValue: func(ctx context.Context, name string) (string, error) {
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: awsv2.String(name)})
		if err != nil {
			return "", fmt.Errorf("read the secret %s: %w", name, err)
		}
		return awsv2.ToString(out.SecretString), nil
	}})
	if err != nil {
		return nil, fmt.Errorf("the model: %w", err)
	}
	reg, err := all.New(netguard.New(netguard.WithAllowlist(cfg.APICallAllow)))
	if err != nil {
		return nil, err
	}
	return agentloop.New(agentloop.Deps{
		Store: env.Store(common.NoKey{}), Model: m, FlagDefaults: cfg.FlagDefaults, Log: log,
		MaxCallsPerReply: cfg.MaxCallsPerReply, MaxCallsPerTurn: cfg.MaxCallsPerTurn,
		Formatter: &toolfmt.Formatter{Integrations: reg, System: SystemSchema},
	}), nil
}

// SystemSchema gives toolfmt a system handler's parameters and description.
func SystemSchema(resource, subresource, operation string) (map[string]any, string, error) {
	params, err := system.Parameters(resource, subresource, operation)
	if err != nil {
		return nil, "", err
	}
	desc, err := system.Description(resource, subresource, operation)
	if err != nil {
		return nil, "", err
	}
	return params, desc, nil
}
