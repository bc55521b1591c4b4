// Package dispatch sends a chat's tool calls to the executor Lambda of their type.
//
// The chat path has no state machine, so the Dispatcher retries Sinew.Transient itself, as the
// state machines' Retry does; the executors' guard (package executor/guard) makes those retries
// safe.
package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"sinew/internal/executor"
	"sinew/internal/fault"
	"sinew/internal/lambdaboundary"
	"sinew/internal/tool"
)

// Invoker invokes a Lambda function synchronously: the answer's bytes, or the function's error as
// the runtime names it. Local mode runs handlers in process (lambdaboundary.Invoke); deployed, it
// wraps the Lambda client's Invoke.
type Invoker interface {
	Invoke(ctx context.Context, function string, payload []byte) ([]byte, *messages.InvokeResponse_Error, error)
}

// Dispatcher sends a call to the executor Lambda of its type, on the chat path: there is no state
// machine there, so it retries Sinew.Transient itself (3 attempts, bounded by ctx's
// deadline), and a failure becomes the error result fed back to the model. The executors' Guard
// makes those retries safe.
type Dispatcher struct {
	Invoker Invoker
	// Functions maps a tool type to the deployed name of its executor (integration → apicall ...).
	Functions map[tool.Type]string
	Attempts  int           // 3 when 0
	Backoff   time.Duration // the first pause between attempts, doubled each time; 500 ms when 0
}

// Dispatch runs one call and gives its result object: the executor answers a tool's failure as
// the error result (env asks for error results), so its Lambda errors are faults. Function calls
// are not dispatched: on the chat path they go back to the caller as pending calls.
func (d *Dispatcher) Dispatch(ctx context.Context, env executor.Envelope, call *tool.Call) tool.Result {
	fn, ok := d.Functions[call.Type]
	if !ok || call.Type == tool.TypeFunction {
		return tool.ErrorResult(call, string(fault.InvalidInput), fmt.Sprintf("calls of type %s are not run by sinew on this path", call.Type))
	}
	env.ErrorResult = true
	payload, err := json.Marshal(env)
	if err != nil {
		return tool.ErrorResult(call, string(fault.Internal), "the call could not be encoded")
	}
	attempts, pause := d.Attempts, d.Backoff
	if attempts <= 0 {
		attempts = 3
	}
	if pause <= 0 {
		pause = 500 * time.Millisecond
	}
	var last *messages.InvokeResponse_Error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < pause {
				break // no time left for another attempt
			}
			select {
			case <-ctx.Done():
				return tool.ErrorResult(call, string(fault.Timeout), "the request's time budget ran out")
			case <-time.After(pause):
			}
			pause *= 2
		}
		out, ferr, err := d.Invoker.Invoke(ctx, fn, payload)
		if err != nil {
			e := lambdaboundary.Error(err)
			last = &e
			if fault.KindOf(err) == fault.Transient {
				continue
			}
			break
		}
		if ferr != nil {
			last = ferr
			if ferr.Type == string(fault.Transient) {
				continue
			}
			break
		}
		var res struct {
			Output any               `json:"output"`
			Error  *tool.ResultError `json:"error"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return tool.ErrorResult(call, string(fault.Internal), "the executor's answer is not a result object")
		}
		if res.Error != nil {
			return tool.ErrorResult(call, res.Error.Type, res.Error.Message)
		}
		return tool.ResultOf(call, res.Output)
	}
	if last == nil {
		return tool.ErrorResult(call, string(fault.Timeout), "the request's time budget ran out")
	}
	return tool.ErrorResult(call, last.Type, last.Message)
}
