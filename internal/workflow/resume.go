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

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
)

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

// AnswerCall answers a pending call (POST /executions/{id}/calls/{call_id}/result): it reads
// the call (its token) and sends the answer. Step Functions takes one answer per token, so two
// answers never both reach the execution, and no claim is written; the call is then settled by
// what ends the wait: the settle step for an error, the execution's status-change event
// (SettleEvent) for a result, which records the execution's output with it in one request. A call
// that is not the caller's is NotFound, one already answered a Conflict, one whose wait ended
// Gone; if Step Functions is unavailable the error is Transient (503, try again).
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
		if len(b) > store.InlineLimit {
			// A large answer travels as a reference, as the executors' outputs do.
			ref, err := s.Store.StoreValue(ctx, dev, a.Output, PayloadTTL)
			if err != nil {
				return nil, fmt.Errorf("store the output: %w", err)
			}
			if b, err = jsonv.Encode(ref); err != nil {
				return nil, err
			}
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
	c, err := s.Store.GetCall(ctx, dev, execID, callID)
	if err != nil {
		return nil, err
	}
	if err := answerable(c); err != nil {
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
		return nil, s.sendErr(ctx, dev, execID, callID, err)
	}
	// Step Functions has the answer: the call is answered, whoever writes it down.
	c.Status = final
	return c, nil
}

// answerable says why a call cannot be answered, from its record: nil while it waits.
func answerable(c *store.PendingCall) error {
	switch {
	case c.Status == store.CallExpired || (c.Status == store.CallPending && !time.Now().Before(c.ExpiresAt)):
		return fault.New(fault.Gone, "call %s has expired: the execution stopped waiting for it", c.CallID)
	case c.Status != store.CallPending:
		return fault.New(fault.Conflict, "call %s is already %s", c.CallID, c.Status)
	}
	return nil
}

// sendErr says what a SendTask* failure means for the caller.
func (s *Service) sendErr(ctx context.Context, dev, execID, callID string, sendErr error) error {
	switch fault.AWSCode(sendErr) {
	case "TaskTimedOut", "TaskDoesNotExist", "InvalidToken":
		// Both a used and an expired token answer TaskTimedOut: the record says which.
		if c, err := s.Store.GetCall(ctx, dev, execID, callID); err == nil && (c.Status == store.CallAnswered || c.Status == store.CallFailed) {
			return fault.New(fault.Conflict, "call %s is already %s", callID, c.Status)
		} else if err == nil && c.Status == store.CallPending && time.Now().Before(c.ExpiresAt) {
			// Answered by an earlier request whose outcome is not written down yet.
			return fault.New(fault.Conflict, "call %s is already answered", callID)
		}
		return fault.Wrap(fault.Gone, sendErr, "call %s is no longer awaited: the execution stopped waiting for it", callID)
	case "InvalidOutput":
		return fault.Wrap(fault.InvalidInput, sendErr, "output is not JSON Step Functions accepts")
	}
	return fault.FromAWS(sendErr, "deliver the answer to Step Functions")
}

// Heartbeat tells the waiting Task its client is alive (SendTaskHeartbeat).
func (s *Service) Heartbeat(ctx context.Context, dev, execID, callID string) error {
	c, err := s.Store.GetCall(ctx, dev, execID, callID)
	if err != nil {
		return err
	}
	if err := answerable(c); err != nil {
		return err
	}
	_, err = s.SFN.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: &c.TaskToken})
	if err == nil {
		return nil
	}
	switch fault.AWSCode(err) {
	case "TaskTimedOut", "TaskDoesNotExist", "InvalidToken":
		return fault.Wrap(fault.Gone, err, "call %s is no longer awaited", callID)
	}
	return fault.FromAWS(err, "send the heartbeat")
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
	c, err := s.AnswerCall(ctx, dev, execID, x.PendingCalls[0].CallID, Answer{Output: input})
	if err != nil || x.Workflow != Task {
		return c, err
	}
	// A task's wait runs in a tool_call execution of its own, whose end settles that execution's
	// record, not the task's: the call is written down here, so the task's next wait is its only one.
	if _, err := s.Store.SettleCall(ctx, dev, execID, c.CallID, store.CallAnswered); err != nil && !fault.Is(err, fault.Conflict) {
		return nil, err
	}
	return c, nil
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
	arn, err := s.executionARN(x, execID)
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
	if err != nil && fault.AWSCode(err) != "ExecutionDoesNotExist" {
		return nil, fault.FromAWS(err, "stop execution")
	}
	errObj := map[string]any{"type": "Sinew.Cancelled", "message": reason}
	if _, err := s.Finish(ctx, dev, execID, store.ExecCancelled, nil, errObj); err != nil {
		return nil, err
	}
	return s.Store.GetExecution(ctx, dev, execID)
}

// executionARN is the ARN of the execution named name of x's state machine.
func (s *Service) executionARN(x *store.Execution, name string) (string, error) {
	workflow := x.Workflow
	sm := s.ToolCallARN
	switch workflow {
	case AgentLoop:
		sm = s.AgentLoopARN
	case Task:
		if s.TaskMachineARN == nil {
			return "", fault.New(fault.Internal, "task state machines are not configured")
		}
		arn, err := s.TaskMachineARN(x.TaskID)
		if err != nil {
			return "", err
		}
		sm = arn
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
	// Ended is the execution's record when the call ended before the start was answered (a call
	// on tool_call_express): the caller has the result.
	Ended *store.Execution `json:"-"`
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

// awsMessage is an AWS API error's message.
func awsMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorMessage()
	}
	return err.Error()
}
