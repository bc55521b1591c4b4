package system

import (
	"context"
)

// Context is the caller's context of a call: the developer the call runs
// for, where it comes from, and how deep in chats through system tools it is.
type Context struct {
	DeveloperID string `json:"developer_id"`
	AgentID     string `json:"agent_id,omitempty"`
	TaskID      string `json:"task_id,omitempty"`
	SessionID   string `json:"session_id,omitempty"`
	ExecutionID string `json:"execution_id,omitempty"`
	Depth       int    `json:"depth"`
	// TurnID is the chat turn the call belongs to: session.chat shares its budget of tool calls.
	TurnID string `json:"turn_id,omitempty"`
}

// ExecutionStarter starts an agent_loop execution of a task (POST /tasks/{task_id}/executions),
// answering what that route answers ({execution_id, status}). The chat item implements it.
type ExecutionStarter interface {
	StartTaskExecution(ctx context.Context, cc Context, taskID string, input any) (any, error)
}

// Chatter runs a chat in a session (POST /sessions/{session_id}/chat) with the request body req,
// answering what that route answers. cc.Depth is already one deeper than the caller's. The chat
// item implements it.
type Chatter interface {
	Chat(ctx context.Context, cc Context, sessionID string, req map[string]any) (any, error)
}

// DefaultMaxDepth bounds chats through system tools: a chat at depth 3 may not start another.
const DefaultMaxDepth = 3
