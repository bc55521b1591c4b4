package workflow

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Service is the workflow's domain logic over the store and the AWS ports. Fields that a use does
// not need may be nil (Prepare needs only Store).
type Service struct {
	Store *store.Store
	SFN   SFN // the resume routes, cancel and POST /tool-calls
	// ToolCallARN and AgentLoopARN are the state machines' ARNs (SINEW_TOOL_CALL_ARN, ...).
	ToolCallARN, AgentLoopARN string
	// TaskMachineARN is the ARN of a Julep task's state machine (nil: none is known), for the
	// executions of Task.
	TaskMachineARN func(taskID string) (string, error)
	// ToolCallExpressARN is tool_call_express's ARN: "" runs every call on tool_call.
	ToolCallExpressARN string
	// SyncWait bounds how long a call on tool_call_express is waited for (DefaultSyncWait if 0).
	SyncWait time.Duration
	Log      *slog.Logger
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// CallIDFor is the call id of a tool_call execution: derived from the developer and the execution's
// name, so a Prepare that runs again (a retry, a redrive) builds the same envelope, and the
// executors' idempotency by call id holds across it. It has NewCallID's shape.
func CallIDFor(dev, execID string) string {
	h := sha256.Sum256([]byte("sinew/tool_call\x00" + dev + "\x00" + execID))
	return "call_" + base64.RawURLEncoding.EncodeToString(h[:18])
}

// Prepare is tool_call's first state: it records the execution (so executions started
// directly with StartExecution are seen by the routes), checks the request, finds the tool (the
// task's tools first, the agent's after them when the task has inherit_tools; without a task the
// agent's) and builds the envelope with a snapshot of the tool without its setup. A request that
// cannot become a call marks the execution failed and returns the typed error, which fails the
// execution with a clear cause.
//
// With the token of Dispatch of tool_call's definitions before Prepared (v4, v5), Prepare writes
// nothing unless the request is at fault. A server-side call is recorded by the executor Prepare
// hands it to: its claim on the call is one UpdateItem that makes the record as Prepare's would
// (the same seed, first state marked); should the executor never be reached, Settle records the
// execution with its failure. A function call is recorded by the Prepare state that
// Sinew.WaitForClient leads to.
func (s *Service) Prepare(ctx context.Context, in PrepareInput) (*Prepared, error) {
	if in.DeveloperID == "" {
		return nil, fault.Invalid("developer_id", "developer_id is required")
	}
	if in.ExecutionID == "" {
		return nil, fault.Invalid("execution_id", "execution_id is required (the state machine passes $$.Execution.Name)")
	}
	p, perr := s.prepare(ctx, in)
	if perr == nil && in.TaskToken != "" {
		return p, nil
	}
	// POST /tool-calls recorded the execution before starting it; a direct StartExecution did not.
	// EnsureExecution covers both in one write, and marks that the execution did start.
	x, err := s.Store.EnsureExecution(ctx, in.DeveloperID, s.execution(in))
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", in.ExecutionID, err)
	}
	if x.Status.Final() && in.TaskToken == "" {
		// A Prepare run again after the execution was settled (a redrive): nothing may reopen it.
		// With Dispatch's token it runs again when its answer was lost after the executor recorded
		// the outcome, and the executor it hands the call to answers what it recorded.
		return nil, fault.New(fault.Conflict, "execution %s has already ended (%s)", in.ExecutionID, x.Status)
	}
	if perr != nil {
		if RequestFault(perr) {
			// The request itself is at fault: no retry will help, so the record says so now.
			errObj := map[string]any{"type": string(fault.KindOf(perr)), "message": fault.Message(perr)}
			if _, _, serr := s.Store.SetExecutionStatus(ctx, in.DeveloperID, in.ExecutionID, store.ExecFailed, nil, errObj); serr != nil {
				s.log().WarnContext(ctx, "prepare: recording the failure", "execution_id", in.ExecutionID, "error", serr)
			}
		}
		return nil, perr
	}
	return p, nil
}

// execution is the record of in's execution, as its first state makes it.
func (s *Service) execution(in PrepareInput) store.Execution {
	return store.Execution{ExecutionID: in.ExecutionID, Workflow: ToolCall, AgentID: in.AgentID, TaskID: in.TaskID, SessionID: in.SessionID}
}

// RequestFault reports whether Prepare's err is the request's own fault (an unknown tool, bad
// arguments, an ended execution), which no retry mends, rather than a fault of sinew or AWS.
func RequestFault(err error) bool {
	k := fault.KindOf(err)
	return err != nil && k != fault.Transient && k != fault.Timeout && k != fault.Internal
}

// ErrPrepare is what prepare answers the token of tool_call's Dispatch with (SendTaskFailure, not
// a Lambda error) for a request that names only the tool: Dispatch's Catch sends the execution to
// the Prepare state, and Prepared to the state that invokes the call's function, so prepare hands
// nothing on and waits on nothing.
const ErrPrepare = "Sinew.Prepare"

// ErrWaitForClient is the error Prepare failed Dispatch's invocation with, in tool_call's
// definitions before Prepared (v4, v5), for a function call that a request naming only the tool
// asked for: its wait needs the tool's own timeout, which Dispatch could not know, so their Catch
// sends it on to the Prepare and Function states.
const ErrWaitForClient = "Sinew.WaitForClient"

func (s *Service) prepare(ctx context.Context, in PrepareInput) (*Prepared, error) {
	args, err := CheckRequest(in.AgentID, in.TaskID, in.SessionID, in.Tool, in.Arguments)
	if err != nil {
		return nil, err
	}
	found, err := s.Store.FindCallTool(ctx, in.DeveloperID, in.AgentID, in.TaskID, in.SessionID, in.Tool)
	if err != nil {
		if fault.Is(err, fault.NotFound) && fault.Message(err) == "no tool named "+in.Tool {
			where := "agent " + in.AgentID
			if in.TaskID != "" {
				where = "task " + in.TaskID + " (and, with inherit_tools, its agent)"
			}
			return nil, &fault.Error{Kind: fault.NotFound, Field: "tool", Msg: fmt.Sprintf("%s has no tool named %s", where, in.Tool)}
		}
		return nil, err
	}
	t := Snapshot(&found.Tool)
	wait, err := WaitOf(t)
	if err != nil {
		return nil, err
	}
	call := tool.NewCall(t, CallIDFor(in.DeveloperID, in.ExecutionID), args)
	c := Context{DeveloperID: in.DeveloperID, AgentID: in.AgentID, TaskID: in.TaskID, SessionID: in.SessionID, ExecutionID: in.ExecutionID}
	// The executors that merge take what this read found, so a call reads the owners once.
	if src := found.Plain; src != nil && (t.Type == tool.TypeIntegration || t.Type == tool.TypeAPICall) {
		c.Metadata = &Metadata{Agent: src.Agent, Scope: src.Scope}
	}
	return &Prepared{
		Call:    call,
		Tool:    *t,
		Context: c,
		Wait:    wait,
		Result:  CallResult{ID: call.ID, Type: call.Type, Name: tool.ResultOf(&call, nil).Name},
	}, nil
}

// CheckRequest checks a tool call request (the tool_call input, POST /tool-calls): agent_id is
// required, at most one of task_id and session_id, tool a tool name, arguments an object or null.
// It answers the arguments as an object.
func CheckRequest(agentID, taskID, sessionID, toolName string, arguments any) (map[string]any, error) {
	if agentID == "" {
		return nil, fault.Invalid("agent_id", "agent_id is required: a tool call runs for an agent")
	}
	if taskID != "" && sessionID != "" {
		return nil, fault.Invalid("session_id", "a call names at most one of task_id and session_id, not both")
	}
	if toolName == "" {
		return nil, fault.Invalid("tool", "tool is required: the name of one of the agent's or task's tools")
	}
	if !tool.ValidName(toolName) {
		return nil, fault.Invalid("tool", "tool %q is not a tool name (^[A-Za-z_][A-Za-z0-9_]{0,39}$)", toolName)
	}
	switch a := arguments.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return jsonv.Normalize(a).(map[string]any), nil
	default:
		return nil, fault.Invalid("arguments", "arguments must be an object (or null), not %s", jsonv.TypeName(jsonv.Normalize(a)))
	}
}

// Snapshot is a copy of t without its integration setup: the executors never see
// setup in an envelope; the integration executor reads the stored one itself.
func Snapshot(t *tool.Tool) *tool.Tool {
	c := *t
	if t.Integration != nil {
		i := *t.Integration
		i.Setup = nil
		c.Integration = &i
	}
	return &c
}

// WaitOf gives a tool's wait settings: for a function tool its timeout_seconds (default 31 days)
// and heartbeat_seconds, which Step Functions requires to be under the timeout.
func WaitOf(t *tool.Tool) (Wait, error) {
	if t.Type != tool.TypeFunction || t.Function == nil {
		return Wait{}, nil
	}
	timeout := tool.DefaultFunctionTimeoutSeconds
	if t.Function.TimeoutSeconds != nil {
		timeout = *t.Function.TimeoutSeconds
	}
	if timeout < 1 || timeout > tool.MaxFunctionTimeoutSeconds {
		return Wait{}, fault.Invalid("function.timeout_seconds", "function.timeout_seconds must be from 1 to %d", tool.MaxFunctionTimeoutSeconds)
	}
	w := Wait{TimeoutSeconds: &timeout}
	if hb := t.Function.HeartbeatSeconds; hb != nil {
		if *hb < 1 || *hb >= timeout {
			return Wait{}, fault.Invalid("function.heartbeat_seconds", "function.heartbeat_seconds must be at least 1 and less than timeout_seconds (%d)", timeout)
		}
		v := *hb
		w.HeartbeatSeconds = &v
	}
	return w, nil
}
