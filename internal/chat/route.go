package chat

import (
	"context"
	"net/http"

	"sinew/internal/httpapi"
)

const tag = "chat"

// Register adds the chat route to rt.
func Register(rt *httpapi.Router, svc *Service) {
	registerSchemas(rt)
	h := &handler{svc: svc}
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/sessions/{session_id}/chat", Handler: h.chat, Op: httpapi.Operation{
		Summary: "Chat in a session, with tools",
		Description: "Runs the model-tool loop over the session's history and the request's messages. With auto_run_tools (default: the developer's auto_run_tools_chat flag), " +
			"integration, api_call and system calls are run and fed back; function calls come back as pending_calls, answered by tool messages (tool_call_id = model_call_id) " +
			"in the next request, which is refused (422) while one is unanswered. Without auto_run_tools every call comes back unexecuted. stream: true is a 400. " +
			"Past the time budget (SINEW_CHAT_BUDGET_S), between turns or while a turn's tools still run, or with async, the loop goes on as agent_loop (202); " +
			"until that execution ends, chats in the session are refused (409). Tool outputs stored by reference reach the model as their values, " +
			"at most 128 KiB each (a longer one is cut, with a marker naming the stored value). With Idempotency-Key, a repeat answers the first answer.",
		Tags: []string{tag}, Params: []httpapi.Param{httpapi.IdempotencyParam()},
		Request: httpapi.Ref("ChatRequest"),
		Responses: map[int]httpapi.Resp{
			200: {Description: "the model's answer", Schema: httpapi.Ref("ChatResponse")},
			202: {Description: "handed to agent_loop (async, or past the time budget, also while a turn's tools still ran): {execution_id, status}"},
			400: {Description: "a broken rule (stream: true, inline tools with setup, ...)"},
			404: {Description: "unknown session, or not yours"},
			409: {Description: "a request with this Idempotency-Key is still running, or agent_loop still continues the session (the message names the execution)"},
			422: {Description: "a pending tool call is left unanswered"},
		},
	}})
}

type handler struct{ svc *Service }

func (h *handler) chat(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	key, err := r.IdempotencyKey()
	if err != nil {
		return nil, err
	}
	req, err := ParseRequest(r.Body())
	if err != nil {
		return nil, err
	}
	out, err := h.svc.Chat(ctx, Caller{DeveloperID: r.DeveloperID}, r.Param("session_id"), req, key)
	if err != nil {
		return nil, err
	}
	return httpapi.JSON(out.Status, out.Body()), nil
}

func registerSchemas(rt *httpapi.Router) {
	obj := map[string]any{"type": "object"}
	message := map[string]any{"type": "object", "required": []any{"role"}, "properties": map[string]any{
		"role":         map[string]any{"type": "string", "enum": []any{"system", "user", "assistant", "tool"}},
		"content":      map[string]any{"type": []any{"string", "null"}},
		"tool_call_id": map[string]any{"type": "string"},
		"name":         map[string]any{"type": "string"},
		"tool_calls":   map[string]any{"type": "array", "items": obj},
	}}
	rt.Schema("ChatRequest", map[string]any{"type": "object", "required": []any{"messages"}, "additionalProperties": false, "properties": map[string]any{
		"messages":       map[string]any{"type": "array", "minItems": 1, "items": message},
		"tools":          map[string]any{"type": "array", "items": obj, "description": "inline tools (no setup); absent: the session agent's tools"},
		"tool_choice":    map[string]any{"description": `"auto", "none", "required" or {"type": "function", "function": {"name"}}`},
		"auto_run_tools": map[string]any{"type": "boolean"},
		"model":          map[string]any{"type": "string"},
		"settings":       obj,
		"max_iterations": map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
		"async":          map[string]any{"type": "boolean"},
		"stream":         map[string]any{"type": "boolean", "enum": []any{false}},
	}})
	rt.Schema("ChatResponse", map[string]any{"type": "object", "properties": map[string]any{
		"id": map[string]any{"type": "string"}, "session_id": map[string]any{"type": "string"},
		"created_at": map[string]any{"type": "string", "format": "date-time"},
		"choices": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
			"index":         map[string]any{"type": "integer"},
			"finish_reason": map[string]any{"type": "string", "enum": []any{"stop", "tool_calls", "length", "content_filter", "iteration_cap"}},
			"message":       message,
		}}},
		"usage": map[string]any{"type": "object", "properties": map[string]any{
			"prompt_tokens": map[string]any{"type": "integer"}, "completion_tokens": map[string]any{"type": "integer"}, "total_tokens": map[string]any{"type": "integer"}}},
		"tool_results": map[string]any{"type": "array", "items": obj},
		"pending_calls": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
			"call_id": map[string]any{"type": "string"}, "model_call_id": map[string]any{"type": "string"},
			"tool": map[string]any{"type": "string"}, "arguments": map[string]any{}}}},
	}})
}
