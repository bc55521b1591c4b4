package merge_test

import (
	"encoding/json"
	"testing"

	"sinew/internal/fault"
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

func TestAPICallPrecedence(t *testing.T) {
	timeout := 30
	content := "def-body"
	def := &tool.APICallDef{
		Method: "POST", URL: "https://api.example.com/{id}",
		Headers: map[string]string{"X-Def": "d", "X-Both": "definition", "X-All": "definition"},
		JSON:    obj{"a": "definition", "def_only": true},
		Params:  json.RawMessage(`{"q":"definition","p":"def"}`),
		Timeout: &timeout, Content: &content,
	}
	call := obj{
		"headers": obj{"X-Both": "call", "X-Call": "c", "X-All": "call"},
		"json_":   obj{"a": "call", "call_only": true},
		"params":  obj{"q": "call"},
		"path":    obj{"id": "42"},
		"timeout": int64(5),
	}
	agent := merge.Entries{
		merge.KeyAPICallArgs:  obj{"params": obj{"q": "agent-args"}, "headers": obj{"X-All": "agent-args"}},
		merge.KeyAPICallSetup: obj{"headers": obj{"Authorization": "Bearer agent"}},
	}
	scope := merge.Entries{
		merge.KeyAPICallSetup: obj{"headers": obj{"Authorization": "Bearer scope", "X-All": "scope-setup"}},
	}
	tests := []struct {
		name string
		call obj
		def  *tool.APICallDef
		src  merge.Sources
		want obj
	}{
		{
			name: "every level",
			call: call, def: def, src: merge.Sources{Agent: agent, Scope: scope},
			want: obj{
				// definition headers beat the call's; args and setup beat both; the scope's setup
				// entry replaced the agent's whole.
				"headers": obj{"X-Def": "d", "X-Both": "definition", "X-Call": "c", "X-All": "scope-setup", "Authorization": "Bearer scope"},
				"json":    obj{"a": "call", "def_only": true, "call_only": true},
				"params":  obj{"q": "agent-args", "p": "def"},
				"path":    obj{"id": "42"},
				"timeout": int64(5),
				"content": "def-body",
			},
		},
		{
			name: "no metadata",
			call: call, def: def,
			want: obj{
				"headers": obj{"X-Def": "d", "X-Both": "definition", "X-Call": "c", "X-All": "definition"},
				"json":    obj{"a": "call", "def_only": true, "call_only": true},
				"params":  obj{"q": "call", "p": "def"},
				"path":    obj{"id": "42"},
				"timeout": int64(5),
				"content": "def-body",
			},
		},
		{
			name: "no call arguments",
			def:  def, src: merge.Sources{Agent: agent},
			want: obj{
				"headers": obj{"X-Def": "d", "X-Both": "definition", "X-All": "agent-args", "Authorization": "Bearer agent"},
				"json":    obj{"a": "definition", "def_only": true},
				"params":  obj{"q": "agent-args", "p": "def"},
				"timeout": int64(30),
				"content": "def-body",
			},
		},
		{
			name: "no definition parts",
			call: obj{"headers": obj{"X-Call": "c"}}, def: &tool.APICallDef{Method: "GET", URL: "https://x"}, src: merge.Sources{Agent: agent},
			want: obj{
				"headers": obj{"X-Call": "c", "X-All": "agent-args", "Authorization": "Bearer agent"},
				"params":  obj{"q": "agent-args"},
			},
		},
		{
			name: "a string params replaces an object whole",
			call: obj{"params": "raw=1"}, def: def,
			want: obj{
				"headers": obj{"X-Def": "d", "X-Both": "definition", "X-All": "definition"},
				"json":    obj{"a": "definition", "def_only": true},
				"params":  "raw=1",
				"timeout": int64(30),
				"content": "def-body",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := merge.APICall(tc.call, tc.def, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonv.Equal(got, tc.want) {
				t.Errorf("got  %s\nwant %s", jsonv.EncodeString(got), jsonv.EncodeString(tc.want))
			}
		})
	}
}

func TestAPICallBothJSONAndAlias(t *testing.T) {
	_, err := merge.APICall(obj{"json": obj{}, "json_": obj{}}, &tool.APICallDef{}, merge.Sources{})
	if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != "arguments.json_" {
		t.Fatalf("error %v field %q, want InvalidInput on arguments.json_", err, fault.FieldOf(err))
	}
}
