// Package apicall is the handler of the apicall Lambda (DESIGN §5): it reads the metadata entries
// for the tool in one BatchGetItem, merges the request parts, sends the request through the guarded
// dialer and records the result by call id.
package apicall

import (
	"context"
	"fmt"

	"sinew/internal/apicall"
	"sinew/internal/dispatch"
	"sinew/internal/fault"
	"sinew/internal/handlers/common"
	"sinew/internal/merge"
	"sinew/internal/netguard"
	"sinew/internal/secrets"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Deps are the handler's dependencies.
type Deps struct {
	Store    *store.Store // with a sealer that opens setup
	Executor *apicall.Executor
	Guard    *dispatch.Guard
	// Redactor learns each call's setup values and resolved headers for the call's duration;
	// the process's log handler wraps it. Nil: a redactor of the handler's own, which still
	// redacts the errors the call returns.
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
		out, err := d.Guard.Run(ctx, dev, in.Call.ID, "api_call/"+in.Tool.Name, func(ctx context.Context) (_ any, err error) {
			sc := d.Redactor.Scope()
			defer sc.Close()
			// What the call fails with is recorded and travels in the execution's history.
			defer func() { err = common.RedactErr(d.Redactor, err) }()
			src, err := d.Store.MergeSources(ctx, dev, store.MergeRef{
				AgentID: in.Context.AgentID, TaskID: in.Context.TaskID, SessionID: in.Context.SessionID, Tool: in.Tool.Name,
			})
			if err != nil {
				return nil, err
			}
			// References in the definition's headers and the metadata setup are opened here,
			// inside the executor, and nowhere else (DESIGN §3.5).
			def, metaSetup, err := secrets.ResolveAPICall(ctx, secrets.NewResolver(d.Store, dev, sc), in.Tool.APICall, src.Metadata(merge.KeyAPICallSetup))
			if err != nil {
				return nil, err
			}
			res, err := d.Executor.Execute(ctx, def, apicall.Input{
				Call: in.Call.Arguments(), MetaArgs: src.Metadata(merge.KeyAPICallArgs), MetaSetup: metaSetup,
			})
			if err != nil {
				return nil, err
			}
			return d.Store.StoreValue(ctx, dev, res, workflow.PayloadTTL)
		})
		if err != nil {
			return nil, fmt.Errorf("api_call %s: %w", in.Tool.Name, err)
		}
		return workflow.ResultObject(tool.ResultOf(&in.Call, out)), nil
	}
}

func check(in workflow.Envelope) error {
	if err := in.Call.Validate(); err != nil {
		return err
	}
	if in.Call.Type != tool.TypeAPICall {
		return fault.Invalid("call.type", "the apicall executor runs api_call calls, not %s", in.Call.Type)
	}
	if in.Tool == nil || in.Tool.APICall == nil {
		return fault.Invalid("tool.api_call", "tool.api_call is required: the tool's definition")
	}
	if in.Tool.Name != in.Call.Name() {
		return fault.Invalid("tool.name", "tool.name %q does not match call.api_call.name %q", in.Tool.Name, in.Call.Name())
	}
	if in.Context.DeveloperID == "" || in.Context.AgentID == "" {
		return fault.Invalid("context", "context.developer_id and context.agent_id are required")
	}
	return nil
}

// FromEnv builds the dependencies from the environment; red is the redactor of the process's log
// handler.
func FromEnv(ctx context.Context, red *secrets.Redactor) (Deps, error) {
	env, err := common.Load(ctx)
	if err != nil {
		return Deps{}, err
	}
	sealer, err := env.Sealer()
	if err != nil {
		return Deps{}, err
	}
	s := env.Store(sealer)
	return Deps{
		Store:    s,
		Executor: apicall.New(netguard.New(netguard.WithAllowlist(env.Config.APICallAllow))),
		Guard:    &dispatch.Guard{Records: s},
		Redactor: red,
	}, nil
}
