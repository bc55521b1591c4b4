package resources

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// TaskMachines compiles a task's workflows (Julep's main and other named lists of steps) and keeps
// the task's state machine in step with them (package julep/taskmachine).
type TaskMachines interface {
	// Compile checks that the workflows compile, given the task's own tools and, with
	// inherit_tools, its agent's: a *fault.Error (InvalidInput) naming the step and the expression
	// when they do not.
	Compile(t *store.Task, tools, inherited []tool.Tool) ([]byte, error)
	// Save creates the task's state machine with def, or updates it in place.
	Save(ctx context.Context, taskID string, def []byte) error
	// Create creates the task's state machine with def; one that exists is a Conflict.
	Create(ctx context.Context, taskID string, def []byte) error
	// Delete deletes the task's state machine, if there is one.
	Delete(ctx context.Context, taskID string) error
}

// taskFields are the fields of TaskInput: any other key whose value is a list is a workflow.
var taskFields = map[string]bool{"name": true, "description": true, "tools": true, "inherit_tools": true,
	"metadata": true, "prompt": true, "input_schema": true, "canonical_name": true}

// taskPlain is TaskInput without its JSON methods.
type taskPlain TaskInput

// UnmarshalJSON reads Julep's CreateTaskRequest as well as sinew's own shape: a key that is not a
// field and holds a list is a named workflow (main, and any other), decoded as given.
func (in *TaskInput) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	var wfs map[string]any
	for k, v := range raw {
		if taskFields[k] || !bytes.HasPrefix(bytes.TrimSpace(v), []byte("[")) {
			continue
		}
		steps, err := jsonv.Decode(v)
		if err != nil {
			return fault.Invalid(k, "%s is not a list of steps: %v", k, err)
		}
		if wfs == nil {
			wfs = map[string]any{}
		}
		wfs[k] = steps
		delete(raw, k)
	}
	rest, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	if err := httpapi.DecodeJSON(rest, (*taskPlain)(in)); err != nil {
		return err
	}
	in.Workflows = wfs
	return nil
}

// MarshalJSON writes the workflows beside the fields, as Julep's task has them.
func (in TaskInput) MarshalJSON() ([]byte, error) {
	return flatten(taskPlain(in), in.Workflows)
}

// MarshalJSON answers a task as Julep's Task: its workflows (main, ...) beside its fields.
func (v TaskView) MarshalJSON() ([]byte, error) {
	type plain TaskView
	return flatten(plain(v), v.Workflows)
}

func flatten(v any, wfs map[string]any) ([]byte, error) {
	m, err := toValue(v)
	if err != nil {
		return nil, err
	}
	delete(m, "workflows")
	names := make([]string, 0, len(wfs))
	for k := range wfs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if _, clash := m[k]; !clash {
			m[k] = wfs[k]
		}
	}
	return json.Marshal(m)
}

func (in *TaskInput) checkWorkflows() error {
	for k := range in.Workflows {
		if err := checkText("workflow name", k, true, maxName); err != nil {
			return err
		}
	}
	if len(in.Workflows) > 0 && in.Workflows["main"] == nil {
		return fault.Invalid("main", "a task with workflows needs main: the list of steps an execution runs")
	}
	if in.InputSchema != nil {
		if _, ok := in.InputSchema.(map[string]any); !ok {
			return fault.Invalid("input_schema", "input_schema must be a JSON Schema object")
		}
	}
	return nil
}

// compileTask compiles a task's workflows (nil when it has none) before it is stored, so a task
// that cannot run is refused with a 400 naming its step.
func (s *Service) compileTask(ctx context.Context, dev string, t *store.Task, tools []tool.Tool) ([]byte, error) {
	if len(t.Workflows) == 0 {
		return nil, nil
	}
	if s.Machines == nil {
		return nil, fault.Invalid("main", "tasks with workflows are not available here: create them through the HTTP API")
	}
	var inherited []tool.Tool
	if t.InheritTools {
		// A prompt step's list of tools may name the agent's.
		var err error
		if inherited, err = s.Store.AgentTools(ctx, dev, t.AgentID); err != nil {
			return nil, err
		}
	}
	return s.Machines.Compile(t, tools, inherited)
}

// saveMachine creates or updates the task's state machine once the task is stored. Without
// workflows, a machine left from earlier ones is deleted.
func (s *Service) saveMachine(ctx context.Context, t *store.Task, def []byte) error {
	if s.Machines == nil {
		return nil
	}
	if def == nil {
		return s.Machines.Delete(ctx, t.ID)
	}
	return s.Machines.Save(ctx, t.ID, def)
}

// toolsChanged recompiles the task's machine after its tools changed.
func (s *Service) toolsChanged(ctx context.Context, dev, taskID string) error {
	t, err := s.Store.GetTask(ctx, dev, taskID)
	if err != nil {
		return err
	}
	return s.recompile(ctx, dev, t)
}

// recompile compiles a stored task again with its tools as they are now, and saves its machine:
// after a change of its tools.
func (s *Service) recompile(ctx context.Context, dev string, t *store.Task) error {
	if s.Machines == nil || len(t.Workflows) == 0 {
		return nil
	}
	v, err := s.view(ctx, dev, t)
	if err != nil {
		return err
	}
	def, err := s.compileTask(ctx, dev, t, v.Tools)
	if err != nil {
		return err
	}
	return s.saveMachine(ctx, t, def)
}
