// Package prepare is the prepare Lambda.
//
// It is tool_call's Prepare, which turns a request naming only the tool into a call (package
// workflow) and answers it, for the state machine to invoke the call's function. Invoked by
// Dispatch with its token for such a request, it answers the token at once with Sinew.Prepare,
// which sends the execution to the Prepare state: prepare waits on no other function. Executions of
// the earlier definitions, whose Dispatch gave prepare the request with the token, still get their
// call handed on, as an Event invocation that prepare does not wait for.
//
// It is also the evaluator of Julep tasks' expressions that do not compile to JSONata: a task
// machine's Task invokes it with {evaluate: {expressions, env}} (package julep/taskflow) and gets
// pyexpr.Evaluate's {values} or {error}. That action reads and writes nothing, so it needs no grant
// beyond prepare's own; an action on this function rather than a function of its own saves an
// account's Lambda slots and the alarms each function carries.
package prepare

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"

	"sinew/internal/dispatch/lambdainvoke"
	"sinew/internal/executor"
	"sinew/internal/fault"
	"sinew/internal/handler"
	"sinew/internal/jsonv"
	"sinew/internal/julep/pyexpr"
	_ "sinew/internal/julep/pyexpr/markup" // markdown_to_html and html_to_markdown for the evaluate action
	"sinew/internal/lambdaboundary"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// New builds the prepare Lambda from env: the store, Step Functions for Dispatch's token, and the
// executors named by SINEW_FUNCTION_* over the Lambda Invoke API (AWS_ENDPOINT_URL_LAMBDA finds
// local mode's) for the earlier definitions' executions.
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	names := l.Config.FunctionNames
	return lambdaboundary.Handler(Handler(Deps{
		Workflow: &workflow.Service{Store: l.Store(handler.NoKey{})},
		Tokens:   executor.NewTokens(l.AWS),
		Invoker:  &lambdainvoke.Invoker{Client: lambdasvc.NewFromConfig(l.AWS)},
		Executors: map[tool.Type]string{
			tool.TypeIntegration: names["integration"],
			tool.TypeAPICall:     names["apicall"],
			tool.TypeSystem:      names["system"],
		},
	})), nil
}

// Deps are the handler's dependencies.
type Deps struct {
	Workflow *workflow.Service // needs Store
	// Tokens answers Dispatch's token with Sinew.Prepare.
	Tokens *executor.Tokens
	// Invoker and Executors hand a call to the executor of its type for an execution of tool_call's
	// definitions before Prepared (v4, v5), whose Dispatch invoked prepare with its token and the
	// request; the Prepare state needs neither.
	Invoker   AsyncInvoker
	Executors map[tool.Type]string // function names of the integration, api_call and system executors
}

// AsyncInvoker queues an Event invocation of a function, which Lambda runs (retrying a failed run
// twice) without the caller waiting for it: lambdainvoke.Invoker.
type AsyncInvoker interface {
	InvokeAsync(ctx context.Context, function string, payload []byte) error
}

// Refused is the Prepare state's answer for a request that is itself at fault, when the state reads
// it (error_result): {error: {type, message}}, for Prepared to fail the execution with.
type Refused struct {
	Error tool.ResultError `json:"error"`
}

// Handler is the prepare Lambda's handler. It takes:
//   - the request (the tool_call input plus execution_id) as the Prepare state sends it: it answers
//     the call prepared, {call, tool, context, wait, result}; a request at fault is Refused when the
//     state sends error_result, else the invocation's error, as the earlier Prepare states catch it;
//   - Dispatch's envelope with its token and no call ({call: null, ..., task_token}): it answers the
//     token with Sinew.Prepare, so the execution goes on to the Prepare state;
//   - the request with the token (tool_call v4 beside it, v5 in the envelope): see handOn.
func Handler(d Deps) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		ev, err := decode(raw)
		if err != nil {
			return nil, err
		}
		if ev.evaluate != nil {
			return pyexpr.Evaluate(ctx, *ev.evaluate)
		}
		if ev.route {
			// A routing answer, not the Task's failure: the invocation succeeds.
			return struct{}{}, d.Tokens.Answer(ctx, ev.token, nil, routeToPrepare)
		}
		in := ev.in
		p, err := d.Workflow.Prepare(ctx, in)
		switch {
		case err != nil && in.ErrorResult && workflow.RequestFault(err):
			return Refused{Error: tool.ResultError{Type: string(fault.KindOf(err)), Message: fault.Message(err)}}, nil
		case err != nil || in.TaskToken == "":
			return p, err
		}
		return nil, d.handOn(ctx, p, in.TaskToken)
	}
}

// routeToPrepare is the answer to Dispatch's token for a request naming only the tool.
var routeToPrepare = &fault.Error{Kind: fault.Kind(workflow.ErrPrepare),
	Msg: "a request naming only the tool goes to the Prepare state, which makes its call"}

// handOn gives the prepared call of an execution of tool_call v4 or v5 to its executor with
// Dispatch's token, which the executor answers. The executor is invoked as an Event, so prepare
// does not wait for it (and needs no more than a short timeout); Lambda runs it, retrying a failed
// run twice, and should every run fail the Task's heartbeat ends the wait and Settle records the
// failure. A function call fails with Sinew.WaitForClient, which those definitions' Catch sends to
// their Prepare and Function states.
func (d Deps) handOn(ctx context.Context, p *workflow.Prepared, token string) error {
	if p.Call.Type == tool.TypeFunction {
		return waitForClient{}
	}
	fn := d.Executors[p.Call.Type]
	if fn == "" || d.Invoker == nil {
		return fault.New(fault.Internal, "no executor is configured for %s calls", p.Call.Type)
	}
	payload, err := jsonv.Encode(executor.Envelope{Call: p.Call, Tool: &p.Tool, Context: p.Context, TaskToken: token})
	if err != nil {
		return fault.Wrap(fault.InvalidInput, err, "the call cannot be written as JSON")
	}
	if err := d.Invoker.InvokeAsync(ctx, fn, payload); err != nil {
		return fmt.Errorf("hand call %s to %s: %w", p.Call.ID, fn, err)
	}
	return nil
}

// event is what prepare was invoked with: the request (with the token of tool_call v4 or v5's
// Dispatch, or none from a Prepare state), or route, Dispatch's token for the Prepare state.
type event struct {
	in       workflow.PrepareInput
	route    bool
	token    string
	evaluate *pyexpr.Request
}

// decode reads raw: an envelope of Dispatch's (it has a "task_token" and a "call" key) or the
// request itself.
func decode(raw json.RawMessage) (event, error) {
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys)
	if keys["evaluate"] != nil {
		var ev struct {
			Evaluate *pyexpr.Request `json:"evaluate"`
		}
		if err := lambdaboundary.DecodeEvent(raw, &ev); err != nil || ev.Evaluate == nil {
			return event{}, fault.Invalid("evaluate", "evaluate is {expressions, env}")
		}
		return event{evaluate: ev.Evaluate}, nil
	}
	if keys["request"] != nil || keys["call"] != nil {
		var env executor.Envelope
		if err := lambdaboundary.DecodeEvent(raw, &env); err != nil {
			return event{}, err
		}
		switch {
		case !isNull(keys["call"]) || env.TaskToken == "":
			return event{}, fault.Invalid("call", "prepare takes Dispatch's envelope only for a request naming the tool, with the token")
		case env.Request == nil:
			return event{route: true, token: env.TaskToken}, nil
		}
		in := *env.Request
		in.TaskToken = env.TaskToken
		return event{in: in}, nil
	}
	var in workflow.PrepareInput
	return event{in: in}, lambdaboundary.DecodeEvent(raw, &in)
}

// isNull: v is absent or JSON null.
func isNull(v json.RawMessage) bool { return v == nil || string(bytes.TrimSpace(v)) == "null" }

// waitForClient is Prepare's answer, for tool_call v4 and v5, to a function call named only by its
// tool. Not a failure of the call: a caught error is the one way on from a Task whose answer is the
// token's to another state. It is named Sinew.WaitForClient at the Lambda boundary (which keeps a
// Sinew.* name) and logged there as routing, not as a failure.
type waitForClient struct{}

func (waitForClient) Error() string { return workflow.ErrWaitForClient + ": " + waitMessage }
func (waitForClient) Routing() bool { return true }

func (waitForClient) As(target any) bool {
	if t, ok := target.(*messages.InvokeResponse_Error); ok {
		*t = messages.InvokeResponse_Error{Type: workflow.ErrWaitForClient, Message: waitMessage}
		return true
	}
	return false
}

const waitMessage = "a function call waits for its client in the Function state, with the tool's timeout"
