package taskflow

import (
	"encoding/json"
	"strconv"

	"sinew/internal/tool"
)

// promptTools compiles a prompt step's tools into the agent_loop input's tools and tool_names
// (JSONata object fields): "all" (or none given) offers every tool of the task (and, with
// inherit_tools, of its agent); a list offers the tools it references, by id or by name, and the
// tools it defines, each checked here so that a task that cannot run is refused when it is saved.
func (c *compiler) promptTools(path string, v any) (string, error) {
	if v == nil || v == "all" {
		return "'tools': null, 'tool_names': null", nil
	}
	list, ok := v.([]any)
	if !ok {
		return "", errAt(path, `tools is "all" or a list of tool references {"ref": {"id"}} or {"ref": {"name"}} and tool definitions`)
	}
	names, defs := []string{}, []any{}
	for i, item := range list {
		p := path + "[" + strconv.Itoa(i) + "]"
		m, ok := item.(map[string]any)
		if !ok {
			return "", errAt(p, `a tool is a reference {"ref": {"id"}} or {"ref": {"name"}}, or a tool definition {name, type, ...}`)
		}
		if r, isRef := m["ref"]; isRef {
			name, err := c.resolveRef(p, r, len(m))
			if err != nil {
				return "", err
			}
			names = append(names, name)
			continue
		}
		b, _ := json.Marshal(m)
		t, err := tool.Decode(b)
		if err != nil {
			return "", errAt(p, "not a tool definition: %v", err)
		}
		if t.Integration != nil && len(t.Integration.Setup) > 0 {
			return "", errAt(p+".integration.setup", "a tool defined in a prompt step may not carry setup (it would be stored in the task's machine): add the tool to the task and reference it by name")
		}
		defs = append(defs, m)
	}
	tools := "null"
	if len(defs) > 0 || len(names) == 0 {
		b, _ := json.Marshal(defs)
		tools = string(b) // an empty list offers no tool at all
	}
	nb, _ := json.Marshal(names)
	return "'tools': " + tools + ", 'tool_names': " + string(nb), nil
}

// resolveRef is the name of the tool a reference {"id"} or {"name"} names, among Options.Tools.
func (c *compiler) resolveRef(path string, r any, keys int) (string, error) {
	m, ok := r.(map[string]any)
	id, byID := m["id"].(string)
	name, byName := m["name"].(string)
	if !ok || keys != 1 || len(m) != 1 || byID == byName {
		return "", errAt(path+".ref", `a tool reference is {"ref": {"id": "<tool id>"}} or {"ref": {"name": "<tool name>"}}`)
	}
	for _, t := range c.o.Tools {
		if (byID && t.ID == id) || (byName && t.Name == name) {
			return t.Name, nil
		}
	}
	if byID {
		return "", errAt(path+".ref.id", "no tool of the task (or, with inherit_tools, of its agent) has the id %q", id)
	}
	return "", errAt(path+".ref.name", "no tool of the task (or, with inherit_tools, of its agent) is named %q", name)
}
