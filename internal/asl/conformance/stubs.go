package conformance

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sinew/internal/asl"
	"sinew/internal/jsonv"
)

// Lambdas stands in for the few Lambda handlers the recorded tests deploy, by function name. The
// error payloads carry the recorded errorType and errorMessage; the Python stack traces and request
// ids of the recordings cannot be reproduced, so comparisons skip those causes.
type Lambdas map[string]func(payload []byte) *asl.LambdaResponse

// Invoke implements asl.LambdaInvoker; a function ARN is matched by its name.
func (l Lambdas) Invoke(_ context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	name := functionName(req.FunctionName)
	f, ok := l[name]
	if !ok {
		return nil, &asl.LambdaServiceError{Code: "ResourceNotFoundException", Message: fmt.Sprintf(
			"Function not found: arn:aws:lambda:us-east-1:000000000000:function:%s (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: 00000000-0000-0000-0000-000000000000; Proxy: null)", name)}
	}
	return f(req.Payload), nil
}

func functionName(name string) string {
	if i := strings.Index(name, ":function:"); i >= 0 {
		name = name[i+len(":function:"):]
		if j := strings.Index(name, ":"); j >= 0 {
			name = name[:j]
		}
	}
	return name
}

// Identity returns its event.
func Identity(p []byte) *asl.LambdaResponse { return &asl.LambdaResponse{Payload: p} }

// Raise returns a function error of type typ with message msg.
func Raise(typ, msg string) func([]byte) *asl.LambdaResponse {
	return func([]byte) *asl.LambdaResponse {
		return &asl.LambdaResponse{FunctionError: "Unhandled", Payload: []byte(fmt.Sprintf(`{"errorMessage":%q,"errorType":%q}`, msg, typ))}
	}
}

// defaultLambdas are the recorded tests' functions, bound in every manifest run; a case picks one
// by the function name it patches into its template.
var defaultLambdas = Lambdas{
	"fn":       Identity,
	"identity": Identity,
	"raise":    Raise("Exception", "Some exception was raised."),
	// raise_custom_exception.py: a CustomException with an empty message.
	"raise_custom": Raise("CustomException", ""),
	// A UTF-8 answer just over 256 KiB, as the recorded data-limit tests' function returns.
	"big": func([]byte) *asl.LambdaResponse {
		return &asl.LambdaResponse{Payload: []byte(`"` + strings.Repeat("é", 131073) + `"`)}
	},
	"big_bytes": func([]byte) *asl.LambdaResponse {
		return &asl.LambdaResponse{Payload: []byte(`"` + strings.Repeat("é", 131073) + `"`)}
	},
	// return_bytes_str.py returns the bytes of a JSON string, which the runtime passes on as is.
	"bytes_str": func([]byte) *asl.LambdaResponse { return &asl.LambdaResponse{Payload: []byte(`"HelloWorld!"`)} },
	// The retry tests deploy a function that always raises under this name.
	"lambda_function_name": Raise("Exception", "Some exception was raised."),
}

// stubInvoker adds to the plain stubs the one that needs the engine's clock: "sleepy" sleeps 60 s
// as the recorded wait_60_seconds function does (on a virtual clock, at once).
type stubInvoker struct {
	clock asl.Clock
	fns   Lambdas
	only  string // when set, the stub answering every call
}

func (s stubInvoker) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	name := functionName(req.FunctionName)
	if s.only != "" {
		name = s.only
		req.FunctionName = s.only
	}
	if name == "sleepy" {
		if err := s.clock.Sleep(ctx, 60*time.Second); err != nil {
			return nil, err
		}
		return &asl.LambdaResponse{Payload: []byte(`{}`)}, nil
	}
	return s.fns.Invoke(ctx, req)
}

// Consumer plays a recorded test's SQS consumer: it gets the message body (which carries the task
// token) and answers through the engine, as the Python test did with SendTaskSuccess/Failure/
// Heartbeat. clock is the engine's, for consumers that wait between heartbeats.
type Consumer func(ctx context.Context, eng *asl.Engine, clock asl.Clock, token string, body any)

// SQSStandIn is sqs:sendMessage for conformance only: it acknowledges the message as SQS does and
// hands its body to the consumer on a goroutine of its own, as a queue poller would.
func SQSStandIn(eng func() *asl.Engine, clock asl.Clock, consume Consumer) asl.Integration {
	return asl.IntegrationFunc(func(ctx context.Context, call *asl.TaskCall) (any, error) {
		params, _ := call.Parameters.(map[string]any)
		body := params["MessageBody"]
		token := call.TaskToken
		if token == "" {
			token = findToken(body)
		}
		go consume(context.WithoutCancel(ctx), eng(), clock, token, body)
		return map[string]any{"MD5OfMessageBody": "<md5>", "MessageId": "<uuid>"}, nil
	})
}

// findToken looks for the task token in a message body the template built itself (e.g.
// {"TaskToken.$": "$$.Task.Token"}), for templates that do not use .waitForTaskToken's own field.
func findToken(body any) string {
	switch b := body.(type) {
	case map[string]any:
		for k, v := range b {
			if s, ok := v.(string); ok && strings.EqualFold(k, "TaskToken") {
				return s
			}
			if t := findToken(v); t != "" {
				return t
			}
		}
	case string:
		if v, err := jsonv.DecodeString(b); err == nil {
			return findToken(v)
		}
	}
	return ""
}

// consumers are the recorded tests' consumers, by the name the manifest uses.
var consumers = map[string]Consumer{
	// Nobody answers: the task times out (or the execution is left waiting).
	"none": func(context.Context, *asl.Engine, asl.Clock, string, any) {},
	// test_sqs_wait_for_task_token: SendTaskSuccess with the message's "Message" field as output.
	"success-message": func(_ context.Context, eng *asl.Engine, _ asl.Clock, tok string, body any) {
		m, _ := body.(map[string]any)
		_ = eng.SendTaskSuccess(tok, jsonv.EncodeString(m["Message"]))
	},
	// _handle_sqs_task_token_with_heartbeats_and_success: ten SendTaskHeartbeat calls, then
	// SendTaskSuccess with the message body as output.
	"heartbeats-success": func(_ context.Context, eng *asl.Engine, _ asl.Clock, tok string, body any) {
		for range 10 {
			_ = eng.SendTaskHeartbeat(tok)
		}
		_ = eng.SendTaskSuccess(tok, jsonv.EncodeString(body))
	},
	// test_sqs_failure_in_wait_for_task_token.
	"failure": func(_ context.Context, eng *asl.Engine, _ asl.Clock, tok string, _ any) {
		_ = eng.SendTaskFailure(tok, "Failure error", "Failure cause")
	},
	// test_sqs_failure_in_wait_for_task_tok_no_error_field: SendTaskFailure without error or cause.
	"failure-empty": func(_ context.Context, eng *asl.Engine, _ asl.Clock, tok string, _ any) {
		_ = eng.SendTaskFailure(tok, "", "")
	},
}
