package workflow

import (
	"context"
	"fmt"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/google/uuid"

	"sinew/internal/executor/guard"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// StartToolCall starts a tool_call execution for the caller. It finds the tool (one
// BatchGetItem, which also checks that the agent, task and session are the caller's), builds the
// call's envelope, starts the execution with it, so the state machine goes straight to the
// executor of the call's type, and then records the execution (one UpdateItem): started first,
// so no record ever waits on an execution that never started; recorded idempotently, so an
// executor that wrote first keeps what it wrote. For a server-side call the record also holds the
// call's claim for the executor's first attempt, which then writes only the outcome. With an
// idempotency key, a repeat (running or ended) answers the same execution.
func (s *Service) StartToolCall(ctx context.Context, dev string, req ToolCallRequest, idemKey string) (*Started, error) {
	return s.CallTool(ctx, dev, req, StartOptions{IdempotencyKey: idemKey})
}

// CallTool is StartToolCall with options. A server-side call that fits an Express execution runs
// on tool_call_express, started synchronously: when it ends within the route's wait, Started.Ended
// is its record (POST /tool-calls answers 200 with it); else it answers the execution to poll.
// Every other call, or one asked for with Async, starts on tool_call.
func (s *Service) CallTool(ctx context.Context, dev string, req ToolCallRequest, o StartOptions) (*Started, error) {
	if _, err := CheckRequest(req.AgentID, req.TaskID, req.SessionID, req.Tool, req.Arguments); err != nil {
		return nil, err
	}
	for field, id := range map[string]string{"agent_id": req.AgentID, "task_id": req.TaskID, "session_id": req.SessionID} {
		if _, err := uuid.Parse(id); id != "" && (err != nil || len(id) != 36) {
			return nil, fault.Invalid(field, "%s must be a UUID", field)
		}
	}
	if s.ToolCallARN == "" {
		return nil, fault.New(fault.Internal, "the tool_call state machine's ARN is not configured")
	}
	name := uuid.Must(uuid.NewV7()).String()
	if o.IdempotencyKey != "" {
		name = IdempotentName(dev, "POST /tool-calls", o.IdempotencyKey)
	}
	p, err := s.prepare(ctx, PrepareInput{DeveloperID: dev, AgentID: req.AgentID, TaskID: req.TaskID, SessionID: req.SessionID,
		Tool: req.Tool, Arguments: req.Arguments, ExecutionID: name})
	if err != nil {
		return nil, err
	}
	ss, express := s.express(p, o)
	// The route's record holds the executor's first claim (on tool_call written after the start,
	// on tool_call_express only if the wait runs out): the name is new. A keyed call's executor
	// claims for itself when tool_call_express is deployed: Step Functions keeps Express names
	// apart from Standard ones and unchecked, so a start is no proof that a keyed call is new.
	held := p.Call.Type != tool.TypeFunction && (o.IdempotencyKey == "" || s.ToolCallExpressARN == "")
	record := func(ctx context.Context) (*store.Execution, error) {
		var claim any
		if held {
			claim = guard.Running(guard.What(p.Call), time.Now().Add(guard.DefaultLease))
		}
		return s.Store.RecordExecution(ctx, dev, store.Execution{ExecutionID: name, Workflow: ToolCall,
			AgentID: req.AgentID, TaskID: req.TaskID, SessionID: req.SessionID}, claim)
	}
	input, err := jsonv.Encode(StartInput{DeveloperID: dev, AgentID: nullable(req.AgentID), TaskID: nullable(req.TaskID),
		SessionID: nullable(req.SessionID), Tool: req.Tool, Call: &p.Call, Definition: &p.Tool, Context: &p.Context, Wait: &p.Wait, Held: held,
		Result: map[string]any{"id": p.Call.ID, "type": p.Call.Type, "name": p.Tool.Name}})
	if err != nil {
		return nil, fault.Invalid("arguments", "arguments cannot be written as JSON")
	}
	if len(input) > maxExecutionInput {
		return nil, &fault.Error{Kind: fault.TooLarge, Field: "arguments",
			Msg: fmt.Sprintf("the call is %d bytes as JSON, over Step Functions' 256 KiB input limit: send smaller arguments", len(input))}
	}
	if express {
		if !held {
			record = nil // the executor's claim makes the record
		}
		return s.startExpress(ctx, ss, dev, name, input, o, record)
	}
	st, again, err := StartExecution(ctx, s.SFN, s.Store, dev, s.ToolCallARN, name, input, ToolCall)
	if err != nil || again {
		return st, err
	}
	x, err := record(ctx)
	if err != nil {
		// The execution runs, and its executor records it: the call has started.
		s.log().WarnContext(ctx, "started a tool call but could not record it; its executor will", "execution_id", name, "error", err)
		return &Started{ExecutionID: name, Status: store.ExecRunning}, nil
	}
	return &Started{ExecutionID: name, Status: x.Status}, nil
}

// StartExecution starts dev's execution named name of the state machine arn, of the workflow wf
// (ToolCall, AgentLoop), with input. A name already taken is a repeat of the start: an
// Idempotency-Key's, or the SDK's retry of a start whose answer was lost (Step Functions answers a
// repeat of a running execution's name and input with that execution, and ExecutionAlreadyExists
// once it has ended or for another input). A repeat answers the first start's execution, with its
// recorded status (running until its executor records it), and again true.
func StartExecution(ctx context.Context, c ExecutionStarter, records *store.Store, dev, arn, name string, input []byte, wf string) (st *Started, again bool, err error) {
	_, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: &arn, Name: &name, Input: awsv2.String(string(input))})
	if err == nil {
		return &Started{ExecutionID: name, Status: store.ExecRunning}, false, nil
	}
	if fault.AWSCode(err) == "ExecutionAlreadyExists" {
		x, gerr := records.GetExecution(ctx, dev, name)
		if fault.Is(gerr, fault.NotFound) {
			return &Started{ExecutionID: name, Status: store.ExecRunning}, true, nil
		}
		if gerr != nil {
			return nil, true, gerr
		}
		return &Started{ExecutionID: name, Status: x.Status}, true, nil
	}
	return nil, false, startErr(err, wf)
}

// startErr is a start's AWS error as the caller's: a limit is transient, a refused input the
// caller's own.
func startErr(err error, wf string) error {
	switch fault.AWSCode(err) {
	case "ExecutionLimitExceeded":
		return fault.Wrap(fault.Transient, err, "start the %s execution: the account's limit of open executions is reached; try again once some have ended", wf)
	case "InvalidExecutionInput":
		return fault.Wrap(fault.InvalidInput, err, "Step Functions refused the %s execution's input: %s", wf, awsMessage(err))
	}
	return fault.FromAWS(err, "start the "+wf+" execution")
}

// StartInput is tool_call's input. A user's own state machine gives the request (developer_id,
// agent_id, task_id, session_id, tool, arguments); POST /tool-calls gives the call prepared
// (call, definition, context, wait, and result, the result object less its output, which a
// function call's answer completes) so no Prepare state runs, and held when the record it writes
// holds the call's claim for the executor's first attempt.
type StartInput struct {
	DeveloperID string     `json:"developer_id"`
	AgentID     any        `json:"agent_id"`
	TaskID      any        `json:"task_id"`
	SessionID   any        `json:"session_id"`
	Tool        string     `json:"tool"`
	Arguments   any        `json:"arguments"`
	Call        *tool.Call `json:"call,omitempty"`
	Definition  *tool.Tool `json:"definition,omitempty"`
	Context     *Context   `json:"context,omitempty"`
	Wait        *Wait      `json:"wait,omitempty"`
	Result      any        `json:"result,omitempty"`
	Held        bool       `json:"held,omitempty"`
}
