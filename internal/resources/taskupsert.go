package resources

import (
	"context"
	"net/http"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/tool"
)

// UpsertTask is Julep's create_or_update (POST /agents/{agent_id}/tasks/{task_id}): the task is
// created with the given id, or, when the agent has it, replaced in place: its fields as PUT
// replaces them, its tools by name (a given tool replaces the task's tool of its name or joins
// them, a tool not given goes), its machine updated as on PUT. created tells which.
func (s *Service) UpsertTask(ctx context.Context, dev, agentID, id string, body []byte) (v *TaskView, created bool, err error) {
	in, err := decodeInput[TaskInput](body)
	if err != nil {
		return nil, false, err
	}
	cur, err := s.Store.GetTask(ctx, dev, id)
	if fault.Is(err, fault.NotFound) {
		v, cerr := s.createTask(ctx, dev, agentID, id, in)
		if !fault.Is(cerr, fault.Conflict) {
			return v, cerr == nil, cerr
		}
		// Made by a concurrent request since the read: replaced as the task it made.
		if cur, err = s.Store.GetTask(ctx, dev, id); fault.Is(err, fault.NotFound) {
			return nil, false, cerr // the conflict was within the body (two tools of one name)
		}
	}
	if err != nil {
		return nil, false, err
	}
	if cur.AgentID != agentID {
		return nil, false, fault.New(fault.Conflict, "task %s belongs to another agent: its id cannot be reused under agent %s", id, agentID)
	}
	tools, err := taskTools(in)
	if err != nil {
		return nil, false, err
	}
	if err := s.replaceTaskTools(ctx, dev, id, tools); err != nil {
		return nil, false, err
	}
	in.Tools = nil
	var had bool
	task, err := s.Store.UpdateTask(ctx, dev, id, s.checked(ctx, dev, &had, in.apply))
	if err != nil {
		return nil, false, err
	}
	v, err = s.saved(ctx, dev, task, had)
	return v, false, err
}

// replaceTaskTools makes the task's tools the given ones, matched by name.
func (s *Service) replaceTaskTools(ctx context.Context, dev, taskID string, tools []tool.Tool) error {
	o := taskOwner(taskID)
	old, err := s.Store.AllTools(ctx, dev, o)
	if err != nil {
		return err
	}
	byName := make(map[string]tool.Tool, len(old))
	for _, t := range old {
		byName[t.Name] = t
	}
	for _, nt := range tools {
		if t, ok := byName[nt.Name]; ok {
			delete(byName, nt.Name)
			if _, err := s.Store.UpdateTool(ctx, dev, o, t.ID, func(t *tool.Tool) error { *t = nt; return nil }); err != nil {
				return err
			}
			continue
		}
		if _, err := s.Store.CreateTool(ctx, dev, o, nt); err != nil {
			return err
		}
	}
	for _, t := range byName {
		if err := s.Store.DeleteTool(ctx, dev, o, t.ID); err != nil && !fault.Is(err, fault.NotFound) {
			return err
		}
	}
	return nil
}

func (h handlers) registerTaskUpsert(rt *httpapi.Router) {
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/agents/{agent_id}/tasks/{task_id}", Handler: h.upsertTask, Op: httpapi.Operation{ID: "createOrUpdateTask",
		Summary:     "Create a task with the given id, or replace it (Julep's create_or_update)",
		Description: "A task of that id is created (201) with its tools; a task of the agent's with that id is replaced in place (200): its fields as PUT /tasks/{task_id} replaces them, its tools by name (a given tool replaces the task's tool of that name or is added, a tool not given is deleted), its state machine updated.",
		Tags:        []string{"tasks"}, Request: ref("TaskInput"),
		Responses: withConflict(map[int]httpapi.Resp{201: {Description: "created", Schema: ref("Task")}, 200: {Description: "replaced", Schema: ref("Task")}},
			"the id is a task of another agent, or two of its tools share a name")}})
}

func (h handlers) upsertTask(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	v, made, err := h.s.UpsertTask(ctx, r.DeveloperID, r.Param("agent_id"), r.Param("task_id"), r.Body())
	if err != nil {
		return nil, err
	}
	if made {
		return httpapi.JSON(http.StatusCreated, v), nil
	}
	return httpapi.OK(v), nil
}
