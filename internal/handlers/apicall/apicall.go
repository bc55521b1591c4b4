// Package apicall is the handler of the apicall Lambda (DESIGN §5): it reads the metadata entries
// for the tool in one BatchGetItem, merges the request parts, sends the request through the guarded
// dialer and records the result by call id.
package apicall

import (
	"context"
	"fmt"
	"maps"

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
}

// New is the handler: {call, tool, context} → the result object.
func New(d Deps) func(context.Context, workflow.Envelope) (map[string]any, error) {
	return func(ctx context.Context, in workflow.Envelope) (map[string]any, error) {
		if err := check(in); err != nil {
			return nil, err
		}
		dev := in.Context.DeveloperID
		out, err := d.Guard.Run(ctx, dev, in.Call.ID, "api_call/"+in.Tool.Name, func(ctx context.Context) (any, error) {
			src, err := d.Store.MergeSources(ctx, dev, store.MergeRef{
				AgentID: in.Context.AgentID, TaskID: in.Context.TaskID, SessionID: in.Context.SessionID, Tool: in.Tool.Name,
			})
			if err != nil {
				return nil, err
			}
			def, metaSetup, err := resolveSecrets(ctx, d.Store, dev, in.Tool.APICall, src.Metadata(merge.KeyAPICallSetup))
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

// resolveSecrets opens the developer secrets that the definition's headers and the metadata setup
// name ({"secret": "NAME"}, "$ secrets.NAME"), inside the executor (DESIGN §3.5).
func resolveSecrets(ctx context.Context, rd secrets.SecretReader, dev string, def *tool.APICallDef, metaSetup map[string]any) (*tool.APICallDef, map[string]any, error) {
	var r *secrets.Resolver
	resolver := func() *secrets.Resolver {
		if r == nil {
			r = secrets.NewResolver(rd, dev, nil)
		}
		return r
	}
	if secrets.HasRefs(metaSetup) {
		var err error
		if metaSetup, err = resolver().ResolveMap(ctx, merge.KeyAPICallSetup, metaSetup); err != nil {
			return nil, nil, err
		}
	}
	var headers map[string]string
	for k, v := range def.Headers {
		if !secrets.HasRefs(v) {
			continue
		}
		if headers == nil {
			headers = maps.Clone(def.Headers)
		}
		rv, err := resolver().Resolve(ctx, "api_call.headers."+k, v)
		if err != nil {
			return nil, nil, err
		}
		s, ok := rv.(string)
		if !ok {
			return nil, nil, fault.Invalid("api_call.headers."+k, "api_call.headers.%s must resolve to a string", k)
		}
		headers[k] = s
	}
	if headers != nil {
		c := *def
		c.Headers = headers
		def = &c
	}
	return def, metaSetup, nil
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

// FromEnv builds the dependencies from the environment.
func FromEnv(ctx context.Context) (Deps, error) {
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
	}, nil
}
