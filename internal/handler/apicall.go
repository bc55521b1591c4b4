package handler

import (
	"context"
	"fmt"

	"sinew/internal/apicall"
	"sinew/internal/merge"
	"sinew/internal/secrets"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// APICallDeps are the handler's dependencies: the shared executor (store, idempotency guard, redactor)
// and the api_call executor.
type APICallDeps struct {
	Executor
	APICall *apicall.Executor
}

// NewAPICall is the apicall Lambda's handler: {call, tool, context} → the result object. It reads
// the metadata entries for the tool in one BatchGetItem, merges the request parts, sends the
// request through the guarded dialer and records the result by call id.
func NewAPICall(d APICallDeps) func(context.Context, workflow.Envelope) (map[string]any, error) {
	return func(ctx context.Context, in workflow.Envelope) (map[string]any, error) {
		out, err := runAPICall(ctx, d, in)
		return answerOrReturn(ctx, d.Tokens, in.TaskToken, in.WholeResult, &in.Call, out, err)
	}
}

func runAPICall(ctx context.Context, d APICallDeps, in workflow.Envelope) (any, error) {
	if err := CheckEnvelope(in, tool.TypeAPICall, in.Tool != nil && in.Tool.APICall != nil); err != nil {
		return nil, err
	}
	out, err := d.Run(ctx, in, "api_call", func(ctx context.Context, src *merge.Sources, res *secrets.Resolver) (any, error) {
		// References in the definition's headers and the metadata setup are opened here,
		// inside the executor, and nowhere else.
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
		err = fmt.Errorf("api_call %s: %w", in.Tool.Name, err)
	}
	return out, err
}
