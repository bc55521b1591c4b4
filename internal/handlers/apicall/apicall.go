// Package apicall is the handler of the apicall Lambda (DESIGN §5): it reads the metadata entries
// for the tool in one BatchGetItem, merges the request parts, sends the request through the guarded
// dialer and records the result by call id.
package apicall

import (
	"context"
	"fmt"

	"sinew/internal/apicall"
	"sinew/internal/dispatch"
	"sinew/internal/handlers/common"
	"sinew/internal/merge"
	"sinew/internal/netguard"
	"sinew/internal/secrets"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Deps are the handler's dependencies: the shared executor (store, idempotency guard, redactor)
// and the api_call executor.
type Deps struct {
	common.Executor
	APICall *apicall.Executor
}

// New is the handler: {call, tool, context} → the result object.
func New(d Deps) func(context.Context, workflow.Envelope) (map[string]any, error) {
	return func(ctx context.Context, in workflow.Envelope) (map[string]any, error) {
		if err := common.CheckEnvelope(in, tool.TypeAPICall, in.Tool != nil && in.Tool.APICall != nil); err != nil {
			return nil, err
		}
		out, err := d.Run(ctx, in, "api_call", func(ctx context.Context, src *merge.Sources, res *secrets.Resolver) (any, error) {
			// References in the definition's headers and the metadata setup are opened here,
			// inside the executor, and nowhere else (DESIGN §3.5).
			def, metaSetup, err := secrets.ResolveAPICall(ctx, res, in.Tool.APICall, src.Metadata(merge.KeyAPICallSetup))
			if err != nil {
				return nil, err
			}
			return d.APICall.Execute(ctx, def, apicall.Input{
				Call: in.Call.Arguments(), MetaArgs: src.Metadata(merge.KeyAPICallArgs), MetaSetup: metaSetup,
				CallID: in.Call.ID,
			})
		})
		if err != nil {
			return nil, fmt.Errorf("api_call %s: %w", in.Tool.Name, err)
		}
		return workflow.ResultObject(tool.ResultOf(&in.Call, out)), nil
	}
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
		Executor: common.Executor{Store: s, Guard: &dispatch.Guard{Records: s}, Redactor: red},
		APICall:  apicall.New(netguard.New(netguard.WithAllowlist(env.Config.APICallAllow))),
	}, nil
}
