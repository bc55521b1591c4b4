package taskexec

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/workflow"
)

const tag = "executions"

// Register adds GET /tasks/{task_id}/executions and GET /executions/{execution_id}/transitions
// to rt. POST /tasks/{task_id}/executions and GET and PUT /executions/{execution_id} are package
// executions', which call Start and Get for a task's executions.
func Register(rt *httpapi.Router, s *Service) {
	rt.Schema("JulepExecution", map[string]any{"type": "object", "description": "Julep's Execution, with sinew's pending_calls",
		"properties": map[string]any{"id": map[string]any{"type": "string"}, "task_id": map[string]any{"type": "string"},
			"status": map[string]any{"type": "string", "enum": []any{"queued", "starting", "running", "awaiting_input", "succeeded", "failed", "cancelled"}},
			"input":  map[string]any{}, "output": map[string]any{}, "error": map[string]any{"type": []any{"string", "null"}},
			"transition_count": map[string]any{"type": "integer"}, "created_at": map[string]any{"type": "string", "format": "date-time"},
			"updated_at": map[string]any{"type": "string", "format": "date-time"}, "workflow": map[string]any{"type": "string"}}})
	rt.Schema("Transition", map[string]any{"type": "object", "description": "Julep's Transition, read from the Step Functions history",
		"properties": map[string]any{"id": map[string]any{"type": "string"}, "execution_id": map[string]any{"type": "string"},
			"type":    map[string]any{"type": "string", "enum": []any{"init", "step", "wait", "resume", "error", "finish", "cancelled"}},
			"current": map[string]any{"type": "object"}, "next": map[string]any{"type": []any{"object", "null"}}, "output": map[string]any{}}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/tasks/{task_id}/executions", Handler: s.list, Op: httpapi.Operation{
		Summary: "List a task's executions", Description: "The executions of the task's state machine, newest first (without input and output: GET /executions/{execution_id} gives them).",
		Tags: []string{tag}, Params: httpapi.PageParams(),
		Responses: map[int]httpapi.Resp{200: {Description: "a page", Schema: httpapi.ListOf(httpapi.Ref("JulepExecution"))}, 404: {Description: "unknown task, or not yours"}},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/executions/{execution_id}/transitions", Handler: s.transitions, Op: httpapi.Operation{
		Summary: "List a task execution's transitions", Description: "Julep's transitions (init, step, wait, resume, error, finish, cancelled), oldest first, read from the execution's Step Functions history. A tool_call or agent_loop execution has none.",
		Tags: []string{tag}, Params: httpapi.PageParams(),
		Responses: map[int]httpapi.Resp{200: {Description: "the transitions", Schema: httpapi.ListOf(httpapi.Ref("Transition"))},
			404: {Description: "unknown, not yours, or not a task's execution"}},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/executions/{execution_id}/transitions/{transition_id}", Handler: s.transition, Op: httpapi.Operation{
		Summary: "Get one of a task execution's transitions", Description: "The transition of that id (as GET /executions/{execution_id}/transitions lists them): the SDK's executions.transitions.retrieve.",
		Tags: []string{tag}, Responses: map[int]httpapi.Resp{200: {Description: "the transition", Schema: httpapi.Ref("Transition")},
			404: {Description: "unknown execution or transition, or not yours"}},
	}})
}

func (s *Service) transition(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	x, err := s.Store.GetExecution(ctx, r.DeveloperID, r.Param("execution_id"))
	if err != nil {
		return nil, err
	}
	id := r.Param("transition_id")
	if x.Workflow == workflow.Task {
		ts, err := s.Transitions(ctx, x)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if t.ID == id {
				return httpapi.OK(t), nil
			}
		}
	}
	return nil, fault.New(fault.NotFound, "execution %s has no transition %s", x.ExecutionID, id)
}

func (s *Service) list(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	p, err := r.Page()
	if err != nil {
		return nil, err
	}
	t, err := s.Store.GetTask(ctx, r.DeveloperID, r.Param("task_id"))
	if err != nil {
		return nil, err
	}
	if !HasWorkflows(t) {
		if p.Cursor != "" {
			return nil, errCursor
		}
		return httpapi.OK(httpapi.NewList([]Execution{}, "")), nil
	}
	arn, err := s.MachineARN(t.ID)
	if err != nil {
		return nil, err
	}
	in := &sfn.ListExecutionsInput{StateMachineArn: &arn, MaxResults: int32(p.Limit)}
	if p.Cursor != "" {
		in.NextToken = &p.Cursor
	}
	l, err := s.SFN.ListExecutions(ctx, in)
	switch fault.AWSCode(err) {
	case "StateMachineDoesNotExist":
		return httpapi.OK(httpapi.NewList([]Execution{}, "")), nil
	case "InvalidToken":
		return nil, errCursor
	}
	if err != nil {
		return nil, fault.FromAWS(err, "list the task's executions")
	}
	items := []Execution{}
	for _, e := range l.Executions {
		name := *e.Name
		if strings.HasPrefix(name, SubPrefix) {
			continue // a workflow step's run of another workflow, within an execution listed itself
		}
		x := Execution{ID: name, TaskID: t.ID, Status: statusOf(string(e.Status)), Workflow: workflow.Task}
		if e.StartDate != nil {
			x.CreatedAt, x.UpdatedAt = *e.StartDate, *e.StartDate
		}
		if e.StopDate != nil {
			x.UpdatedAt = *e.StopDate
		}
		items = append(items, x)
	}
	next := ""
	if l.NextToken != nil {
		next = *l.NextToken
	}
	return httpapi.OK(httpapi.NewList(items, next)), nil
}

var errCursor = fault.Invalid("cursor", "cursor is not one this list gave: start again without it")

// SubPrefix begins the names of the executions a workflow step starts (taskflow names them so).
const SubPrefix = "sub-"

func (s *Service) transitions(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	p, err := r.Page()
	if err != nil {
		return nil, err
	}
	from := 0
	if p.Cursor != "" {
		if from, err = strconv.Atoi(p.Cursor); err != nil || from < 0 || strconv.Itoa(from) != p.Cursor {
			return nil, errCursor
		}
	}
	x, err := s.Store.GetExecution(ctx, r.DeveloperID, r.Param("execution_id"))
	if err != nil {
		return nil, err
	}
	if x.Workflow != workflow.Task {
		// A tool_call or agent_loop execution runs no task's steps: it has no Julep transitions.
		return httpapi.OK(httpapi.NewList([]Transition{}, "")), nil
	}
	ts, err := s.Transitions(ctx, x)
	if err != nil {
		return nil, err
	}
	// The cursor is the offset of the page's first transition in the history's order.
	from = min(from, len(ts))
	to, next := min(from+p.Limit, len(ts)), ""
	if to < len(ts) {
		next = strconv.Itoa(to)
	}
	return httpapi.OK(httpapi.NewList(ts[from:to], next)), nil
}
