package workflow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"
	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
)

// ClaimLease is how long an answer holds its claim on a call: long enough for SendTask* and the
// settle write, short enough that a crashed request frees the call soon.
const ClaimLease = 30 * time.Second

// Step Functions' limits on SendTaskFailure's error and cause.
const (
	maxErrorName = 256
	maxCause     = 32768
)

// Answer is a client's answer to a pending function call: Output (any JSON, the tool's result), or
// Error with a type and a message (a failed call, reported as Client.<type>).
type Answer struct {
	Output   any
	HasError bool
	Type     string
	Message  string
}

// AnswerCall answers a pending call (POST /executions/{id}/calls/{call_id}/result): it
// claims the call with a short lease so two answers cannot both reach Step Functions, sends the
// answer, and settles the claim. A call that is not the caller's is NotFound, one already answered
// a Conflict, one whose wait ended Gone; if Step Functions is unavailable the claim is released and
// the error is Transient (503, try again).
func (s *Service) AnswerCall(ctx context.Context, dev, execID, callID string, a Answer) (*store.PendingCall, error) {
	var output string
	if !a.HasError {
		b, err := jsonv.Encode(a.Output)
		if err != nil {
			return nil, fault.Invalid("output", "output cannot be written as JSON")
		}
		if len(b) > 262144 {
			return nil, &fault.Error{Kind: fault.TooLarge, Field: "output", Msg: "output is over Step Functions' 256 KiB limit"}
		}
		output = string(b)
	} else {
		if a.Type == "" {
			return nil, fault.Invalid("error.type", "error.type is required")
		}
		if len(a.Type) > maxErrorName-len(ClientPrefix) {
			return nil, fault.Invalid("error.type", "error.type is at most %d characters", maxErrorName-len(ClientPrefix))
		}
		if len(a.Message) > maxCause {
			return nil, fault.Invalid("error.message", "error.message is at most %d characters", maxCause)
		}
	}
	owner := uuid.NewString()
	c, err := s.Store.ClaimCall(ctx, dev, execID, callID, owner, ClaimLease)
	if err != nil {
		return nil, err
	}
	final := store.CallAnswered
	if a.HasError {
		final = store.CallFailed
		// The type goes unprefixed: the settle step adds Client. once.
		_, err = s.SFN.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: &c.TaskToken, Error: awsv2.String(a.Type), Cause: awsv2.String(a.Message)})
	} else {
		_, err = s.SFN.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: &c.TaskToken, Output: &output})
	}
	if err != nil {
		return nil, s.undoClaim(ctx, dev, execID, callID, owner, err)
	}
	settled, err := s.Store.SettleCall(ctx, dev, execID, callID, final, owner)
	if err != nil {
		// Step Functions has the answer; the settle step marks the call too, so this is no
		// failure of the answer itself.
		s.log().WarnContext(ctx, "answer delivered but the claim could not be settled", "call_id", callID, "error", err)
		c.Status, c.LeaseOwner, c.LeaseUntil = final, "", time.Time{}
		return c, nil
	}
	return settled, nil
}

// undoClaim handles a SendTask* failure: the claim is released so the call can be answered again,
// and the error says what the caller can do.
func (s *Service) undoClaim(ctx context.Context, dev, execID, callID, owner string, sendErr error) error {
	if err := s.Store.ReleaseCall(ctx, dev, execID, callID, owner); err != nil && !fault.Is(err, fault.Conflict) {
		s.log().WarnContext(ctx, "releasing a claim failed; its lease will run out", "call_id", callID, "error", err)
	}
	switch awsCode(sendErr) {
	case "TaskTimedOut", "TaskDoesNotExist", "InvalidToken":
		// Both a used and an expired token answer TaskTimedOut: the record says which.
		if c, err := s.Store.GetCall(ctx, dev, execID, callID); err == nil && (c.Status == store.CallAnswered || c.Status == store.CallFailed) {
			return fault.New(fault.Conflict, "call %s is already %s", callID, c.Status)
		}
		return fault.Wrap(fault.Gone, sendErr, "call %s is no longer awaited: the execution stopped waiting for it", callID)
	case "InvalidOutput":
		return fault.Wrap(fault.InvalidInput, sendErr, "output is not JSON Step Functions accepts")
	}
	return awsErr(sendErr, "deliver the answer to Step Functions")
}

// Heartbeat tells the waiting Task its client is alive (SendTaskHeartbeat).
func (s *Service) Heartbeat(ctx context.Context, dev, execID, callID string) error {
	c, err := s.Store.GetCall(ctx, dev, execID, callID)
	if err != nil {
		return err
	}
	switch {
	case c.Status == store.CallExpired || (c.Status == store.CallPending && !time.Now().Before(c.ExpiresAt)):
		return fault.New(fault.Gone, "call %s has expired: the execution stopped waiting for it", callID)
	case c.Status != store.CallPending:
		return fault.New(fault.Conflict, "call %s is already %s", callID, c.Status)
	}
	_, err = s.SFN.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: &c.TaskToken})
	switch awsCode(err) {
	case "":
		return nil
	case "TaskTimedOut", "TaskDoesNotExist", "InvalidToken":
		return fault.Wrap(fault.Gone, err, "call %s is no longer awaited", callID)
	}
	return awsErr(err, "send the heartbeat")
}

// Resume is Julep's PUT /executions/{id} with status running: it answers the execution's one
// pending call with input. None or several pending is Unprocessable (422).
func (s *Service) Resume(ctx context.Context, dev, execID string, input any) (*store.PendingCall, error) {
	x, err := s.Store.GetExecution(ctx, dev, execID)
	if err != nil {
		return nil, err
	}
	switch n := len(x.PendingCalls); {
	case n == 0:
		return nil, fault.New(fault.Unprocessable, "execution %s has no pending call to resume (it is %s)", execID, x.Status)
	case n > 1:
		return nil, fault.New(fault.Unprocessable, "execution %s has %d pending calls: answer each with POST /executions/%s/calls/{call_id}/result", execID, n, execID)
	}
	return s.AnswerCall(ctx, dev, execID, x.PendingCalls[0].CallID, Answer{Output: input})
}

// Cancel stops an execution (Julep's PUT /executions/{id} with status cancelled) and settles it at
// once: the record is cancelled and its pending calls expire, without waiting for the event.
func (s *Service) Cancel(ctx context.Context, dev, execID, reason string) (*store.Execution, error) {
	x, err := s.Store.GetExecution(ctx, dev, execID)
	if err != nil {
		return nil, err
	}
	if x.Status.Final() {
		return nil, fault.New(fault.Unprocessable, "execution %s has already ended (%s)", execID, x.Status)
	}
	arn, err := s.executionARN(x.Workflow, execID)
	if err != nil {
		return nil, err
	}
	if reason == "" {
		reason = "cancelled by the developer"
	}
	if len(reason) > maxCause {
		return nil, fault.Invalid("reason", "reason is at most %d characters", maxCause)
	}
	_, err = s.SFN.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: &arn, Error: awsv2.String("Sinew.Cancelled"), Cause: &reason})
	if err != nil && awsCode(err) != "ExecutionDoesNotExist" {
		return nil, awsErr(err, "stop execution")
	}
	errObj := map[string]any{"type": "Sinew.Cancelled", "message": reason}
	if _, err := s.Finish(ctx, dev, execID, store.ExecCancelled, nil, errObj); err != nil {
		return nil, err
	}
	return s.Store.GetExecution(ctx, dev, execID)
}

// executionARN is the ARN of the execution named name of a workflow's state machine.
func (s *Service) executionARN(workflow, name string) (string, error) {
	sm := s.ToolCallARN
	if workflow == AgentLoop {
		sm = s.AgentLoopARN
	}
	if !strings.Contains(sm, ":stateMachine:") {
		return "", fault.New(fault.Internal, "the %s state machine's ARN is not configured", workflow)
	}
	return strings.Replace(sm, ":stateMachine:", ":execution:", 1) + ":" + name, nil
}

// ToolCallRequest is POST /tool-calls' body.
type ToolCallRequest struct {
	AgentID   string `json:"agent_id"`
	TaskID    string `json:"task_id"`
	SessionID string `json:"session_id"`
	Tool      string `json:"tool"`
	Arguments any    `json:"arguments"`
}

// Started is POST /tool-calls' answer.
type Started struct {
	ExecutionID string           `json:"execution_id"`
	Status      store.ExecStatus `json:"status"`
}

// IdempotentName is the execution name for an Idempotency-Key: idem- and a hash of
// the developer, the route and the key, so repeats name the same execution and no two developers
// can collide.
func IdempotentName(dev, route, key string) string {
	h := sha256.Sum256([]byte(dev + "\x00" + route + "\x00" + key))
	return "idem-" + hex.EncodeToString(h[:24])
}

// maxExecutionInput is Step Functions' limit on an execution's input (256 KiB, in UTF-8 bytes).
const maxExecutionInput = 262144

// StartToolCall starts a tool_call execution for the caller. It records the execution (running)
// before it starts it, so a GET /executions/{id} right after the 202 finds it; Prepare, the first
// state, then finds the record and only marks that it ran. With an idempotency key, a repeat
// (running or ended) answers the same execution instead of starting another.
func (s *Service) StartToolCall(ctx context.Context, dev string, req ToolCallRequest, idemKey string) (*Started, error) {
	args, err := CheckRequest(req.AgentID, req.TaskID, req.SessionID, req.Tool, req.Arguments)
	if err != nil {
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
	// What the call names must be the caller's before anything starts: another developer's
	// agent is a 404 here, not an execution that Prepare fails later (and no existence leak).
	if _, err := s.Store.GetAgent(ctx, dev, req.AgentID); err != nil {
		return nil, err
	}
	if req.TaskID != "" {
		if _, err := s.Store.GetTask(ctx, dev, req.TaskID); err != nil {
			return nil, err
		}
	}
	if req.SessionID != "" {
		if _, err := s.Store.GetSession(ctx, dev, req.SessionID); err != nil {
			return nil, err
		}
	}
	name := uuid.Must(uuid.NewV7()).String()
	if idemKey != "" {
		name = IdempotentName(dev, "POST /tool-calls", idemKey)
	}
	input, err := jsonv.Encode(map[string]any{
		"developer_id": dev, "agent_id": req.AgentID, "task_id": nullable(req.TaskID), "session_id": nullable(req.SessionID),
		"tool": req.Tool, "arguments": args,
	})
	if err != nil {
		return nil, fault.Invalid("arguments", "arguments cannot be written as JSON")
	}
	if len(input) > maxExecutionInput {
		return nil, &fault.Error{Kind: fault.TooLarge, Field: "arguments",
			Msg: fmt.Sprintf("the call is %d bytes as JSON, over Step Functions' 256 KiB input limit: send smaller arguments", len(input))}
	}
	// Recorded first: a repeat of the key finds the record (created false) and answers its status.
	x, created, err := s.Store.CreateExecution(ctx, dev, store.Execution{ExecutionID: name, Workflow: ToolCall,
		AgentID: req.AgentID, TaskID: req.TaskID, SessionID: req.SessionID})
	if err != nil {
		return nil, err
	}
	// Started even when the record was there: a first request that recorded and then failed to
	// start leaves a record its retry must start. Step Functions answers a start with the same name
	// and input of a running execution with that execution, and ExecutionAlreadyExists otherwise.
	_, err = s.SFN.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: &s.ToolCallARN, Name: &name, Input: awsv2.String(string(input))})
	switch {
	case err == nil, awsCode(err) == "ExecutionAlreadyExists" && idemKey != "":
		return &Started{ExecutionID: name, Status: x.Status}, nil
	}
	if created {
		// Nothing may show as running that never ran. The record is kept if the execution did
		// start after all (its first state has marked it) and only the answer was lost. Done even
		// if the caller has gone away.
		if _, derr := s.Store.DiscardUnstarted(context.WithoutCancel(ctx), dev, name); derr != nil {
			s.log().WarnContext(ctx, "start failed and its record could not be discarded", "execution_id", name, "error", derr)
		}
	}
	switch awsCode(err) {
	case "ExecutionLimitExceeded":
		return nil, fault.Wrap(fault.Transient, err, "too many executions are running; try again later")
	case "InvalidExecutionInput":
		return nil, fault.Wrap(fault.InvalidInput, err, "Step Functions refused the call's input: %s", awsMessage(err))
	}
	return nil, awsErr(err, "start the tool_call execution")
}

// awsMessage is an AWS API error's message.
func awsMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorMessage()
	}
	return err.Error()
}
