package secrets

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"sinew/internal/tool"
)

// The two calls the executors make, after the merge's one BatchGetItem and before they run the
// tool. References are resolved only in what the developer wrote (setup, the definition's
// headers), never in a call's own arguments: those come from the model, and resolving them would
// let a prompt copy any secret into a request.

// ResolveSetup is an integration's merged setup (definition setup ∪ metadata setup) with its
// references resolved; every string value in it, resolved or written in place, is registered with
// the resolver's scope so the redacting log handler hides it for the rest of the call.
func ResolveSetup(ctx context.Context, r *Resolver, setup map[string]any) (map[string]any, error) {
	out, err := r.ResolveMap(ctx, "setup", setup)
	if err != nil {
		return nil, err
	}
	if r.scope != nil {
		r.scope.AddJSON(out)
	}
	return out, nil
}

// ResolveAPICall resolves an api_call's references: in the definition's headers (a copy of def is
// returned; def is not changed) and anywhere in its x-api_call-setup entry. The definition's
// "secrets" field (Julep's alias -> {name}) lets an expression use an alias: with
// {"secrets": {"key": {"name": "OPENAI_KEY"}}}, "$ secrets.key" reads the secret OPENAI_KEY.
// Resolved and setup values are registered with the resolver's scope. Call it before
// apicall.MergeParts (through Executor.Execute), which refuses an unresolved {"secret": ...} header.
func ResolveAPICall(ctx context.Context, r *Resolver, def *tool.APICallDef, metaSetup map[string]any) (*tool.APICallDef, map[string]any, error) {
	if def != nil && len(def.Secrets) > 0 {
		r.aliases = make(map[string]string, len(def.Secrets))
		for alias, ref := range def.Secrets {
			r.aliases[alias] = ref.Name
		}
		defer func() { r.aliases = nil }()
	}
	var outDef *tool.APICallDef
	if def != nil {
		c := *def
		outDef = &c
		if len(def.Headers) > 0 {
			c.Headers = make(map[string]string, len(def.Headers))
			for k, v := range def.Headers {
				if !isExpr(v) {
					c.Headers[k] = v
					continue
				}
				rv, err := r.expr(ctx, "api_call.headers."+k, v)
				if err != nil {
					return nil, nil, err
				}
				s, ok := rv.(string)
				if !ok {
					return nil, nil, fmt.Errorf("api_call.headers.%s: resolved to %T", k, rv)
				}
				c.Headers[k] = s
			}
		}
		c.Cookies = maps.Clone(def.Cookies)
	}
	// Each part that is an object (headers, cookies, params, ...) is a map of values, never itself
	// a reference: a headers object {"secret": "x"} is one header named secret.
	var setup map[string]any
	if metaSetup != nil {
		setup = make(map[string]any, len(metaSetup))
		for _, part := range slices.Sorted(maps.Keys(metaSetup)) {
			v := metaSetup[part]
			var err error
			if m, ok := v.(map[string]any); ok {
				setup[part], err = r.ResolveMap(ctx, "x-api_call-setup."+part, m)
			} else {
				setup[part], err = r.Resolve(ctx, "x-api_call-setup."+part, v)
			}
			if err != nil {
				return nil, nil, err
			}
		}
	}
	if r.scope != nil {
		r.scope.AddJSON(setup)
	}
	return outDef, setup, nil
}
