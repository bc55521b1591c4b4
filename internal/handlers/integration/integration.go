// Package integration is the handler of the integration Lambda (DESIGN §4): it reads what the merge
// needs in one BatchGetItem, merges setup and arguments (§3.4), runs the provider (which validates
// the merged arguments against the method's schema) and records the result by call id, so a
// repeated invocation of the same call returns the record instead of running again.
package integration

import (
	"context"
	"fmt"

	"sinew/internal/dispatch"
	"sinew/internal/fault"
	"sinew/internal/handlers/common"
	"sinew/internal/integrations/all"
	"sinew/internal/merge"
	"sinew/internal/netguard"
	"sinew/internal/secrets"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Providers runs a provider method on merged setup and arguments; *integrations.Registry is one.
type Providers interface {
	Execute(ctx context.Context, provider, method string, setup, args map[string]any) (any, error)
}

// Deps are the handler's dependencies.
type Deps struct {
	Store     *store.Store // with a sealer that opens setup
	Providers Providers
	Guard     *dispatch.Guard
	// Redactor learns each call's setup values for the call's duration; the process's log
	// handler wraps it (secrets.Redactor.Handler). Nil: a redactor of the handler's own, which
	// still redacts the errors the call returns.
	Redactor *secrets.Redactor
}

// New is the handler: {call, tool, context} → the result object.
func New(d Deps) func(context.Context, workflow.Envelope) (map[string]any, error) {
	if d.Redactor == nil {
		d.Redactor = secrets.NewRedactor()
	}
	return func(ctx context.Context, in workflow.Envelope) (map[string]any, error) {
		if err := check(in); err != nil {
			return nil, err
		}
		dev := in.Context.DeveloperID
		out, err := d.Guard.Run(ctx, dev, in.Call.ID, "integration/"+in.Tool.Name, func(ctx context.Context) (_ any, err error) {
			sc := d.Redactor.Scope()
			defer sc.Close()
			// What the call fails with is recorded and travels in the execution's history.
			defer func() { err = common.RedactErr(d.Redactor, err) }()
			src, err := d.Store.MergeSources(ctx, dev, store.MergeRef{
				AgentID: in.Context.AgentID, TaskID: in.Context.TaskID, SessionID: in.Context.SessionID,
				Tool: in.Tool.Name, ToolID: in.Tool.ID,
			})
			if err != nil {
				return nil, err
			}
			args, setup := merge.Integration(in.Call.Arguments(), in.Tool.Integration, *src)
			// Developer secrets named in setup ({"secret": "NAME"}, "$ secrets.NAME") are
			// opened here, inside the executor, and nowhere else (DESIGN §3.5). Always resolved,
			// so plain setup values are registered with the redactor too.
			if setup, err = secrets.ResolveSetup(ctx, secrets.NewResolver(d.Store, dev, sc), setup); err != nil {
				return nil, err
			}
			out, err := d.Providers.Execute(ctx, in.Tool.Integration.Provider, in.Tool.Integration.Method, setup, args)
			if err != nil {
				return nil, err
			}
			// Large outputs travel as a reference (DESIGN §3.7), stored before answering.
			return d.Store.StoreValue(ctx, dev, out, workflow.PayloadTTL)
		})
		if err != nil {
			return nil, fmt.Errorf("integration %s.%s: %w", in.Tool.Integration.Provider, in.Tool.Integration.Method, err)
		}
		return workflow.ResultObject(tool.ResultOf(&in.Call, out)), nil
	}
}

func check(in workflow.Envelope) error {
	if err := in.Call.Validate(); err != nil {
		return err
	}
	if in.Call.Type != tool.TypeIntegration {
		return fault.Invalid("call.type", "the integration executor runs integration calls, not %s", in.Call.Type)
	}
	if in.Tool == nil || in.Tool.Integration == nil {
		return fault.Invalid("tool.integration", "tool.integration is required: the tool's definition, without setup")
	}
	if in.Tool.Name != in.Call.Name() {
		return fault.Invalid("tool.name", "tool.name %q does not match call.integration.name %q", in.Tool.Name, in.Call.Name())
	}
	if len(in.Tool.Integration.Setup) > 0 {
		return fault.Invalid("tool.integration.setup", "an envelope's tool carries no setup: store the tool, or put the setup in metadata")
	}
	if in.Context.DeveloperID == "" || in.Context.AgentID == "" {
		return fault.Invalid("context", "context.developer_id and context.agent_id are required")
	}
	return nil
}

// FromEnv builds the dependencies from the environment: every provider of package all, connecting
// through the guarded dialer with SINEW_APICALL_ALLOW; red is the redactor of the process's log
// handler.
func FromEnv(ctx context.Context, red *secrets.Redactor) (Deps, error) {
	env, err := common.Load(ctx)
	if err != nil {
		return Deps{}, err
	}
	reg, err := all.New(netguard.New(netguard.WithAllowlist(env.Config.APICallAllow)))
	if err != nil {
		return Deps{}, err
	}
	sealer, err := env.Sealer()
	if err != nil {
		return Deps{}, err
	}
	s := env.Store(sealer)
	return Deps{Store: s, Providers: reg, Guard: &dispatch.Guard{Records: s}, Redactor: red}, nil
}
