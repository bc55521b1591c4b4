package executor

import (
	"context"
	"fmt"

	"sinew/internal/fault"
	"sinew/internal/merge"
	"sinew/internal/secrets"
	"sinew/internal/tool"
)

// Providers runs a provider method on merged setup and arguments, and says which setup keys name
// endpoints and secrets; *integrations.Registry is one.
type Providers interface {
	Execute(ctx context.Context, provider, method string, setup, args map[string]any) (any, error)
	SetupBinding(provider string) merge.Binding
}

// Integration runs integration calls: it reads what the merge needs in one BatchGetItem, merges
// setup and arguments, runs the provider (which validates the merged arguments against the
// method's schema) and records the result by call id, so a repeated invocation of the same call
// answers the record instead of running again.
type Integration struct {
	Runner
	Providers Providers
}

var _ Executor = (*Integration)(nil)

// Run runs in's integration call.
func (x *Integration) Run(ctx context.Context, in Envelope) (any, error) {
	if err := CheckEnvelope(in, tool.TypeIntegration, in.Tool != nil && in.Tool.Integration != nil); err != nil {
		return nil, err
	}
	def := in.Tool.Integration
	if len(def.Setup) > 0 {
		return nil, fault.Invalid("tool.integration.setup", "an envelope's tool carries no setup: store the tool, or put the setup in metadata")
	}
	out, err := x.run(ctx, in, func(ctx context.Context, src *merge.Sources, res *secrets.Resolver) (any, error) {
		// A secret goes only to the endpoint named where it was set up: checked on the
		// layers, before anything is opened.
		if err := merge.CheckBinding(*src, x.Providers.SetupBinding(def.Provider)); err != nil {
			return nil, err
		}
		args, setup := merge.Integration(in.Call.Arguments(), def, *src)
		// Developer secrets named in setup ({"secret": "NAME"}, "$ secrets.NAME") are
		// opened here, inside the executor, and nowhere else. Always resolved,
		// so plain setup values are registered with the redactor too.
		setup, err := secrets.ResolveSetup(ctx, res, setup)
		if err != nil {
			return nil, err
		}
		return x.Providers.Execute(ctx, def.Provider, def.Method, setup, args)
	})
	if err != nil {
		err = fmt.Errorf("integration %s.%s: %w", def.Provider, def.Method, err)
	}
	return out, err
}
