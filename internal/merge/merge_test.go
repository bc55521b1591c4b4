package merge_test

import (
	"testing"

	"sinew/internal/jsonv"
	"sinew/internal/merge"
	"sinew/internal/tool"
)

type obj = map[string]any

// Each level sets "k" (the key every level fights over) and a key of its own, so a test can see
// both who won and that nothing was dropped.
var (
	callArgs  = obj{"k": "call", "call_only": int64(1)}
	defArgs   = obj{"k": "definition", "def_only": int64(2)}
	agentArgs = obj{"k": "agent", "agent_only": int64(3)}
	scopeArgs = obj{"k": "scope", "scope_only": int64(4)}
	toolSetup = obj{"key": "tool-setup", "tool_only": "t"}
	agentSet  = obj{"key": "agent-setup", "agent_only": "a"}
	scopeSet  = obj{"key": "scope-setup", "scope_only": "s"}
)

func TestIntegrationPrecedence(t *testing.T) {
	tests := []struct {
		name                string
		call, def           obj
		agent, scope        merge.Entries
		toolSetup           obj
		wantArgs, wantSetup obj
	}{
		{
			name: "every level: metadata > definition > call; scope replaces agent whole",
			call: callArgs, def: defArgs,
			agent:     merge.Entries{merge.KeyIntegrationArgs: agentArgs, merge.KeyIntegrationSetup: agentSet},
			scope:     merge.Entries{merge.KeyIntegrationArgs: scopeArgs, merge.KeyIntegrationSetup: scopeSet},
			toolSetup: toolSetup,
			wantArgs:  obj{"k": "scope", "call_only": int64(1), "def_only": int64(2), "scope_only": int64(4)},
			wantSetup: obj{"key": "scope-setup", "tool_only": "t", "scope_only": "s"},
		},
		{
			name: "no scope entry: the agent's applies",
			call: callArgs, def: defArgs,
			agent:     merge.Entries{merge.KeyIntegrationArgs: agentArgs, merge.KeyIntegrationSetup: agentSet},
			scope:     merge.Entries{},
			toolSetup: toolSetup,
			wantArgs:  obj{"k": "agent", "call_only": int64(1), "def_only": int64(2), "agent_only": int64(3)},
			wantSetup: obj{"key": "agent-setup", "tool_only": "t", "agent_only": "a"},
		},
		{
			name: "scope has args only: its args replace, the agent's setup stays",
			call: callArgs, def: defArgs,
			agent:     merge.Entries{merge.KeyIntegrationArgs: agentArgs, merge.KeyIntegrationSetup: agentSet},
			scope:     merge.Entries{merge.KeyIntegrationArgs: scopeArgs},
			wantArgs:  obj{"k": "scope", "call_only": int64(1), "def_only": int64(2), "scope_only": int64(4)},
			wantSetup: obj{"key": "agent-setup", "agent_only": "a"},
		},
		{
			name: "an empty scope entry still replaces the agent's",
			call: callArgs, def: defArgs,
			agent:     merge.Entries{merge.KeyIntegrationArgs: agentArgs},
			scope:     merge.Entries{merge.KeyIntegrationArgs: obj{}},
			wantArgs:  obj{"k": "definition", "call_only": int64(1), "def_only": int64(2)},
			wantSetup: obj{},
		},
		{
			name: "no metadata: definition > call",
			call: callArgs, def: defArgs, toolSetup: toolSetup,
			wantArgs:  obj{"k": "definition", "call_only": int64(1), "def_only": int64(2)},
			wantSetup: toolSetup,
		},
		{
			name:      "no definition arguments or setup: metadata > call",
			call:      callArgs,
			agent:     merge.Entries{merge.KeyIntegrationArgs: agentArgs, merge.KeyIntegrationSetup: agentSet},
			wantArgs:  obj{"k": "agent", "call_only": int64(1), "agent_only": int64(3)},
			wantSetup: agentSet,
		},
		{
			name: "no call arguments",
			def:  defArgs, agent: merge.Entries{merge.KeyIntegrationArgs: agentArgs},
			wantArgs:  obj{"k": "agent", "def_only": int64(2), "agent_only": int64(3)},
			wantSetup: obj{},
		},
		{
			name:      "nothing at all",
			wantArgs:  obj{},
			wantSetup: obj{},
		},
		{
			name:      "api_call entries do not leak into an integration",
			call:      callArgs,
			agent:     merge.Entries{merge.KeyAPICallArgs: agentArgs, merge.KeyAPICallSetup: agentSet},
			wantArgs:  callArgs,
			wantSetup: obj{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := merge.Sources{Agent: tc.agent, Scope: tc.scope, ToolSetup: tc.toolSetup}
			def := &tool.IntegrationDef{Provider: "dummy", Arguments: tc.def, Setup: obj{"key": "<redacted>"}}
			args, setup := merge.Integration(tc.call, def, src)
			if !jsonv.Equal(args, tc.wantArgs) {
				t.Errorf("arguments %s, want %s", jsonv.EncodeString(args), jsonv.EncodeString(tc.wantArgs))
			}
			if !jsonv.Equal(setup, tc.wantSetup) {
				t.Errorf("setup %s, want %s", jsonv.EncodeString(setup), jsonv.EncodeString(tc.wantSetup))
			}
		})
	}
}

func TestMergeDoesNotChangeSources(t *testing.T) {
	nested := obj{"deep": obj{"x": int64(1)}}
	src := merge.Sources{Agent: merge.Entries{merge.KeyIntegrationArgs: nested}}
	args, _ := merge.Integration(nil, nil, src)
	args["deep"].(obj)["x"] = int64(2)
	if nested["deep"].(obj)["x"] != int64(1) {
		t.Error("changing the merged arguments changed the metadata they came from")
	}
}

func TestSystemDefaults(t *testing.T) {
	tests := []struct {
		name      string
		call, def obj
		want      obj
	}{
		{"call overrides definition", obj{"limit": int64(5)}, obj{"limit": int64(10), "offset": int64(0)}, obj{"limit": int64(5), "offset": int64(0)}},
		{"no call arguments", nil, obj{"limit": int64(10)}, obj{"limit": int64(10)}},
		{"no definition arguments", obj{"limit": int64(5)}, nil, obj{"limit": int64(5)}},
		{"neither", nil, nil, obj{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := merge.System(tc.call, &tool.SystemDef{Resource: "agent", Operation: "list", Arguments: tc.def})
			if !jsonv.Equal(got, tc.want) {
				t.Errorf("got %s, want %s", jsonv.EncodeString(got), jsonv.EncodeString(tc.want))
			}
		})
	}
}
