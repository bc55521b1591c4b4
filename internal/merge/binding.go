package merge

import (
	"slices"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/secrets"
)

// Binding is what a provider's setup schema declares of its keys (integrations.Registry.SetupBinding
// reads it from the setup type's `sinew` tags): the keys that name where a call is sent (an API base
// URL, an SMTP host and port, an MCP server's URL, a browser's DevTools URL) and the keys that carry
// credentials (API keys, passwords, headers sent to the server).
type Binding struct {
	Endpoints []string
	Secrets   []string
}

// layer is one layer of an integration's setup, lowest first, with the name errors give it.
type layer struct {
	name string
	m    map[string]any
}

// setupLayers are the layers Integration merges the setup from, lowest first.
func (s Sources) setupLayers() []layer {
	out := []layer{{"the tool's integration.setup", s.ToolSetup}}
	if e, ok := s.Scope[KeyIntegrationSetup]; ok {
		return append(out, layer{"the task's or session's metadata " + KeyIntegrationSetup, e})
	}
	if e, ok := s.Agent[KeyIntegrationSetup]; ok {
		return append(out, layer{"the agent's metadata " + KeyIntegrationSetup, e})
	}
	return out
}

// CheckBinding enforces that a secret travels only to the endpoint its setup named when the secret
// was attached. Setup merges key by key, so without this a layer above the one holding a key (a
// session's metadata over the agent's, any metadata over the tool's own setup) could move the
// endpoint alone and have the key sent to the new one. A key is secret when the binding declares it
// or when its value names a developer secret ({"secret": "NAME"}, "$ secrets.NAME"). The setup is
// refused, as Forbidden naming the endpoint and the secret, when an endpoint's final value comes
// from a higher layer than a secret's and differs from the value in force where the secret was set.
// Giving the secret again in the layer that moves the endpoint binds it to the new endpoint.
func CheckBinding(src Sources, b Binding) error {
	layers := src.setupLayers()
	for _, ep := range b.Endpoints {
		j := topLayer(layers, ep)
		if j <= 0 {
			continue // unset, or set in the lowest layer: nothing moved it
		}
		for _, key := range secretKeys(layers, b) {
			i := topLayer(layers, key)
			if i >= j || jsonv.Equal(valueAt(layers[:i+1], ep), layers[j].m[ep]) {
				continue
			}
			return &fault.Error{Kind: fault.Forbidden, Field: "setup." + ep, Msg: "refused: the endpoint changed without its secret: " +
				layers[j].name + " sets setup." + ep + " but not setup." + key + ", which comes from " + layers[i].name +
				" and was set up for another endpoint; a secret is sent only to the endpoint named where it was attached: give setup." +
				key + " in the same place as setup." + ep + ", or leave setup." + ep + " as it was"}
		}
	}
	return nil
}

// secretKeys are the setup's keys that carry a secret, sorted (so the first error is stable).
func secretKeys(layers []layer, b Binding) []string {
	var out []string
	for _, l := range layers {
		for k, v := range l.m {
			if (slices.Contains(b.Secrets, k) || secrets.HasRefs(v)) && !slices.Contains(out, k) && !slices.Contains(b.Endpoints, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// topLayer is the index of the highest layer that sets key, -1 when none does.
func topLayer(layers []layer, key string) int {
	for i := len(layers) - 1; i >= 0; i-- {
		if _, ok := layers[i].m[key]; ok {
			return i
		}
	}
	return -1
}

// valueAt is key's value in the merge of layers (nil when none sets it).
func valueAt(layers []layer, key string) any {
	if i := topLayer(layers, key); i >= 0 {
		return layers[i].m[key]
	}
	return nil
}
