package resources

import (
	"context"

	"sinew/internal/store"
)

// AgentInput is the body of POST /agents and PUT /agents/{agent_id}.
type AgentInput struct {
	Name            string         `json:"name"`
	About           string         `json:"about,omitempty"`
	Model           string         `json:"model,omitempty"`
	Instructions    any            `json:"instructions,omitempty"`
	DefaultSettings map[string]any `json:"default_settings,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
}

func (in *AgentInput) check() error {
	if err := checkText("name", in.Name, true, maxName); err != nil {
		return err
	}
	if err := checkText("about", in.About, false, maxAbout); err != nil {
		return err
	}
	if err := checkText("model", in.Model, false, maxName); err != nil {
		return err
	}
	return checkStrings("instructions", in.Instructions, false)
}

func (in *AgentInput) apply(a *store.Agent) {
	a.Name, a.About, a.Model, a.Instructions = in.Name, in.About, in.Model, in.Instructions
	a.DefaultSettings, a.Metadata = in.DefaultSettings, in.Metadata
}

func agentInputOf(a *store.Agent) *AgentInput {
	return &AgentInput{Name: a.Name, About: a.About, Model: a.Model, Instructions: a.Instructions,
		DefaultSettings: a.DefaultSettings, Metadata: a.Metadata}
}

// CreateAgent creates an agent from a body.
func (s *Service) CreateAgent(ctx context.Context, dev string, body []byte) (*store.Agent, error) {
	in, err := decodeInput[AgentInput](body)
	if err != nil {
		return nil, err
	}
	var a store.Agent
	in.apply(&a)
	return s.Store.CreateAgent(ctx, dev, a)
}

// ReplaceAgent replaces an agent's fields with a body's (PUT).
func (s *Service) ReplaceAgent(ctx context.Context, dev, id string, body []byte) (*store.Agent, error) {
	in, err := decodeInput[AgentInput](body)
	if err != nil {
		return nil, err
	}
	return s.Store.UpdateAgent(ctx, dev, id, func(a *store.Agent) error {
		in.apply(a)
		return nil
	})
}

// PatchAgent merges a patch into an agent (PATCH).
func (s *Service) PatchAgent(ctx context.Context, dev, id string, body []byte) (*store.Agent, error) {
	patch, err := decodePatch(body)
	if err != nil {
		return nil, err
	}
	return s.Store.UpdateAgent(ctx, dev, id, func(a *store.Agent) error {
		in, err := patchInput[AgentInput](agentInputOf(a), patch)
		if err != nil {
			return err
		}
		in.apply(a)
		return nil
	})
}
