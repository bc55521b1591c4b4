package executor

import (
	"sinew/internal/fault"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Envelope is what the executors receive: {call, tool, context}, plus the task token for the
// function executor.
type Envelope struct {
	Call      tool.Call        `json:"call"`
	Tool      *tool.Tool       `json:"tool"`
	Context   workflow.Context `json:"context"`
	TaskToken string           `json:"task_token,omitempty"`
	// Record: the call's claim and outcome live on its execution's record (CallRecords), and
	// the executor records the outcome itself; tool_call's definition asks for it. Without it
	// (the chat path, executions started on an older definition) they live in idempotency
	// records and the settle step records the outcome.
	Record bool `json:"record,omitempty"`
	// Held: the claim was made for this invocation when the call was started (the first attempt
	// of an execution POST /tool-calls started), so the executor does not write it again.
	Held bool `json:"held,omitempty"`
	// WholeResult: the token is answered with the result object, not the bare output; tool_call's
	// Dispatch has no Output of its own to put the output in it.
	WholeResult bool `json:"whole_result,omitempty"`
}

// CheckEnvelope checks what every executor needs of its event: a valid call of type typ, the
// tool's definition under the same name, and the caller's context.
func CheckEnvelope(in Envelope, typ tool.Type, hasDef bool) error {
	if err := in.Call.Validate(); err != nil {
		return err
	}
	if in.Call.Type != typ {
		return fault.Invalid("call.type", "the %s executor runs %s calls, not %s", typ, typ, in.Call.Type)
	}
	if in.Tool == nil || !hasDef {
		return fault.Invalid("tool."+string(typ), "tool.%s is required: the tool's definition", typ)
	}
	if in.Tool.Name != in.Call.Name() {
		return fault.Invalid("tool.name", "tool.name %q does not match call.%s.name %q", in.Tool.Name, typ, in.Call.Name())
	}
	if in.Context.DeveloperID == "" || in.Context.AgentID == "" {
		return fault.Invalid("context", "context.developer_id and context.agent_id are required")
	}
	return nil
}
