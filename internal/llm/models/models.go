// Package models builds the configured llm.Model from SINEW_MODEL (config.Model): bedrock:<model
// id>, openai:<model> (at SINEW_OPENAI_BASE_URL, OpenAI's API when unset, with the key from
// SINEW_OPENAI_API_KEY or the secret SINEW_OPENAI_KEY_SECRET names) or scripted:<file>. It is apart from package llm because it imports every adapter, and the adapters
// import llm.
package models

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/llm/bedrock"
	"sinew/internal/llm/openai"
	"sinew/internal/llm/scripted"
)

// Deps are what the adapters need from outside.
type Deps struct {
	// AWS is the SDK configuration for Bedrock (its endpoint follows AWS_ENDPOINT_URL_BEDROCK_RUNTIME
	// as the SDK reads it).
	AWS aws.Config
	// SecretValue reads a Secrets Manager secret's string: the OpenAI-compatible endpoint's key.
	// nil, or an empty SINEW_OPENAI_KEY_SECRET, sends no key.
	SecretValue func(ctx context.Context, name string) (string, error)
	// HTTPClient for the OpenAI-compatible endpoint; nil is the client's default.
	HTTPClient *http.Client
}

// FromConfig makes the model that c.Model names.
func FromConfig(ctx context.Context, c *config.Config, d Deps) (llm.Model, error) {
	switch c.Model.Provider {
	case "bedrock":
		return bedrock.New(d.AWS, c.Model.Name), nil
	case "openai":
		key := c.OpenAIAPIKey
		if c.OpenAIKey != "" && d.SecretValue != nil {
			k, err := d.SecretValue(ctx, c.OpenAIKey)
			if err != nil {
				return nil, fmt.Errorf("reading the model endpoint's key from %s: %w", config.EnvOpenAIKey, err)
			}
			key = k
		}
		return openai.New(c.Model.Name, openai.Options{BaseURL: c.OpenAIBaseURL, APIKey: key, HTTPClient: d.HTTPClient}), nil
	case "scripted":
		return scripted.Load(c.Model.Name)
	}
	return nil, fault.Invalid(config.EnvModel, "%s names an unknown model provider %q", config.EnvModel, c.Model.Provider)
}
