// Package prepare is the prepare Lambda: tool_call's Prepare, which turns a request naming only the
// tool into a call (package workflow), and, given Dispatch's token, hands a server-side call on to
// its executor. It alone links the Lambda client it hands calls on with (package lambdainvoke).
package prepare

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"

	"sinew/internal/dispatch"
	"sinew/internal/dispatch/lambdainvoke"
	"sinew/internal/executor"
	"sinew/internal/fault"
	"sinew/internal/handler"
	"sinew/internal/jsonv"
	"sinew/internal/lambdaboundary"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// New builds the prepare Lambda from env: the store, and the executors named by SINEW_FUNCTION_*
// over the Lambda Invoke API (AWS_ENDPOINT_URL_LAMBDA finds local mode's).
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	names := l.Config.FunctionNames
	return lambdaboundary.Handler(Handler(Deps{
		Workflow: &workflow.Service{Store: l.Store(handler.NoKey{})},
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
	// Invoker and Executors hand a call to the executor of its type when Dispatch invoked Prepare
	// with its token; a Prepare state, without a token, needs neither.
	Invoker   dispatch.Invoker
	Executors map[tool.Type]string // function names of the integration, api_call and system executors
}

// Handler is the prepare Lambda's handler. It takes the request (the tool_call input plus
// execution_id) as tool_call's Prepare state sends it, or in the envelope tool_call's Dispatch
// sends every function ({request, task_token}, for a request that names only the tool; Dispatch
// before the envelope sent the request with the token beside it). Without a token it answers the
// call prepared: {call, tool, context, wait, result}. With one it prepares the call the same way
// and hands a server-side call to its executor with the token, which answers it (answer null); a
// function call fails with Sinew.WaitForClient, so the state machine waits for the client in a
// Task with the tool's own timeout.
//
// The executor is invoked synchronously (RequestResponse), not as an Event: its invocation's
// failure is this one's, so Dispatch's Retry invokes Prepare again and Prepare the executor, whose
// claim on the call makes a repeat answer what the first run recorded; an Event invocation that
// Lambda gave up on would leave the Task waiting out its timeout, and no retry would follow. The
// price is that Prepare's own duration spans the executor's run, on this path only.
func Handler(d Deps) func(context.Context, json.RawMessage) (*workflow.Prepared, error) {
	return func(ctx context.Context, raw json.RawMessage) (*workflow.Prepared, error) {
		in, err := request(raw)
		if err != nil {
			return nil, err
		}
		p, err := d.Workflow.Prepare(ctx, in)
		if err != nil || in.TaskToken == "" {
			return p, err
		}
		return nil, d.handOn(ctx, p, in.TaskToken)
	}
}

// handOn gives the prepared call to its executor with Dispatch's token.
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
	_, ferr, err := d.Invoker.Invoke(ctx, fn, payload)
	if err != nil {
		return fmt.Errorf("hand call %s to %s: %w", p.Call.ID, fn, err)
	}
	if ferr != nil {
		// The executor answers the token with its run's outcome; failing itself, it could not
		// (the token was not answered), so this invocation fails with its error and is retried.
		return *ferr
	}
	return nil
}

// request is the request in raw: the envelope's, with its token, or raw itself.
func request(raw json.RawMessage) (workflow.PrepareInput, error) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) == nil && keys["request"] != nil {
		var env executor.Envelope
		if err := lambdaboundary.DecodeEvent(raw, &env); err != nil {
			return workflow.PrepareInput{}, err
		}
		if env.Request == nil {
			return workflow.PrepareInput{}, fault.Invalid("request", "request is required: prepare makes the call of a request naming the tool")
		}
		in := *env.Request
		in.TaskToken = env.TaskToken
		return in, nil
	}
	var in workflow.PrepareInput
	return in, lambdaboundary.DecodeEvent(raw, &in)
}

// waitForClient is Prepare's answer to a function call named only by its tool. Not a failure of
// the call: a caught error is the one way on from a Task whose answer is the token's to another
// state. It is named Sinew.WaitForClient at the Lambda boundary (which keeps a Sinew.* name) and
// logged there as routing, not as a failure.
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
