package merge_test

import (
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/merge"
)

// TestCheckBinding: a secret goes only to the endpoint named where it was set up. A layer above the
// secret's may not move an endpoint unless it gives the secret too.
func TestCheckBinding(t *testing.T) {
	b := merge.Binding{Endpoints: []string{"api_url", "host"}, Secrets: []string{"api_key"}}
	ref := map[string]any{"secret": "KEY"}
	tests := []struct {
		name      string
		tool      map[string]any
		agent     map[string]any
		scope     map[string]any
		refused   string // the field, "" when allowed
		mentions  string // the secret's key the message names
		noBinding bool   // check with an empty Binding
	}{
		{"nothing moves", map[string]any{"api_key": "k", "api_url": "https://a"}, nil, nil, "", "", false},
		{"metadata moves the endpoint alone", map[string]any{"api_key": "k", "api_url": "https://a"}, map[string]any{"api_url": "https://evil"}, nil, "setup.api_url", "api_key", false},
		{"metadata names an endpoint the tool left default", map[string]any{"api_key": "k"}, map[string]any{"api_url": "https://evil"}, nil, "setup.api_url", "api_key", false},
		{"the session's entry replaces the agent's whole", nil, map[string]any{"api_key": "k", "api_url": "https://a"}, map[string]any{"api_url": "https://evil"}, "", "", false}, // no key left to send
		{"the session over the tool's key", map[string]any{"api_key": "k"}, map[string]any{"api_key": "k2", "api_url": "https://a"}, map[string]any{"host": "evil"}, "setup.host", "api_key", false},
		{"the same layer gives the key again", map[string]any{"api_key": "k", "api_url": "https://a"}, map[string]any{"api_key": ref, "api_url": "https://b"}, nil, "", "", false},
		{"metadata repeats the same endpoint", map[string]any{"api_key": "k", "api_url": "https://a"}, map[string]any{"api_url": "https://a"}, nil, "", "", false},
		{"metadata sets the key, the tool the endpoint", map[string]any{"api_url": "https://a"}, map[string]any{"api_key": ref}, nil, "", "", false},
		{"an undeclared key naming a secret binds too", map[string]any{"token": ref, "api_url": "https://a"}, map[string]any{"api_url": "https://evil"}, nil, "setup.api_url", "token", false},
		{"a plain undeclared key does not", map[string]any{"region": "eu", "api_url": "https://a"}, map[string]any{"api_url": "https://b"}, nil, "", "", false},
		{"no endpoints declared", map[string]any{"api_key": "k", "api_url": "https://a"}, map[string]any{"api_url": "https://b"}, nil, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := merge.Sources{ToolSetup: tt.tool, Agent: merge.Entries{}, Scope: merge.Entries{}}
			if tt.agent != nil {
				src.Agent[merge.KeyIntegrationSetup] = tt.agent
			}
			if tt.scope != nil {
				src.Scope[merge.KeyIntegrationSetup] = tt.scope
			}
			bb := b
			if tt.noBinding {
				bb = merge.Binding{}
			}
			err := merge.CheckBinding(src, bb)
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !fault.Is(err, fault.Forbidden) || fault.FieldOf(err) != tt.refused {
				t.Fatalf("err = %v (field %q), want Forbidden on %s", err, fault.FieldOf(err), tt.refused)
			}
			if msg := fault.Message(err); !strings.Contains(msg, "endpoint changed without its secret") || !strings.Contains(msg, "setup."+tt.mentions) {
				t.Errorf("message %q: want it to say the endpoint changed without setup.%s", msg, tt.mentions)
			}
		})
	}
}
