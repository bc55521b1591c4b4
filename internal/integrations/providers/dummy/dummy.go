// Package dummy is the dummy integration: whatever the method, it echoes the merged arguments as its
// output, as Julep's does, and opens no connection. Setup and arguments are free-form objects. Unlike Julep, where
// dummy is handled in agents-api and is missing from the catalogue, sinew registers it as a provider,
// so it has a catalogue entry and a model-facing schema (a free-form object).
//
// Julep's dummy handling: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/agents-api/agents_api/activities/execute_integration.py
package dummy

import (
	"context"

	"sinew/internal/integrations"
)

// Setup is free-form; dummy ignores it.
type Setup = map[string]any

// Arguments are free-form; dummy returns them.
type Arguments = map[string]any

// Output is the merged arguments, unchanged.
type Output = map[string]any

func echo(_ context.Context, _ integrations.Env, _ Setup, args Arguments) (Output, error) {
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// Provider is the dummy provider.
var Provider = &integrations.Provider{
	Name:         "dummy",
	FriendlyName: "Dummy",
	URL:          "https://docs.julep.ai/integrations",
	Docs:         "https://docs.julep.ai/integrations",
	Methods: []*integrations.Method{
		integrations.NewMethod("echo", "Return the arguments unchanged (for testing tool wiring).", echo),
	},
	AnyMethod: true,
}
