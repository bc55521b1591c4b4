package merge

import (
	"maps"

	"sinew/internal/fault"
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

// Integration gives an integration call's arguments and setup (DESIGN §3.4):
//
//	arguments = call ∪ definition.arguments ∪ metadata args
//	setup     = definition.setup ∪ metadata setup
//
// right winning, key by key; the metadata entry is the task's or session's for the tool when it has
// one, else the agent's. The definition's setup is src.ToolSetup (the stored tool's, opened): the
// snapshot in the envelope carries none, and values there (redacted) are never used.
func Integration(call map[string]any, def *tool.IntegrationDef, src Sources) (args, setup map[string]any) {
	var defArgs map[string]any
	if def != nil {
		defArgs = def.Arguments
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

// APICall gives an api_call's request parts (DESIGN §5): params, json, data, content, files,
// cookies, headers, path, timeout and any other key the call gives (the executor refuses those it
// does not know). Each part merges over the levels
//
//	definition < call < x-api_call-args < x-api_call-setup
//
// key by key when the part is an object at every level that has it, else the last level's value
// wins whole. Headers are the exception the design names: the definition's win over the call's
// (call < definition < args < setup). `json_` is the alias of `json`; giving both at one level is
// an InvalidInput fault.
func APICall(call map[string]any, def *tool.APICallDef, src Sources) (map[string]any, error) {
	defParts, err := definitionParts(def)
	if err != nil {
		return nil, err
	}
	levels := []struct {
		name  string
		parts map[string]any
	}{
		{"definition", defParts}, {"arguments", call},
		{KeyAPICallArgs, src.Metadata(KeyAPICallArgs)}, {KeyAPICallSetup, src.Metadata(KeyAPICallSetup)},
	}
	norm := make([]map[string]any, len(levels))
	for i, l := range levels {
		if norm[i], err = aliasJSON(l.name, l.parts); err != nil {
			return nil, err
		}
	}
	out := map[string]any{}
	keys := map[string]bool{}
	for _, l := range norm {
		for k := range l {
			keys[k] = true
		}
	}
	for k := range keys {
		order := []map[string]any{norm[0], norm[1], norm[2], norm[3]}
		if k == "headers" {
			order[0], order[1] = norm[1], norm[0]
		}
		var v any
		present := false
		for _, l := range order {
			lv, ok := l[k]
			if !ok {
				continue
			}
			if m, isObj := lv.(map[string]any); isObj {
				if prev, prevObj := v.(map[string]any); prevObj && present {
					v = union(prev, m)
					continue
				}
			}
			v, present = jsonv.Clone(lv), true
		}
		out[k] = v
	}
	return out, nil
}

// aliasJSON renames json_ to json in one level's parts.
func aliasJSON(level string, parts map[string]any) (map[string]any, error) {
	v, ok := parts["json_"]
	if !ok {
		return parts, nil
	}
	if _, both := parts["json"]; both {
		return nil, fault.Invalid(level+".json_", "%s gives both json and its alias json_; give one", level)
	}
	out := maps.Clone(parts)
	delete(out, "json_")
	out["json"] = v
	return out, nil
}

// definitionParts are the request parts an APICallDef fixes, as JSON values.
func definitionParts(def *tool.APICallDef) (map[string]any, error) {
	out := map[string]any{}
	if def == nil {
		return out, nil
	}
	if len(def.Params) > 0 {
		v, err := jsonv.Decode(def.Params)
		if err != nil {
			return nil, fault.Invalid("api_call.params", "api_call.params must be a JSON string or object")
		}
		if v != nil {
			out["params"] = v
		}
	}
	objects := map[string]map[string]any{"json": def.JSON, "data": def.Data, "files": def.Files}
	for k, v := range objects {
		if v != nil {
			out[k] = jsonv.Clone(v)
		}
	}
	if def.Headers != nil {
		out["headers"] = stringMap(def.Headers)
	}
	if def.Cookies != nil {
		out["cookies"] = stringMap(def.Cookies)
	}
	if def.Content != nil {
		out["content"] = *def.Content
	}
	if def.Timeout != nil {
		out["timeout"] = int64(*def.Timeout)
	}
	return out, nil
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
