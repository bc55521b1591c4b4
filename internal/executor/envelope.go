package executor

import (
	"sinew/internal/fault"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Envelope is what every executor receives, and what tool_call's Dispatch sends whichever
// function it invokes: {call, tool, context}, plus
//   - task_token: the token of the Task that waits for the call. A server-side executor given one
//     runs a tool_call execution's call: it keeps the call's claim and outcome on the execution's
//     record (CallRecords) and answers the token with the result object. The function executor
//     records it for the client. Without one (the chat path, agent_loop) the claim lives in an
//     idempotency record and the result object is the invocation's answer.
//   - error_result: without a token, answer a tool's failure as the error result (see ErrorResult).
//   - held: the claim was made for this invocation when the call was started (the first attempt
//     of an execution POST /tool-calls started), so the executor does not write it again.
//   - request: a tool_call request naming only the tool, with no call yet (call, tool and context
//     null), which only prepare takes, from tool_call v5's Dispatch: it makes the call and hands it
//     on with the token. Since v6 Dispatch sends prepare no request: prepare answers the token with
//     Sinew.Prepare, and the Prepare state makes the call.
type Envelope struct {
	Call      tool.Call              `json:"call"`
	Tool      *tool.Tool             `json:"tool"`
	Context   workflow.Context       `json:"context"`
	Request   *workflow.PrepareInput `json:"request,omitempty"`
	TaskToken string                 `json:"task_token,omitempty"`
	Held      bool                   `json:"held,omitempty"`

	// Record and WholeResult come only from tool_call's earlier definitions, whose executions
	// may still be running: record without a token (their synchronous Execute) keeps the claim on
	// the execution's record and answers the result object; a token with record but not
	// whole_result (their JSONPath Dispatch, which places the output itself) is answered with the
	// bare output.
	Record      bool `json:"record,omitempty"`
	WholeResult bool `json:"whole_result,omitempty"`

	// ErrorResult: the caller, holding no token, reads a tool's failure in the result object
	// ({id, type, name, error}) the invocation answers: agent_loop's per-type Tasks and the chat
	// path (package dispatch) send it. The invocation then fails only on a fault: Sinew.Transient,
	// which they retry, or sinew's own, so a Lambda error means a fault. agent_loop's definitions
	// before it, whose executions may still be running, read a tool's failure as the invocation's
	// error, and get it so.
	ErrorResult bool `json:"error_result,omitempty"`
}

// onRecord: the call's claim and outcome live on its tool_call execution's record.
func (in Envelope) onRecord() bool { return in.TaskToken != "" || in.Record }

// answersWhole: the token is answered with the result object, not the bare output.
func (in Envelope) answersWhole() bool { return in.WholeResult || !in.Record }

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
