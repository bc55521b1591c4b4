package resources

import (
	"sinew/internal/config"
	"sinew/internal/docsearch"
	"sinew/internal/httpapi"
	"sinew/internal/tool"
)

// The OpenAPI schemas of the resources (JSON Schema 2020-12 as Go values).

func obj(required []string, props map[string]any) map[string]any {
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		r := make([]any, len(required))
		for i, s := range required {
			r[i] = s
		}
		o["required"] = r
	}
	return o
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func uuidStr(desc string) map[string]any {
	return map[string]any{"type": "string", "format": "uuid", "description": desc}
}
func freeObj(desc string) map[string]any {
	return map[string]any{"type": "object", "description": desc}
}
func readOnly(m map[string]any) map[string]any { m["readOnly"] = true; return m }
func ts() map[string]any {
	return readOnly(map[string]any{"type": "string", "format": "date-time"})
}

// withRead adds the read-only fields every record has, and relaxes additionalProperties (answers
// may grow fields).
func withRead(in map[string]any, extra map[string]any) map[string]any {
	props := map[string]any{"id": readOnly(uuidStr("made by sinew (UUIDv7)")), "created_at": ts(), "updated_at": ts()}
	for k, v := range in["properties"].(map[string]any) {
		props[k] = v
	}
	for k, v := range extra {
		props[k] = v
	}
	return map[string]any{"type": "object", "properties": props, "required": []any{"id", "created_at", "updated_at"}}
}

// asPatch is a schema whose fields are all optional (a merge patch: null removes a field).
func asPatch(in map[string]any) map[string]any {
	props := map[string]any{}
	for k, v := range in["properties"].(map[string]any) {
		// A nested object merges into the stored one, so its own required fields are optional too.
		if m, ok := v.(map[string]any); ok && m["required"] != nil {
			c := make(map[string]any, len(m))
			for mk, mv := range m {
				if mk != "required" {
					c[mk] = mv
				}
			}
			v = c
		}
		props[k] = v
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false,
		"description": "an RFC 7386 merge patch: objects merge key by key, null removes a field, anything else replaces"}
}

const metadataDoc = "free-form; the keys x-integration-setup, x-integration-args, x-api_call-setup and x-api_call-args " +
	"map a tool name to an object. Values under the -setup keys are secrets: stored encrypted and answered " +
	"as \"<redacted>\"; writing \"<redacted>\" back keeps the stored value."

var stringOrStrings = map[string]any{"oneOf": []any{
	map[string]any{"type": "string"},
	map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
}}

func agentInputSchema() map[string]any {
	return obj([]string{"name"}, map[string]any{
		"name":             map[string]any{"type": "string", "minLength": 1, "maxLength": maxName},
		"about":            map[string]any{"type": "string", "maxLength": maxAbout},
		"model":            str("the model the agent's chats use by default"),
		"instructions":     stringOrStrings,
		"default_settings": freeObj("model settings: temperature, max_tokens, ..."),
		"metadata":         freeObj(metadataDoc),
	})
}

func userInputSchema() map[string]any {
	return obj(nil, map[string]any{
		"name":     map[string]any{"type": "string", "maxLength": maxName},
		"about":    map[string]any{"type": "string", "maxLength": maxAbout},
		"metadata": freeObj("free-form"),
	})
}

func promptSchema() map[string]any {
	return obj(nil, map[string]any{
		"messages":       map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "description": "{role, content} messages"},
		"settings":       freeObj("model settings"),
		"auto_run_tools": map[string]any{"type": "boolean", "description": "run the model's tool calls (default: the auto_tool_calls_prompt_step flag)"},
		"model":          str("the model, instead of the agent's"),
		"tool_choice":    map[string]any{"description": "\"auto\", \"none\" or {function: {name}}"},
		"max_iterations": map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
	})
}

func taskProps() map[string]any {
	return map[string]any{
		"name":           map[string]any{"type": "string", "minLength": 1, "maxLength": maxName},
		"description":    map[string]any{"type": "string", "maxLength": maxAbout},
		"inherit_tools":  map[string]any{"type": "boolean", "description": "the agent's tools are visible to the task's calls too (the task's win a clash)"},
		"metadata":       freeObj(metadataDoc),
		"prompt":         httpapi.Ref("TaskPrompt"),
		"input_schema":   freeObj("Julep's: the JSON Schema an execution's input must fit"),
		"canonical_name": map[string]any{"type": "string", "maxLength": maxName, "description": "Julep's; accepted and kept out of the record"},
		"main": map[string]any{"type": "array", "items": map[string]any{"type": "object"},
			"description": "Julep's main workflow: the steps an execution runs, compiled to the task's state machine (see internal/julep/taskflow). Any other key holding a list of steps is another named workflow, which a workflow step runs."},
	}
}

// withWorkflows lets a task schema hold named workflows (lists of steps) besides its fields.
func withWorkflows(o map[string]any) map[string]any {
	o["additionalProperties"] = map[string]any{"type": "array", "items": map[string]any{"type": "object"}}
	return o
}

func taskInputSchema() map[string]any {
	p := taskProps()
	p["tools"] = map[string]any{"type": "array", "items": httpapi.Ref("ToolInput"),
		"description": "only on create; afterwards through /tasks/{task_id}/tools. Names are unique within the task (409)."}
	return withWorkflows(obj([]string{"name"}, p))
}

func toolProps() map[string]any {
	types := make([]any, len(tool.Types))
	for i, t := range tool.Types {
		types[i] = string(t)
	}
	providers := make([]any, len(tool.Providers))
	for i, p := range tool.Providers {
		providers[i] = p
	}
	enum := func(vs []string) []any {
		out := make([]any, len(vs))
		for i, v := range vs {
			out[i] = v
		}
		return out
	}
	return map[string]any{
		"name":        map[string]any{"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,39}$", "description": "unique within the owner (409 on a duplicate)"},
		"type":        map[string]any{"type": "string", "enum": types},
		"description": map[string]any{"type": "string", "maxLength": tool.MaxDescription},
		"function": obj(nil, map[string]any{
			"name": map[string]any{"type": []any{"string", "null"}, "description": "ignored (Julep's DO NOT USE)"}, "description": map[string]any{"type": []any{"string", "null"}, "description": "ignored"},
			"parameters":        freeObj("a JSON Schema of type object"),
			"timeout_seconds":   map[string]any{"type": "integer", "minimum": 1, "maximum": tool.MaxFunctionTimeoutSeconds, "description": "how long an execution waits for the client (default 31 days)"},
			"heartbeat_seconds": map[string]any{"type": "integer", "minimum": 1},
		}),
		"integration": obj([]string{"provider"}, map[string]any{
			"provider":      map[string]any{"type": "string", "enum": providers},
			"method":        str("the provider's method; its first when absent"),
			"setup":         freeObj("secrets: stored encrypted apart from the tool, answered as \"<redacted>\"; \"<redacted>\" written back keeps the stored value"),
			"arguments":     freeObj("pre-applied arguments"),
			"params_schema": freeObj("mcp call_tool with arguments.tool_name only: the remote tool's input schema, shown to the model; the call's arguments go to the remote tool whole"),
			"origin": map[string]any{"type": "object", "description": "set by an import (POST .../tools/mcp): where the tool came from", "properties": map[string]any{
				"kind": str("mcp"), "server": str("the server's URL, without its query"), "prefix": str("the import's prefix"), "remote": str("the remote tool's name")}},
		}),
		"system": obj([]string{"resource", "operation"}, map[string]any{
			"resource":    map[string]any{"type": "string", "enum": enum(tool.SystemResources)},
			"operation":   map[string]any{"type": "string", "enum": enum(tool.SystemOperations)},
			"subresource": map[string]any{"type": "string", "enum": enum(tool.SystemSubresources)},
			"resource_id": uuidStr("the default for the resource's own id argument (agent_id for an agent, ...)"),
			"arguments":   freeObj("defaults that the call's arguments override"),
		}),
		"api_call": map[string]any{"type": "object", "required": []any{"method", "url"}, "description": "an HTTP request template; json_ and schema_ are accepted as aliases of json and schema",
			"properties": map[string]any{
				"method": map[string]any{"type": "string", "enum": enum(tool.HTTPMethods)}, "url": map[string]any{"type": "string", "format": "uri"},
				"headers":       map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
				"timeout":       map[string]any{"type": "integer", "minimum": 1, "maximum": tool.MaxAPICallTimeoutSeconds},
				"params_schema": freeObj("the request's parameters, as in Julep: query parameters and the URL's {placeholders} by name (or, when every property names a request part, the call's request parts); shown to the model"), "follow_redirects": map[string]any{"type": "boolean"},
				"include_response_content": map[string]any{"type": "boolean"}, "json": freeObj(""), "data": freeObj(""), "files": freeObj(""),
				"cookies": map[string]any{"type": "object"}, "params": map[string]any{"type": []any{"string", "object"}},
				"content": str("base64"), "schema": freeObj(""), "secrets": freeObj("{name: {name: SECRET}}"),
				"argument_locations": map[string]any{"type": "object", "description": "where each argument goes in the request, by the argument's name: {\"in\": path | query | header | cookie | body | form, \"name\": the parameter's own name when it differs}; body and form take the whole body",
					"additionalProperties": obj([]string{"in"}, map[string]any{"in": map[string]any{"type": "string", "enum": enum(tool.ArgumentPlaces)}, "name": str("")})},
			}},
	}
}

func toolInputSchema() map[string]any {
	s := obj([]string{"name", "type"}, toolProps())
	s["description"] = "a tool: exactly one of function, integration, system, api_call, agreeing with type. " +
		"id, created_at and updated_at are read-only and ignored when sent."
	s["additionalProperties"] = false
	for _, k := range readOnlyToolFields {
		s["properties"].(map[string]any)[k] = readOnly(map[string]any{"type": "string"})
	}
	return s
}

func registerSchemas(rt *httpapi.Router) {
	agentIn := agentInputSchema()
	rt.Schema("AgentInput", agentIn)
	rt.Schema("AgentPatch", asPatch(agentIn))
	rt.Schema("Agent", withRead(agentIn, nil))

	userIn := userInputSchema()
	rt.Schema("UserInput", userIn)
	rt.Schema("UserPatch", asPatch(userIn))
	rt.Schema("User", withRead(userIn, nil))

	rt.Schema("ToolInput", toolInputSchema())
	tp := asPatch(obj(nil, toolProps()))
	tp["description"] = "a merge patch of a tool, as Julep's: at most one of function, integration, system, api_call, agreeing with type (the patch's, else the tool's); changing the type needs the new type's field"
	rt.Schema("ToolPatch", tp)
	rt.Schema("Tool", withRead(obj([]string{"name", "type"}, toolProps()), nil))

	rt.Schema("TaskPrompt", promptSchema())
	taskIn := taskInputSchema()
	rt.Schema("TaskInput", taskIn)
	tu := withWorkflows(obj([]string{"name"}, taskProps()))
	tu["description"] = "replaces the task's own fields; its tools stay (they change through /tasks/{task_id}/tools)"
	rt.Schema("TaskUpdate", tu)
	rt.Schema("TaskPatch", withWorkflows(asPatch(obj(nil, taskProps()))))
	taskOut := map[string]any{"agent_id": readOnly(uuidStr("the task's agent"))}
	rt.Schema("TaskSummary", withRead(obj(nil, taskProps()), taskOut))
	rt.Schema("Task", withRead(obj(nil, taskProps()), map[string]any{"agent_id": taskOut["agent_id"],
		"tools": map[string]any{"type": "array", "items": httpapi.Ref("Tool"), "description": "the task's own tools"}}))

	docIn := obj([]string{"title", "content"}, map[string]any{
		"title": map[string]any{"type": "string", "minLength": 1, "maxLength": maxName}, "content": stringOrStrings,
		"metadata": freeObj("free-form; search's metadata_filter matches it"),
	})
	rt.Schema("DocInput", docIn)
	rt.Schema("Doc", withRead(docIn, nil))
	searchFields := map[string]any{
		"text":            str("the words to look for"),
		"limit":           map[string]any{"type": "integer", "minimum": 1, "maximum": docsearch.MaxLimit, "default": docsearch.DefaultLimit},
		"metadata_filter": freeObj("keep docs whose metadata has each of these keys with an equal value"),
		"vector":          map[string]any{"type": "array", "items": map[string]any{"type": "number"}, "description": "refused: sinew has no embedding search"},
	}
	sp := obj(nil, map[string]any{"mmr_strength": map[string]any{"type": "number"}, "alpha": map[string]any{"type": "number"},
		"confidence": map[string]any{"type": "number"}, "lang": map[string]any{"type": "string"}})
	for k, v := range searchFields {
		sp["properties"].(map[string]any)[k] = v
	}
	sp["description"] = "Julep's nested form; its fields win over the top level; mmr_strength, alpha, confidence and lang are accepted and ignored"
	sf := map[string]any{"search_params": sp}
	for k, v := range searchFields {
		sf[k] = v
	}
	rt.Schema("SearchRequest", obj(nil, sf))
	rt.Schema("SearchResult", map[string]any{
		"type": "object", "required": []any{"docs", "truncated"},
		"description": "a keyword search (BM25 over title and content), not an embedding search",
		"properties": map[string]any{
			"docs": map[string]any{"type": "array", "items": map[string]any{"allOf": []any{httpapi.Ref("Doc"),
				map[string]any{"type": "object", "properties": map[string]any{"score": map[string]any{"type": "number"}}}}}},
			"truncated": map[string]any{"type": "boolean", "description": "the owner has more docs than one search reads; only the oldest were searched"},
		},
	})

	sessIn := obj(nil, map[string]any{
		"agent_id": uuidStr("the session's agent (required, or as agent)"), "agent": uuidStr("Julep's name for agent_id"),
		"user_id": uuidStr("the session's user"), "user": uuidStr("Julep's name for user_id"),
		"situation": map[string]any{"type": "string", "maxLength": maxAbout}, "metadata": freeObj(metadataDoc),
	})
	sessIn["anyOf"] = []any{map[string]any{"required": []any{"agent_id"}}, map[string]any{"required": []any{"agent"}}}
	rt.Schema("SessionInput", sessIn)
	sessPatch := asPatch(obj(nil, map[string]any{"user_id": uuidStr("the session's user"),
		"situation": map[string]any{"type": "string", "maxLength": maxAbout}, "metadata": freeObj(metadataDoc)}))
	rt.Schema("SessionPatch", sessPatch)
	rt.Schema("Session", withRead(obj(nil, map[string]any{"agent_id": uuidStr(""), "user_id": uuidStr(""),
		"situation": map[string]any{"type": "string"}, "metadata": freeObj(metadataDoc)}), nil))
	rt.Schema("HistoryMessage", map[string]any{"type": "object", "required": []any{"id", "role", "content", "created_at"},
		"properties": map[string]any{"id": uuidStr(""), "role": map[string]any{"type": "string", "enum": []any{"system", "user", "assistant", "tool", "developer"}},
			"content": map[string]any{}, "name": map[string]any{"type": "string"}, "tool_call_id": map[string]any{"type": "string"},
			"tool_calls": map[string]any{"type": "array"}, "created_at": ts()}})

	flagProps := map[string]any{}
	rt.Schema("FlagInput", obj([]string{"value"}, map[string]any{"value": map[string]any{"type": "boolean"}}))
	rt.Schema("Flag", obj([]string{"name", "value"}, map[string]any{"name": map[string]any{"type": "string"}, "value": map[string]any{"type": "boolean"}}))
	for _, name := range config.Flags {
		flagProps[name] = map[string]any{"type": "boolean"}
	}
	rt.Schema("Flags", map[string]any{"type": "object", "properties": flagProps,
		"description": "every known flag: the caller's value, else the deploy-time default (SINEW_FLAG_DEFAULTS)"})
}
