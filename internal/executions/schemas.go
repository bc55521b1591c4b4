package executions

import "sinew/internal/httpapi"

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func nullableID(desc string) map[string]any {
	return map[string]any{"type": []any{"string", "null"}, "format": "uuid", "description": desc}
}

var statusEnum = []any{"running", "awaiting_input", "succeeded", "failed", "timed_out", "cancelled"}

func registerSchemas(rt *httpapi.Router) {
	rt.Schema("ToolCallRequest", map[string]any{
		"type": "object", "required": []any{"agent_id", "tool"}, "additionalProperties": false,
		"properties": map[string]any{
			"agent_id":   map[string]any{"type": "string", "format": "uuid"},
			"task_id":    nullableID("the task whose tools (and, with inherit_tools, the agent's) are searched; not with session_id"),
			"session_id": nullableID("the session whose metadata merges into the call; not with task_id"),
			"tool":       map[string]any{"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,39}$", "description": "the tool's name"},
			"arguments":  map[string]any{"type": []any{"object", "null"}},
		},
	})
	rt.Schema("ExecutionStarted", map[string]any{
		"type": "object", "required": []any{"execution_id", "status"},
		"properties": map[string]any{"execution_id": str("the Step Functions execution name"), "status": map[string]any{"type": "string", "enum": statusEnum}},
	})
	rt.Schema("PendingCall", map[string]any{
		"type": "object", "required": []any{"call_id", "execution_id", "tool", "type", "arguments", "created_at", "expires_at", "task_token", "status"},
		"properties": map[string]any{
			"call_id": str(""), "execution_id": str(""), "model_call_id": str("the model's id for the call, on the chat path"),
			"tool": str("the tool's name"), "type": map[string]any{"type": "string", "enum": []any{"function"}},
			"arguments":  map[string]any{"type": "object"},
			"created_at": map[string]any{"type": "string", "format": "date-time"}, "expires_at": map[string]any{"type": "string", "format": "date-time"},
			"task_token": str("the Step Functions task token, for SendTaskSuccess/SendTaskFailure"),
			"status":     map[string]any{"type": "string", "enum": []any{"pending", "answered", "failed", "expired"}},
		},
	})
	rt.Schema("Execution", map[string]any{
		"type": "object", "required": []any{"execution_id", "workflow", "status", "created_at", "updated_at", "pending_calls"},
		"properties": map[string]any{
			"execution_id": str("the Step Functions execution name"),
			"workflow":     map[string]any{"type": "string", "enum": []any{"tool_call", "agent_loop"}},
			"status":       map[string]any{"type": "string", "enum": statusEnum, "description": "for tool_call, the tool's outcome: an error result is failed, an expired function call timed_out. Step Functions shows such an execution SUCCEEDED: the workflow ran to its end and recorded the tool's error as the result; its FAILED means the workflow itself broke"},
			"agent_id":     str(""), "task_id": str(""), "session_id": str(""),
			"created_at":    map[string]any{"type": "string", "format": "date-time"},
			"updated_at":    map[string]any{"type": "string", "format": "date-time"},
			"output":        map[string]any{"description": "the result object {id, type, name, output}, or the error result {id, type, name, error}"},
			"error":         map[string]any{"type": "object", "properties": map[string]any{"type": str(""), "message": str("")}},
			"pending_calls": map[string]any{"type": "array", "items": httpapi.Ref("PendingCall")},
		},
	})
	rt.Schema("CallAnswer", map[string]any{
		"type": "object", "additionalProperties": false,
		"description": "exactly one of output and error",
		"properties": map[string]any{
			"output": map[string]any{"description": "any JSON: the tool's result"},
			"error": map[string]any{"type": "object", "required": []any{"type"}, "additionalProperties": false,
				"properties": map[string]any{"type": str("reported as Client.<type>"), "message": str("")}},
		},
	})
	rt.Schema("UpdateExecutionRequest", map[string]any{
		"type": "object", "required": []any{"status"},
		"properties": map[string]any{
			"status": map[string]any{"type": "string", "enum": []any{"running", "cancelled"}},
			"input":  map[string]any{"description": "with running: the answer to the one pending call"},
			"reason": str("with cancelled: why"),
		},
	})
}
