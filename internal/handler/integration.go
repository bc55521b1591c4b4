package handler

import (
	"context"
	"fmt"

	"sinew/internal/fault"
	"sinew/internal/merge"
	"sinew/internal/secrets"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Providers runs a provider method on merged setup and arguments, and says which setup keys name
// endpoints and secrets; *integrations.Registry is one.
type Providers interface {
	Execute(ctx context.Context, provider, method string, setup, args map[string]any) (any, error)
	SetupBinding(provider string) merge.Binding
}

// IntegrationDeps are the handler's dependencies: the shared executor (store, idempotency guard, redactor)
// and the providers.
type IntegrationDeps struct {
	Executor
	Providers Providers
}

// NewIntegration is the integration Lambda's handler: {call, tool, context} → the result object.
// It reads what the merge needs in one BatchGetItem, merges setup and arguments, runs the provider
// (which validates the merged arguments against the method's schema) and records the result by
// call id, so a repeated invocation of the same call returns the record instead of running again.
func NewIntegration(d IntegrationDeps) func(context.Context, workflow.Envelope) (map[string]any, error) {
	return func(ctx context.Context, in workflow.Envelope) (map[string]any, error) {
		out, err := runIntegration(ctx, d, in)
		return answerOrReturn(ctx, d.Tokens, in.TaskToken, in.WholeResult, &in.Call, out, err)
	}
}

func runIntegration(ctx context.Context, d IntegrationDeps, in workflow.Envelope) (any, error) {
	if err := CheckEnvelope(in, tool.TypeIntegration, in.Tool != nil && in.Tool.Integration != nil); err != nil {
		return nil, err
	}
	if len(in.Tool.Integration.Setup) > 0 {
		return nil, fault.Invalid("tool.integration.setup", "an envelope's tool carries no setup: store the tool, or put the setup in metadata")
	}
	out, err := d.Run(ctx, in, "integration", func(ctx context.Context, src *merge.Sources, res *secrets.Resolver) (any, error) {
		// A secret goes only to the endpoint named where it was set up: checked on the
		// layers, before anything is opened.
		if err := merge.CheckBinding(*src, d.Providers.SetupBinding(in.Tool.Integration.Provider)); err != nil {
			return nil, err
		}
		args, setup := merge.Integration(in.Call.Arguments(), in.Tool.Integration, *src)
		// Developer secrets named in setup ({"secret": "NAME"}, "$ secrets.NAME") are
		// opened here, inside the executor, and nowhere else. Always resolved,
		// so plain setup values are registered with the redactor too.
		setup, err := secrets.ResolveSetup(ctx, res, setup)
		if err != nil {
			return nil, err
		}
		return d.Providers.Execute(ctx, in.Tool.Integration.Provider, in.Tool.Integration.Method, setup, args)
	})
	if err != nil {
		err = fmt.Errorf("integration %s.%s: %w", in.Tool.Integration.Provider, in.Tool.Integration.Method, err)
	}
	return out, err
}
