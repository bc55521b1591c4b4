package agentloop

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// Starter starts agent_loop executions: the chat's hand-off, POST /tasks/{task_id}/executions,
// and system task.execution.create.
type Starter struct {
	Store *store.Store
	SFN   workflow.ExecutionStarter
	ARN   string // SINEW_AGENT_LOOP_ARN
}

// Start starts an execution named name (a fresh UUIDv7 when ""). Messages are stored by reference
// when large. A name already taken (an Idempotency-Key's repeat) answers that execution.
func (s *Starter) Start(ctx context.Context, name string, in Input, messages []llm.Message) (*workflow.Started, error) {
	if s.SFN == nil || s.ARN == "" {
		return nil, fault.New(fault.Internal, "the agent_loop state machine is not configured (SINEW_AGENT_LOOP_ARN)")
	}
	if name == "" {
		name = uuid.Must(uuid.NewV7()).String()
	}
	var msgs any
	if err := jsonv.Convert(messages, &msgs); err != nil {
		return nil, fmt.Errorf("agent_loop: encoding the messages: %w", err)
	}
	ref, err := s.Store.StoreValue(ctx, in.DeveloperID, msgs, workflow.PayloadTTL)
	if err != nil {
		return nil, fmt.Errorf("agent_loop: storing the messages: %w", err)
	}
	in.Messages = ref
	if in.Tools != nil {
		if in.Tools, err = s.Store.StoreValue(ctx, in.DeveloperID, in.Tools, workflow.PayloadTTL); err != nil {
			return nil, fmt.Errorf("agent_loop: storing the tools: %w", err)
		}
	}
	if in.Turn != nil {
		if in.Turn, err = s.Store.StoreValue(ctx, in.DeveloperID, in.Turn, workflow.PayloadTTL); err != nil {
			return nil, fmt.Errorf("agent_loop: storing the turn: %w", err)
		}
	}
	body, err := jsonv.Encode(in)
	if err != nil {
		return nil, fmt.Errorf("agent_loop: encoding the input: %w", err)
	}
	st, _, err := workflow.StartExecution(ctx, s.SFN, s.Store, in.DeveloperID, s.ARN, name, body, workflow.AgentLoop)
	return st, err
}

// TaskPrompt is a task's optional prompt (free-form JSON in the store).
type TaskPrompt struct {
	Messages     []llm.Message  `json:"messages"`
	Settings     map[string]any `json:"settings"`
	AutoRunTools *bool          `json:"auto_run_tools"`
}

// StartTask starts agent_loop over a task's prompt and tools, input appended as the user's message
// (POST /tasks/{task_id}/executions). idemKey names the execution; turnID is the chat turn that
// started it through a system tool ("" for none), whose budget of tool calls it shares.
func (s *Starter) StartTask(ctx context.Context, dev, taskID string, input any, idemKey string, depth int, turnID string) (*workflow.Started, error) {
	task, err := s.Store.GetTask(ctx, dev, taskID)
	if err != nil {
		return nil, err
	}
	var p TaskPrompt
	if task.Prompt != nil {
		if err := jsonv.Convert(task.Prompt, &p); err != nil {
			return nil, fault.Invalid("prompt", "the task's prompt is not {messages, settings, auto_run_tools}: %v", err)
		}
	}
	msgs := append([]llm.Message{}, p.Messages...)
	if input != nil {
		text, ok := input.(string)
		if !ok {
			text = jsonv.EncodeString(input)
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: text})
	}
	if len(msgs) == 0 {
		return nil, fault.Invalid("input", "the task has no prompt messages, so input is required: it becomes the user's message")
	}
	name := ""
	if idemKey != "" {
		name = workflow.IdempotentName(dev, "POST /tasks/"+taskID+"/executions", idemKey)
	}
	tid := task.ID
	return s.Start(ctx, name, Input{DeveloperID: dev, AgentID: task.AgentID, TaskID: &tid, Settings: p.Settings,
		AutoRunTools: p.AutoRunTools, Depth: depth, TurnID: turnID}, msgs)
}
