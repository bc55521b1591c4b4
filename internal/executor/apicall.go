package executor

import (
	"context"
	"fmt"

	"sinew/internal/apicall"
	"sinew/internal/merge"
	"sinew/internal/secrets"
	"sinew/internal/tool"
)

// APICall runs api_call calls: it reads the metadata entries for the tool in one BatchGetItem,
// merges the request parts, sends the request through the guarded dialer and records the result
// by call id.
type APICall struct {
	Runner
	APICall *apicall.Executor
}

var _ Executor = (*APICall)(nil)

// Run runs in's api_call call.
func (x *APICall) Run(ctx context.Context, in Envelope) (any, error) {
	if err := CheckEnvelope(in, tool.TypeAPICall, in.Tool != nil && in.Tool.APICall != nil); err != nil {
		return nil, err
	}
	out, err := x.run(ctx, in, func(ctx context.Context, src *merge.Sources, res *secrets.Resolver) (any, error) {
		// References in the definition's headers and the metadata setup are opened here,
		// inside the executor, and nowhere else.
		def, metaSetup, err := secrets.ResolveAPICall(ctx, res, in.Tool.APICall, src.Metadata(merge.KeyAPICallSetup))
		if err != nil {
			return nil, err
		}
		return x.APICall.Execute(ctx, def, apicall.Input{
			Call: in.Call.Arguments(), MetaArgs: src.Metadata(merge.KeyAPICallArgs), MetaSetup: metaSetup,
			CallID: in.Call.ID,
		})
	})
	if err != nil {
		err = fmt.Errorf("api_call %s: %w", in.Tool.Name, err)
	}
	return out, err
}
