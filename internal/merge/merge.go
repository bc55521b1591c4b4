package merge

import (
	"sinew/internal/jsonv"
	"sinew/internal/tool"
)

// union merges objects key by key, later ones winning; nil objects are skipped. The result is a
// fresh deep copy: merging never changes a source.
func union(levels ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, l := range levels {
		for k, v := range l {
			out[k] = jsonv.Clone(v)
		}
	}
	return out
}

// Integration gives an integration call's arguments and setup:
//
//	arguments = call ∪ definition.arguments ∪ metadata args
//
// (a definition with a params_schema takes call as {"arguments": call})
//
//	setup     = definition.setup ∪ metadata setup
//
// right winning, key by key; the metadata entry is the task's or session's for the tool when it has
// one, else the agent's. The definition's setup is src.ToolSetup (the stored tool's, opened): the
// snapshot in the envelope carries none, and values there (redacted) are never used.
func Integration(call map[string]any, def *tool.IntegrationDef, src Sources) (args, setup map[string]any) {
	var defArgs map[string]any
	if def != nil {
		defArgs = def.Arguments
		if def.ParamsSchema != nil {
			// The model called the remote tool by its own schema: its arguments are call_tool's.
			call = map[string]any{"arguments": union(call)}
		}
	}
	return union(call, defArgs, src.Metadata(KeyIntegrationArgs)),
		union(src.ToolSetup, src.Metadata(KeyIntegrationSetup))
}

// System gives a system call's arguments: the definition's are defaults the call overrides.
func System(call map[string]any, def *tool.SystemDef) map[string]any {
	var defArgs map[string]any
	if def != nil {
		defArgs = def.Arguments
	}
	return union(defArgs, call)
}
