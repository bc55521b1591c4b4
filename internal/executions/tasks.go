package executions

import (
	"context"
	"net/http"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/loop/agentloop"
)

// RegisterTaskExecutions adds POST /tasks/{task_id}/executions to rt: a task's prompt run as
// agent_loop, started by s.
func RegisterTaskExecutions(rt *httpapi.Router, s *agentloop.Starter) {
	h := &taskHandlers{s: s}
	rt.Schema("TaskExecutionRequest", map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"input": map[string]any{"description": "the user's message: a string, or any JSON value (sent as its JSON text)"},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/tasks/{task_id}/executions", Handler: h.start, Op: httpapi.Operation{
		Summary:     "Run a task's prompt (agent_loop)",
		Description: "Starts agent_loop over the task's prompt and tools (with inherit_tools, the agent's too), input appended as the user's message. With Idempotency-Key, a repeat answers the same execution.",
		Tags:        []string{tag}, Params: []httpapi.Param{httpapi.IdempotencyParam()},
		Request: httpapi.Ref("TaskExecutionRequest"),
		Responses: map[int]httpapi.Resp{202: {Description: "started: {execution_id, status}"},
			400: {Description: "a broken rule"}, 404: {Description: "unknown task, or not yours"}},
	}})
}

type taskHandlers struct{ s *agentloop.Starter }

func (h *taskHandlers) start(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	key, err := r.IdempotencyKey()
	if err != nil {
		return nil, err
	}
	var body map[string]any
	if err := r.Decode(&body); err != nil {
		return nil, err
	}
	for k := range body {
		if k != "input" {
			return nil, fault.Invalid(k, "unknown field %q: the body is {input}", k)
		}
	}
	st, err := h.s.StartTask(ctx, r.DeveloperID, r.Param("task_id"), body["input"], key, 0, "")
	if err != nil {
		return nil, err
	}
	return httpapi.JSON(http.StatusAccepted, st), nil
}
