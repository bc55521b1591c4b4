package resources

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// TaskPrompt is a task's optional prompt: what agent_loop sends the model when the task
// is executed.
type TaskPrompt struct {
	Messages      []any          `json:"messages,omitempty"`
	Settings      map[string]any `json:"settings,omitempty"`
	AutoRunTools  *bool          `json:"auto_run_tools,omitempty"`
	Model         string         `json:"model,omitempty"`
	ToolChoice    any            `json:"tool_choice,omitempty"`
	MaxIterations *int64         `json:"max_iterations,omitempty"`
}

// TaskInput is the body of POST /agents/{agent_id}/tasks (with tools) and of PUT /tasks/{task_id}
// (without: a task's tools change through /tasks/{task_id}/tools).
type TaskInput struct {
	Name         string            `json:"name"`
	Description  string            `json:"description,omitempty"`
	Tools        []json.RawMessage `json:"tools,omitempty"`
	InheritTools bool              `json:"inherit_tools,omitempty"`
	Metadata     map[string]any    `json:"metadata,omitempty"`
	Prompt       *TaskPrompt       `json:"prompt,omitempty"`
	// Julep's fields: the JSON Schema an execution's input must fit, its canonical name
	// (accepted, unused), and its workflows (see UnmarshalJSON).
	InputSchema   any            `json:"input_schema,omitempty"`
	CanonicalName string         `json:"canonical_name,omitempty"`
	Workflows     map[string]any `json:"-"`
}

func (in *TaskInput) check() error {
	if err := checkText("name", in.Name, true, maxName); err != nil {
		return err
	}
	if err := checkText("description", in.Description, false, maxAbout); err != nil {
		return err
	}
	if err := in.checkWorkflows(); err != nil {
		return err
	}
	if p := in.Prompt; p != nil {
		for i, m := range p.Messages {
			if _, ok := m.(map[string]any); !ok {
				return fault.Invalid("prompt.messages["+strconv.Itoa(i)+"]", "prompt.messages[%d] must be an object {role, content}", i)
			}
		}
		if p.MaxIterations != nil && (*p.MaxIterations < 1 || *p.MaxIterations > 100) {
			return fault.Invalid("prompt.max_iterations", "prompt.max_iterations must be between 1 and 100")
		}
	}
	return nil
}

func (in *TaskInput) apply(t *store.Task) error {
	t.Name, t.Description, t.InheritTools, t.Metadata = in.Name, in.Description, in.InheritTools, in.Metadata
	t.InputSchema, t.Workflows = in.InputSchema, in.Workflows
	t.Prompt = nil
	if in.Prompt != nil {
		p, err := toValue(in.Prompt)
		if err != nil {
			return err
		}
		t.Prompt = p
	}
	return nil
}

func taskInputOf(t *store.Task) (*TaskInput, error) {
	in := &TaskInput{Name: t.Name, Description: t.Description, InheritTools: t.InheritTools, Metadata: t.Metadata,
		InputSchema: t.InputSchema, Workflows: t.Workflows}
	if t.Prompt != nil {
		b, err := json.Marshal(t.Prompt)
		if err != nil {
			return nil, fault.Wrap(fault.Internal, err, "encode the task's prompt")
		}
		in.Prompt = &TaskPrompt{}
		if err := json.Unmarshal(b, in.Prompt); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "the stored prompt of task %s does not fit its schema", t.ID)
		}
	}
	return in, nil
}

// TaskView is a task as the API answers it: the task and its own tools.
type TaskView struct {
	store.Task
	Tools []tool.Tool `json:"tools"`
}

// CreateTask creates a task of an agent with its tools, in one transaction.
func (s *Service) CreateTask(ctx context.Context, dev, agentID string, body []byte) (*TaskView, error) {
	in, err := decodeInput[TaskInput](body)
	if err != nil {
		return nil, err
	}
	return s.createTask(ctx, dev, agentID, "", in)
}

// taskTools decodes a task body's tools.
func taskTools(in *TaskInput) ([]tool.Tool, error) {
	tools := make([]tool.Tool, 0, len(in.Tools))
	for i, raw := range in.Tools {
		t, err := decodeToolBody(raw, "tools["+strconv.Itoa(i)+"].")
		if err != nil {
			return nil, err
		}
		tools = append(tools, *t)
	}
	return tools, nil
}

// createTask creates the task in (of id, when given) with its tools.
func (s *Service) createTask(ctx context.Context, dev, agentID, id string, in *TaskInput) (*TaskView, error) {
	tools, err := taskTools(in)
	if err != nil {
		return nil, err
	}
	t := store.Task{ID: id, AgentID: agentID}
	if err := in.apply(&t); err != nil {
		return nil, err
	}
	if _, err := s.compileTask(ctx, dev, &t, tools); err != nil {
		return nil, err
	}
	task, made, err := s.Store.CreateTask(ctx, dev, agentID, t, tools)
	if err != nil {
		return nil, err
	}
	if made == nil {
		made = []tool.Tool{}
	}
	// Compiled again with its id, which its machine's name and ARN carry.
	def, err := s.compileTask(ctx, dev, task, made)
	if err != nil {
		return nil, err
	}
	switch {
	case def != nil && id != "" && s.Machines != nil:
		// An id the caller chose may be another developer's task: its machine is not touched.
		if err := s.Machines.Create(ctx, task.ID, def); err != nil {
			if fault.Is(err, fault.Conflict) {
				if derr := s.Store.DeleteTask(ctx, dev, task.ID); derr != nil {
					return nil, derr
				}
			}
			return nil, err
		}
	case def != nil:
		if err := s.saveMachine(ctx, task, def); err != nil {
			return nil, err
		}
	}
	return &TaskView{Task: *task, Tools: made}, nil
}

// GetTask reads a task with its tools.
func (s *Service) GetTask(ctx context.Context, dev, id string) (*TaskView, error) {
	task, err := s.Store.GetTask(ctx, dev, id)
	if err != nil {
		return nil, err
	}
	return s.view(ctx, dev, task)
}

// maxTaskTools bounds the tools a task answer lists (CreateTask's transaction holds about 30).
const maxTaskTools = store.MaxToolsPerOwner

func (s *Service) view(ctx context.Context, dev string, task *store.Task) (*TaskView, error) {
	tools := []tool.Tool{}
	p := store.Page{Limit: store.MaxLimit}
	for {
		l, err := s.Store.ListTools(ctx, dev, taskOwner(task.ID), p)
		if err != nil {
			return nil, err
		}
		tools = append(tools, l.Items...)
		if l.NextCursor == nil || len(tools) >= maxTaskTools {
			return &TaskView{Task: *task, Tools: tools}, nil
		}
		p.Cursor = *l.NextCursor
	}
}

var errTaskTools = fault.Invalid("tools", "a task's tools change through /tasks/{task_id}/tools, not in an update of the task")

// ReplaceTask replaces a task's own fields (PUT); its tools stay.
func (s *Service) ReplaceTask(ctx context.Context, dev, id string, body []byte) (*TaskView, error) {
	in, err := decodeInput[TaskInput](body)
	if err != nil {
		return nil, err
	}
	if in.Tools != nil {
		return nil, errTaskTools
	}
	var had bool
	task, err := s.Store.UpdateTask(ctx, dev, id, s.checked(ctx, dev, &had, in.apply))
	if err != nil {
		return nil, err
	}
	return s.saved(ctx, dev, task, had)
}

// checked is mutate followed by the compile of the task's workflows, so an update that cannot run
// is refused before it is stored.
// had tells whether the stored task had workflows.
func (s *Service) checked(ctx context.Context, dev string, had *bool, mutate func(*store.Task) error) func(*store.Task) error {
	return func(t *store.Task) error {
		*had = len(t.Workflows) > 0
		if err := mutate(t); err != nil {
			return err
		}
		if len(t.Workflows) == 0 {
			return nil
		}
		v, err := s.view(ctx, dev, t)
		if err != nil {
			return err
		}
		_, err = s.compileTask(ctx, dev, t, v.Tools)
		return err
	}
}

// saved answers an updated task, its machine brought in step with it.
func (s *Service) saved(ctx context.Context, dev string, task *store.Task, had bool) (*TaskView, error) {
	v, err := s.view(ctx, dev, task)
	if err != nil {
		return nil, err
	}
	def, err := s.compileTask(ctx, dev, task, v.Tools)
	if err != nil {
		return nil, err
	}
	if def != nil && !had && s.Machines != nil {
		return v, s.firstMachine(ctx, dev, task.ID, def)
	}
	if def != nil || had {
		if err := s.saveMachine(ctx, task, def); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// firstMachine creates the machine of a task that had no workflows. Its id may be one its
// developer chose (create_or_update) that another's task has: then the workflows are taken back
// and the update is a Conflict, the other's machine untouched.
func (s *Service) firstMachine(ctx context.Context, dev, id string, def []byte) error {
	err := s.Machines.Create(ctx, id, def)
	if !fault.Is(err, fault.Conflict) {
		return err
	}
	if _, uerr := s.Store.UpdateTask(ctx, dev, id, func(t *store.Task) error { t.Workflows = nil; return nil }); uerr != nil {
		return uerr
	}
	return err
}

// PatchTask merges a patch into a task's own fields (PATCH).
func (s *Service) PatchTask(ctx context.Context, dev, id string, body []byte) (*TaskView, error) {
	patch, err := decodePatch(body)
	if err != nil {
		return nil, err
	}
	if _, ok := patch["tools"]; ok {
		return nil, errTaskTools
	}
	var had bool
	task, err := s.Store.UpdateTask(ctx, dev, id, s.checked(ctx, dev, &had, func(t *store.Task) error {
		cur, err := taskInputOf(t)
		if err != nil {
			return err
		}
		in, err := patchInput[TaskInput](cur, patch)
		if err != nil {
			return err
		}
		return in.apply(t)
	}))
	if err != nil {
		return nil, err
	}
	return s.saved(ctx, dev, task, had)
}

func (h handlers) registerTasks(rt *httpapi.Router) {
	tags := []string{"tasks"}
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/agents/{agent_id}/tasks", Handler: h.createTask, Op: httpapi.Operation{ID: "createTask",
		Summary: "Create a task of an agent, with its tools", Tags: tags, Request: ref("TaskInput"),
		Responses: withConflict(resp(201, "the task with its tools", ref("Task")), "two of its tools share a name")}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/agents/{agent_id}/tasks", Handler: h.listTasks, Op: httpapi.Operation{ID: "listTasks",
		Summary: "List an agent's tasks, in the order they were made (without their tools)", Tags: tags, Params: httpapi.PageParams(),
		Responses: resp(200, "a page of tasks", httpapi.ListOf(ref("TaskSummary")))}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/tasks/{task_id}", Handler: h.getTask, Op: httpapi.Operation{ID: "getTask",
		Summary: "Get a task with its tools", Tags: tags, Responses: resp(200, "the task", ref("Task"))}})
	rt.Handle(httpapi.Route{Method: http.MethodPut, Path: "/tasks/{task_id}", Handler: h.updateTask, Op: httpapi.Operation{ID: "updateTask",
		Summary: "Replace a task's own fields (its tools stay)", Tags: tags, Request: ref("TaskUpdate"), Responses: resp(200, "the task", ref("Task"))}})
	rt.Handle(httpapi.Route{Method: http.MethodPatch, Path: "/tasks/{task_id}", Handler: h.patchTask, Op: httpapi.Operation{ID: "patchTask",
		Summary: "Merge a patch into a task's own fields", Tags: tags, Request: ref("TaskPatch"), Responses: resp(200, "the task", ref("Task"))}})
	rt.Handle(httpapi.Route{Method: http.MethodDelete, Path: "/tasks/{task_id}", Handler: h.deleteTask, Op: httpapi.Operation{ID: "deleteTask",
		Summary: "Delete a task with its tools", Tags: tags, Responses: resp(204, "deleted", nil)}})
	h.registerTaskUpsert(rt)
}

func (h handlers) createTask(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return created(h.s.CreateTask(ctx, r.DeveloperID, r.Param("agent_id"), r.Body()))
}

func (h handlers) listTasks(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return list(r, func(p store.Page) (*store.List[store.Task], error) {
		return h.s.Store.ListTasks(ctx, r.DeveloperID, r.Param("agent_id"), p)
	})
}

func (h handlers) getTask(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.GetTask(ctx, r.DeveloperID, r.Param("task_id")))
}

func (h handlers) updateTask(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.ReplaceTask(ctx, r.DeveloperID, r.Param("task_id"), r.Body()))
}

func (h handlers) patchTask(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.PatchTask(ctx, r.DeveloperID, r.Param("task_id"), r.Body()))
}

func (h handlers) deleteTask(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return noContent(h.s.DeleteTask(ctx, r.DeveloperID, r.Param("task_id")))
}

// DeleteTask deletes a task with its tools, and its state machine when it has workflows.
func (s *Service) DeleteTask(ctx context.Context, dev, id string) error {
	t, err := s.Store.GetTask(ctx, dev, id)
	if err != nil {
		return err
	}
	if err := s.Store.DeleteTask(ctx, dev, id); err != nil {
		return err
	}
	if len(t.Workflows) > 0 && s.Machines != nil {
		return s.Machines.Delete(ctx, id)
	}
	return nil
}
