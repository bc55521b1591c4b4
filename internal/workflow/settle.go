package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Error names the settle step gives results it makes itself.
const (
	// ClientPrefix marks an error the client reported with SendTaskFailure.
	ClientPrefix = "Client."
	// ClientFailure is the name of a client failure sent without an error name.
	ClientFailure = "Client.Failure"
)

// PayloadTTL is how long a result too large to travel inline is kept (Step Functions keeps a
// Standard execution's history 90 days).
const PayloadTTL = 90 * 24 * time.Hour

// Settle is the state machine's last step: it turns the Task's outcome into the
// result object (or the error result), marks a function call answered, failed or expired, and
// gives the execution record its final status. The result object is its answer, and the
// execution's output. It is safe to run twice: final statuses are kept once set.
func (s *Service) Settle(ctx context.Context, o Outcome) (map[string]any, error) {
	if o.Request != nil && o.Call.Type == "" {
		// Dispatch failed on a request that named only the tool: the call is the one Prepare
		// built (its id derives from the execution), or the request itself is at fault, and its
		// error, which Prepare recorded, fails the execution as Prepare's own failure does.
		p, err := s.prepare(ctx, *o.Request)
		if err != nil {
			return nil, err
		}
		// Prepare, with Dispatch's token, left the record to the executor or to the Prepare
		// state after it, and neither may have run.
		if _, err := s.Store.EnsureExecution(ctx, p.Context.DeveloperID, s.execution(*o.Request)); err != nil {
			return nil, fmt.Errorf("settle %s: %w", o.Request.ExecutionID, err)
		}
		o.Call, o.Tool, o.Context = p.Call, &p.Tool, p.Context
	}
	if err := o.Call.Validate(); err != nil {
		return nil, err
	}
	dev, execID := o.Context.DeveloperID, o.Context.ExecutionID
	if dev == "" || execID == "" {
		return nil, fault.Invalid("context", "context.developer_id and context.execution_id are required")
	}
	if (o.Result == nil) == (o.Error == nil) {
		return nil, fault.Invalid("result", "exactly one of result and error must be set")
	}
	var res tool.Result
	status, callStatus := store.ExecSucceeded, store.CallAnswered
	if o.Result != nil {
		out, err := s.Store.StoreValue(ctx, dev, o.Result.Output, PayloadTTL)
		if err != nil {
			return nil, fmt.Errorf("store the output of %s: %w", o.Call.ID, err)
		}
		res = tool.ResultOf(&o.Call, out)
	} else {
		typ, msg := ErrorOf(o.Call.Type, *o.Error)
		res = tool.ErrorResult(&o.Call, typ, msg)
		status, callStatus = store.ExecFailed, store.CallFailed
		if typ == string(fault.Timeout) && o.Call.Type == tool.TypeFunction {
			status, callStatus = store.ExecTimedOut, store.CallExpired
		}
	}
	if o.Call.Type == tool.TypeFunction {
		if _, err := s.Store.SettleCall(ctx, dev, execID, o.Call.ID, callStatus); err != nil && !fault.Is(err, fault.NotFound) && !fault.Is(err, fault.Conflict) {
			// NotFound: the function Lambda failed before recording it. Conflict: the
			// execution was settled by another path first (a status-change event); both are fine.
			return nil, fmt.Errorf("settle call %s: %w", o.Call.ID, err)
		}
	}
	obj := ResultObject(res)
	var errObj any
	if res.Error != nil {
		errObj = obj["error"]
	}
	if _, _, err := s.Store.SetExecutionStatus(ctx, dev, execID, status, obj, errObj); err != nil && !fault.Is(err, fault.NotFound) {
		return nil, fmt.Errorf("settle execution %s: %w", execID, err)
	}
	return obj, nil
}

// ErrorOf gives the error result's type and message for a caught Task error. A Lambda function
// error keeps its name (Sinew.*) and message; on the function path, a wait that ran out is
// Sinew.Timeout, and an error the client sent with SendTaskFailure becomes Client.<error>, the
// prefix added once.
func ErrorOf(t tool.Type, e StatesError) (typ, msg string) {
	if lt, lm, ok := lambdaError(e); ok {
		return lt, lm
	}
	switch e.Error {
	case "States.Timeout", "States.HeartbeatTimeout":
		what := "did not answer in time"
		if e.Error == "States.HeartbeatTimeout" {
			what = "stopped sending heartbeats"
		}
		if t == tool.TypeFunction {
			return string(fault.Timeout), "the client " + what + ": the call expired"
		}
		return string(fault.Timeout), "the call ran out of time"
	}
	if t == tool.TypeFunction && !strings.HasPrefix(e.Error, "States.") && !strings.HasPrefix(e.Error, "Lambda.") {
		typ = e.Error
		if typ == "" {
			typ = ClientFailure
		} else if !strings.HasPrefix(typ, ClientPrefix) {
			typ = ClientPrefix + typ
		}
		return typ, e.Cause
	}
	if e.Error == "" {
		return string(fault.Internal), e.Cause
	}
	return e.Error, e.Cause
}

// lambdaError reads a Lambda function error's cause, {"errorMessage", "errorType"}, whose type is
// the caught error's name.
func lambdaError(e StatesError) (typ, msg string, ok bool) {
	var p struct {
		Message *string `json:"errorMessage"`
		Type    *string `json:"errorType"`
	}
	if json.Unmarshal([]byte(e.Cause), &p) != nil || p.Type == nil || *p.Type != e.Error {
		return "", "", false
	}
	if p.Message != nil {
		msg = *p.Message
	}
	return *p.Type, msg, true
}

// StatusChange is EventBridge's "Step Functions Execution Status Change" event (the part settle
// reads). Input, Output, Error and Cause are JSON text or null.
type StatusChange struct {
	DetailType string `json:"detail-type"`
	Source     string `json:"source"`
	Detail     struct {
		ExecutionArn    string  `json:"executionArn"`
		StateMachineArn string  `json:"stateMachineArn"`
		Name            string  `json:"name"`
		Status          string  `json:"status"`
		Input           *string `json:"input"`
		Output          *string `json:"output"`
		Error           *string `json:"error"`
		Cause           *string `json:"cause"`
	} `json:"detail"`
}

// DetailTypeStatusChange is the detail-type of Step Functions' execution events.
const DetailTypeStatusChange = "Step Functions Execution Status Change"

// SettleEvent brings an execution that ended, by any path, to its final state: an
// execution stopped, timed out or failed mid-wait leaves no call shown as pending. A SUCCEEDED
// execution already settled by its last state keeps its status; a RUNNING event changes nothing.
// It answers the execution record, or nil when the event is not about a recorded execution.
func (s *Service) SettleEvent(ctx context.Context, ev StatusChange) (*store.Execution, error) {
	if ev.DetailType != DetailTypeStatusChange {
		return nil, fault.Invalid("detail-type", "settle takes %q events, not %q", DetailTypeStatusChange, ev.DetailType)
	}
	if ev.Detail.Name == "" {
		return nil, fault.Invalid("detail.name", "detail.name (the execution's name) is required")
	}
	return s.settleAs(ctx, developerOf(ev.Detail.Input), ev)
}

// settleAs is SettleEvent for developer dev's execution (dev "": not one of sinew's).
func (s *Service) settleAs(ctx context.Context, dev string, ev StatusChange) (*store.Execution, error) {
	d := ev.Detail
	var status store.ExecStatus
	var output, errObj any
	switch d.Status {
	case "RUNNING", "PENDING_REDRIVE":
		return nil, nil
	case "ABORTED":
		status = store.ExecCancelled
		errObj = eventError(d.Error, d.Cause, "Sinew.Cancelled", "the execution was stopped")
	case "TIMED_OUT":
		status = store.ExecTimedOut
		errObj = eventError(d.Error, d.Cause, "States.Timeout", "the execution ran out of time")
	case "FAILED":
		status = store.ExecFailed
		errObj = eventError(d.Error, d.Cause, "States.Runtime", "the execution failed")
	case "SUCCEEDED":
		status = store.ExecSucceeded
		if d.Output != nil {
			v, err := jsonv.DecodeString(*d.Output)
			if err == nil {
				output = v
				if stub := functionStubOf(d.Input); stub != nil && !isResultFor(v, stub["id"]) {
					// tool_call's Dispatch ended with a function call's answer as it came (no
					// Output of its own, so its numbers stay exact): it is the result's output.
					stub["output"] = v
					return s.settleResult(ctx, dev, d.Name, stub)
				}
				if m, ok := v.(map[string]any); ok && isResultObject(m) && m["error"] == nil {
					return s.settleResult(ctx, dev, d.Name, m)
				}
				// A tool_call's output is the result object: an error result is a failed call.
				if m, ok := v.(map[string]any); ok && m["error"] != nil {
					errObj, status = m["error"], store.ExecFailed
					if e, ok := m["error"].(map[string]any); ok && e["type"] == string(fault.Timeout) {
						status = store.ExecTimedOut
					}
				}
			}
		}
	default:
		return nil, fault.Invalid("detail.status", "unknown execution status %q", d.Status)
	}
	if dev == "" {
		// Not one of sinew's executions (or its input was too large to be included): nothing
		// of sinew's can be waiting on it.
		s.log().WarnContext(ctx, "settle: execution event without a developer id in its input", "execution", d.ExecutionArn)
		return nil, nil
	}
	return s.Finish(ctx, dev, d.Name, status, output, errObj)
}

// Finish gives an execution its final status (kept if one is already set) and expires every call
// of it still pending. It answers the record, or nil when the execution was never recorded.
func (s *Service) Finish(ctx context.Context, dev, execID string, status store.ExecStatus, output, errObj any) (*store.Execution, error) {
	x, changed, err := s.Store.SetExecutionStatus(ctx, dev, execID, status, output, errObj)
	if fault.Is(err, fault.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("settle execution %s: %w", execID, err)
	}
	if !changed && status == store.ExecSucceeded {
		// The execution reached its last state, whose Settle already settled its calls: the
		// SUCCEEDED event has nothing left to do (and saves the Query).
		return x, nil
	}
	calls, err := s.Store.ExecutionCalls(ctx, dev, execID)
	if err != nil {
		return nil, fmt.Errorf("settle the calls of %s: %w", execID, err)
	}
	for _, c := range calls {
		if c.Status != store.CallPending {
			continue
		}
		// Conflict: answered in between (its own settle wins); anything else is retried.
		if _, err := s.Store.SettleCall(ctx, dev, execID, c.CallID, store.CallExpired); err != nil && !fault.Is(err, fault.Conflict) && !fault.Is(err, fault.NotFound) {
			return nil, fmt.Errorf("expire call %s: %w", c.CallID, err)
		}
	}
	return x, nil
}

func eventError(name, cause *string, defName, defMsg string) map[string]any {
	e := map[string]any{"type": defName, "message": defMsg}
	if name != nil && *name != "" {
		e["type"] = *name
	}
	if cause != nil && *cause != "" {
		e["message"] = *cause
	}
	return e
}

// developerOf reads developer_id from an execution's input (JSON text).
func developerOf(input *string) string {
	if input == nil {
		return ""
	}
	var in struct {
		DeveloperID string `json:"developer_id"`
	}
	if json.Unmarshal([]byte(*input), &in) != nil {
		return ""
	}
	return in.DeveloperID
}

// functionStubOf reads the result object less its output from the input of a function call that
// POST /tool-calls started ({"result": {"id", "type": "function", "name"}}), nil for any other.
func functionStubOf(input *string) map[string]any {
	if input == nil {
		return nil
	}
	var in struct {
		Result *CallResult `json:"result"`
	}
	if json.Unmarshal([]byte(*input), &in) != nil || in.Result == nil || in.Result.Type != tool.TypeFunction || in.Result.ID == "" {
		return nil
	}
	return map[string]any{"id": in.Result.ID, "type": string(in.Result.Type), "name": in.Result.Name}
}

// isResultFor reports whether an output is the result object (or error result) of call id: what
// the definitions before the one-state Dispatch, and Settle, end with. A function call's answer on
// Dispatch is the output alone; one shaped as its own call's result object is taken as that.
func isResultFor(v any, id any) bool {
	m, ok := v.(map[string]any)
	return ok && isResultObject(m) && m["id"] == id
}

// isResultObject reports whether an execution's output is a tool_call's result object.
func isResultObject(m map[string]any) bool {
	_, hasOut := m["output"]
	_, isID := m["id"].(string)
	_, isName := m["name"].(string)
	return isID && isName && m["type"] != nil && (hasOut || m["error"] != nil)
}

// settleResult records a tool_call that ended SUCCEEDED with result object m (not an error
// result, which goes the general way). A server-side call's executor recorded it already: nothing
// to do, and no request. A function call answered with a result is recorded here, with its call,
// in one request (whether the answer came through the HTTP route, the SDK or the CLI).
func (s *Service) settleResult(ctx context.Context, dev, execID string, m map[string]any) (*store.Execution, error) {
	if m["type"] != string(tool.TypeFunction) || dev == "" {
		return nil, nil
	}
	if _, err := s.Store.SucceedWithCall(ctx, dev, execID, m["id"].(string), m); err != nil {
		return nil, fmt.Errorf("settle execution %s: %w", execID, err)
	}
	return nil, nil
}
