package workflow

import (
	"encoding/json"

	"sinew/internal/merge"
	"sinew/internal/tool"
)

// Workflow names, as recorded on executions.
const (
	ToolCall  = "tool_call"
	AgentLoop = "agent_loop"
	// Task is a Julep task's execution: its own state machine, compiled from its workflows.
	Task = "task"
)

// Context is the context every executor receives. Ids a call does not
// use are null in JSON.
type Context struct {
	DeveloperID string `json:"developer_id"`
	AgentID     string `json:"agent_id"`
	TaskID      string `json:"task_id"`
	SessionID   string `json:"session_id"`
	ExecutionID string `json:"execution_id"`
	Depth       int    `json:"depth"`
	// TurnID names the chat turn whose budget of tool calls the call draws on, shared with the
	// chats it starts (package loop); absent outside a chat turn.
	TurnID string `json:"turn_id,omitempty"`
	// Metadata is what the merge reads of the owners for an integration or api_call call, as its
	// preparation read it: absent when the merge needs a sealed value, which only the executor reads.
	Metadata *Metadata `json:"metadata,omitempty"`
}

// Metadata is the agent's and the task's or session's metadata entries for a call's tool (package
// merge), when none holds a sealed value: its executor merges from them and reads nothing before
// the call runs. It is never a secret: setup entries appear only empty.
type Metadata struct {
	Agent merge.Entries `json:"agent"`
	Scope merge.Entries `json:"scope,omitempty"`
}

// Sources is the merge's sources m gives: a stored setup's are never among them.
func (m *Metadata) Sources() *merge.Sources { return &merge.Sources{Agent: m.Agent, Scope: m.Scope} }

// MarshalJSON writes unused ids as null, so every key is present; turn_id, which only a chat's
// calls carry, and metadata are left out when there is none.
func (c Context) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"developer_id": nullable(c.DeveloperID), "agent_id": nullable(c.AgentID), "task_id": nullable(c.TaskID),
		"session_id": nullable(c.SessionID), "execution_id": nullable(c.ExecutionID), "depth": c.Depth,
	}
	if c.TurnID != "" {
		m["turn_id"] = c.TurnID
	}
	if c.Metadata != nil {
		m["metadata"] = c.Metadata
	}
	return json.Marshal(m)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// PrepareInput is the tool_call input plus the execution's name. Null ids decode
// as "".
type PrepareInput struct {
	DeveloperID string `json:"developer_id"`
	AgentID     string `json:"agent_id"`
	TaskID      string `json:"task_id"`
	SessionID   string `json:"session_id"`
	Tool        string `json:"tool"`
	Arguments   any    `json:"arguments"`
	ExecutionID string `json:"execution_id"`
	// TaskToken: Dispatch of tool_call's definitions before Prepared (v4, v5) invoked Prepare with its
	// token and the request, so the call goes on to its executor, which answers the token; without
	// one (Prepare's own state), Prepare answers the envelope.
	TaskToken string `json:"task_token,omitempty"`
	// ErrorResult: the Prepare state reads a request's own fault as {error} (Prepared, since v6), so
	// prepare fails its invocation only on a fault; earlier Prepare states catch it as the error.
	ErrorResult bool `json:"error_result,omitempty"`
}

// Wait is how long a function call's Task waits for the client: TimeoutSeconds always set for a
// function call, HeartbeatSeconds only when the tool asks for heartbeats. Both are null for the
// other types (the state machine only reads them on the function path).
type Wait struct {
	TimeoutSeconds   *int64 `json:"timeout_seconds"`
	HeartbeatSeconds *int64 `json:"heartbeat_seconds"`
}

// Prepared is Prepare's answer: the call envelope, the tool without setup, the context and the
// wait settings.
type Prepared struct {
	Call    tool.Call `json:"call"`
	Tool    tool.Tool `json:"tool"`
	Context Context   `json:"context"`
	Wait    Wait      `json:"wait"`
	// Result is the result object less its output ({id, type, name}), which the Task's answer
	// completes.
	Result CallResult `json:"result"`
}

// CallResult is a result object less its output and error.
type CallResult struct {
	ID   string    `json:"id"`
	Type tool.Type `json:"type"`
	Name string    `json:"name"`
}

// StatesError is a caught error as Step Functions puts it in the state: {Error, Cause}.
type StatesError struct {
	Error string `json:"Error"`
	Cause string `json:"Cause"`
}

// TaskResult is a successful Task's result as the state machine keeps it: {output}.
type TaskResult struct {
	Output any `json:"output"`
}

// Outcome is what the state machine's Settle step sends: the call and exactly one of result and
// error. A request that named only the tool and failed in Dispatch has no call yet: Request is
// that request, from which Settle builds the call again.
type Outcome struct {
	Call    tool.Call     `json:"call"`
	Tool    *tool.Tool    `json:"tool"`
	Context Context       `json:"context"`
	Request *PrepareInput `json:"request,omitempty"`
	Result  *TaskResult   `json:"result"`
	Error   *StatesError  `json:"error"`
}

// ResultObject is a call's result as the executors return it, for JSON: output is present (even
// null) on success, error on failure.
func ResultObject(r tool.Result) map[string]any {
	m := map[string]any{"id": r.ID, "type": string(r.Type), "name": r.Name}
	if r.Error != nil {
		m["error"] = map[string]any{"type": r.Error.Type, "message": r.Error.Message}
	} else {
		m["output"] = r.Output
	}
	return m
}
