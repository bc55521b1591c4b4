package executions

import (
	"context"
	"net/http"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/julep/taskexec"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// RegisterTaskExecutions adds POST /tasks/{task_id}/executions to rt: a Julep task's workflows
// run on its state machine by tasks, and a task without workflows, its prompt run as agent_loop,
// started by s.
func RegisterTaskExecutions(rt *httpapi.Router, s *agentloop.Starter, tasks *taskexec.Service) {
	h := &taskHandlers{s: s, tasks: tasks}
	rt.Schema("TaskExecutionRequest", map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"input": map[string]any{"description": "the user's message: a string, or any JSON value (sent as its JSON text)"},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/tasks/{task_id}/executions", Handler: h.start, Op: httpapi.Operation{
		Summary:     "Run a task: its workflows (Julep's) or its prompt (agent_loop)",
		Description: "A task with workflows (main, ...) runs on its state machine, input checked against its input_schema: 201 with Julep's Execution. Otherwise agent_loop runs over the task's prompt and tools (with inherit_tools, the agent's too), input appended as the user's message: 202 with {execution_id, status}. With Idempotency-Key, a repeat answers the same execution.",
		Tags:        []string{tag}, Params: []httpapi.Param{httpapi.IdempotencyParam()},
		Request: httpapi.Ref("TaskExecutionRequest"),
		Responses: map[int]httpapi.Resp{201: {Description: "a task with workflows started", Schema: httpapi.Ref("JulepExecution")}, 202: {Description: "started: {execution_id, status}"},
			400: {Description: "a broken rule"}, 404: {Description: "unknown task, or not yours"}},
	}})
}

type taskHandlers struct {
	s     *agentloop.Starter
	tasks *taskexec.Service
}

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
	if h.tasks != nil {
		t, err := h.tasks.Store.GetTask(ctx, r.DeveloperID, r.Param("task_id"))
		if err != nil {
			return nil, err
		}
		if taskexec.HasWorkflows(t) {
			x, err := h.tasks.Start(ctx, r.DeveloperID, t, body["input"], key)
			if err != nil {
				return nil, err
			}
			return httpapi.JSON(http.StatusCreated, x), nil
		}
	}
	st, err := h.s.StartTask(ctx, r.DeveloperID, r.Param("task_id"), body["input"], key, 0, "")
	if err != nil {
		return nil, err
	}
	return httpapi.JSON(http.StatusAccepted, st), nil
}

// resume answers execution id's one pending call with input (PUT /executions/{id}). A task's
// execution that waits on no call of its own answers the one a child of its waits on, through the
// answer route's own path (workflow.Service.AnswerCall): same records, same idempotency.
func (h *handlers) resume(ctx context.Context, dev, id string, input any) (*store.PendingCall, error) {
	x, err := h.w.Store.GetExecution(ctx, dev, id)
	if err != nil {
		return nil, err
	}
	if x.Workflow != workflow.Task || h.tasks == nil || len(x.PendingCalls) > 0 {
		return h.w.Resume(ctx, dev, id, input)
	}
	calls, err := h.tasks.PendingCalls(ctx, dev, x)
	if err != nil {
		return nil, err
	}
	switch {
	case len(calls) == 0:
		return h.w.Resume(ctx, dev, id, input) // its answer when there is nothing to resume
	case len(calls) > 1:
		return nil, fault.New(fault.Unprocessable, "execution %s waits on %d calls of its steps: answer each with POST /executions/{execution_id}/calls/{call_id}/result (GET /executions/%s lists them)", id, len(calls), id)
	}
	return h.w.AnswerCall(ctx, dev, calls[0].ExecutionID, calls[0].CallID, workflow.Answer{Output: input})
}

func ok[T any](v T, err error) (*httpapi.Response, error) {
	if err != nil {
		return nil, err
	}
	return httpapi.OK(v), nil
}
