package store

import (
	"context"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/tool"
)

// Task is a named toolset of an agent, with metadata and an optional prompt. Its tools
// are stored as tools owned by the task (ListTools with Owner{OwnerTask, id}).
type Task struct {
	ID           string         `json:"id"`
	AgentID      string         `json:"agent_id"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	InheritTools bool           `json:"inherit_tools"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	// Prompt is the optional prompt: messages, settings, auto_run_tools (free-form JSON).
	Prompt any `json:"prompt,omitempty"`
	// InputSchema is Julep's input_schema: a JSON Schema an execution's input must fit.
	InputSchema any `json:"input_schema,omitempty"`
	// Workflows are Julep's named workflows (main and others): each a list of steps, compiled to
	// the task's state machine (package taskflow).
	Workflows map[string]any `json:"workflows,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

func (t *Task) normalize() {
	t.Metadata, t.Prompt, t.InputSchema, t.Workflows = normMap(t.Metadata), normAny(t.Prompt), normAny(t.InputSchema), normMap(t.Workflows)
}
func (t *Task) metadata() *map[string]any { return &t.Metadata }
func (t *Task) stamp(c, u time.Time)      { t.CreatedAt, t.UpdatedAt = c, u }
func (t *Task) createdAt() time.Time      { return t.CreatedAt }
func taskKey(dev, id string) itemKey      { return ownerItem(dev, Owner{OwnerTask, id}) }

// refKey is the pointer in an agent's partition to one of its tasks or sessions, written in the
// same transaction as the record, so a delete of the agent finds them all with a consistent Query.
func refKey(dev, agentID string, kind OwnerKind, id string) itemKey {
	return itemKey{ownerPK(dev, Owner{OwnerAgent, agentID}), kind.prefix() + "REF#" + id}
}

func refPut(s *Store, k itemKey, kind OwnerKind, id string) txOp {
	item := k.av()
	item[attrKind], item["ref_id"] = str(string(kind)+"ref"), str(id)
	c, n, v := condNew()
	return txOp{putTx(s, item, c, n, v), fault.New(fault.Conflict, "%s %s exists", kind, id)}
}

// CreateTask stores a task of an agent with its tools, all in one transaction: the agent must
// exist, and tool names must be unique within the task (a duplicate is a Conflict naming it).
// A transaction holds at most 100 items: about 30 tools (each tool is its item, its name claim and
// its sealed setup); more is a TooLarge fault.
func (s *Store) CreateTask(ctx context.Context, dev, agentID string, t Task, tools []tool.Tool) (*Task, []tool.Tool, error) {
	if err := checkIDs(dev, "agent_id", agentID); err != nil {
		return nil, nil, err
	}
	if t.Name == "" {
		return nil, nil, fault.Invalid("name", "name is required")
	}
	// A given id (Julep's create_or_update) is kept; a task of that id already is a Conflict.
	if err := givenID(&t.ID, "task_id"); err != nil {
		return nil, nil, err
	}
	t.AgentID = agentID
	owner := Owner{OwnerTask, t.ID}
	var made []tool.Tool
	task, err := createRecord(ctx, s, dev, &t, taskKey(dev, t.ID), "task", OwnerTask, func(*Task) ([]txOp, map[string]types.AttributeValue, error) {
		ops := []txOp{
			{condLive(s, agentKey(dev, agentID)), notFound("agent", agentID)},
			refPut(s, refKey(dev, agentID, OwnerTask, t.ID), OwnerTask, t.ID),
		}
		names := map[string]int{}
		for i := range tools {
			field := "tools[" + strconv.Itoa(i) + "]."
			c, err := s.newTool(&tools[i], field)
			if err != nil {
				return nil, nil, err
			}
			if j, dup := names[c.Name]; dup {
				e := fault.New(fault.Conflict, "tools[%d] and tools[%d] are both named %s", j, i, c.Name)
				e.Field = field + "name"
				return nil, nil, e
			}
			names[c.Name] = i
			tops, err := s.toolOps(ctx, dev, owner, c, 1, nil, nil, field)
			if err != nil {
				return nil, nil, err
			}
			ops = append(ops, tops...)
			made = append(made, *c)
		}
		return ops, nil, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return task, made, nil
}

// GetTask reads a task.
func (s *Store) GetTask(ctx context.Context, dev, id string) (*Task, error) {
	if err := checkIDs(dev, "task_id", id); err != nil {
		return nil, err
	}
	o, err := readRecord[Task](ctx, s, taskKey(dev, id), "task", id)
	if err != nil {
		return nil, err
	}
	return o.rec, nil
}

// ListTasks lists an agent's tasks, in the order they were made: one Query of the agent's pointers
// and one BatchGetItem of the tasks (and the agent, so an unknown agent is NotFound).
func (s *Store) ListTasks(ctx context.Context, dev, agentID string, p Page) (*List[Task], error) {
	if err := checkIDs(dev, "agent_id", agentID); err != nil {
		return nil, err
	}
	return listByRef[Task](ctx, s, dev, agentID, OwnerTask, p, taskKey)
}

// UpdateTask applies mutate to a task; its id and agent stay.
func (s *Store) UpdateTask(ctx context.Context, dev, id string, mutate func(*Task) error) (*Task, error) {
	if err := checkIDs(dev, "task_id", id); err != nil {
		return nil, err
	}
	return updateRecord(ctx, s, dev, taskKey(dev, id), "task", id, OwnerTask, func(t *Task) error {
		agent := t.AgentID
		if err := mutate(t); err != nil {
			return err
		}
		if t.Name == "" {
			return fault.Invalid("name", "name is required")
		}
		t.ID, t.AgentID = id, agent
		return nil
	}, nil)
}

// DeleteTask deletes a task with its tools.
func (s *Store) DeleteTask(ctx context.Context, dev, id string) error {
	if err := checkIDs(dev, "task_id", id); err != nil {
		return err
	}
	return s.deleteOwner(ctx, dev, Owner{OwnerTask, id})
}

// listByRef is one page of an agent's tasks or sessions, through its pointers.
func listByRef[T any, P interface {
	*T
	record
}](ctx context.Context, s *Store, dev, agentID string, kind OwnerKind, p Page, key func(dev, id string) itemKey) (*List[T], error) {
	refs, next, err := s.queryPage(ctx, pageQuery{part: ownerPK(dev, Owner{OwnerAgent, agentID}), prefix: kind.prefix() + "REF#", forward: true}, p, string(kind)+"s")
	if err != nil {
		return nil, err
	}
	keys := []itemKey{agentKey(dev, agentID)}
	for _, r := range refs {
		keys = append(keys, key(dev, getS(r, "ref_id")))
	}
	got, err := s.batchGet(ctx, keys, "", nil)
	if err != nil {
		return nil, err
	}
	if it := got[keys[0]]; it == nil || getBool(it, attrDeleting) {
		return nil, notFound("agent", agentID)
	}
	out := &List[T]{Items: make([]T, 0, len(refs)), NextCursor: next}
	for _, k := range keys[1:] {
		it := got[k]
		if it == nil || getBool(it, attrDeleting) {
			continue // being deleted, or deleted while its pointer is still there
		}
		o, err := decodeRecord[T, P](it, string(kind), getID(k))
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *o.rec)
	}
	return out, nil
}
