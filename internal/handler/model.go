package handler

import (
	"context"
	"fmt"
	"log/slog"

	"sinew/internal/integrations/all"
	"sinew/internal/llm/models"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/netguard"
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

// ModelFromEnv builds the stepper from the environment: the store (the model step never opens setup),
// the configured model and the formatter over every provider's schemas and the system handlers.
func ModelFromEnv(ctx context.Context, log *slog.Logger) (*agentloop.Stepper, error) {
	env, err := Load(ctx)
	if err != nil {
		return nil, err
	}
	cfg := env.Config
	m, err := models.FromConfig(ctx, cfg, models.Deps{AWS: env.AWS, SecretValue: secretValue(env.AWS)})
	if err != nil {
		return nil, fmt.Errorf("the model: %w", err)
	}
	reg, err := all.New(netguard.New(netguard.WithAllowlist(cfg.APICallAllow)))
	if err != nil {
		return nil, err
	}
	return agentloop.New(agentloop.Deps{
		Store: env.Store(NoKey{}), Model: m, FlagDefaults: cfg.FlagDefaults, Log: log,
		MaxCallsPerReply: cfg.MaxCallsPerReply, MaxCallsPerTurn: cfg.MaxCallsPerTurn,
		Formatter: &toolfmt.Formatter{Integrations: reg, System: system.Schema},
	}), nil
}
