// Package lambdainvoke is the dispatcher's transport over the Lambda Invoke API, and prepare's for
// the Event invocations it hands an earlier definition's call on with. It is apart from
// package dispatch so that the functions that only guard their calls by id (the executors) do not
// link the Lambda client and run its initialisation at each cold start; the chat function links it.
package lambdainvoke

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda/messages"
	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"sinew/internal/dispatch"
	"sinew/internal/fault"
	"sinew/internal/lambdaboundary"
)

// Invoker is the dispatcher's transport over the Lambda Invoke API (deployed, or local mode's
// endpoint through AWS_ENDPOINT_URL_LAMBDA).
type Invoker struct {
	Client interface {
		Invoke(context.Context, *lambda.InvokeInput, ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
	}
}

var _ dispatch.Invoker = (*Invoker)(nil)

// Invoke calls function synchronously. A function error comes back as its named error;
// Lambda's own throttling and service faults are Transient, so the dispatcher retries them.
func (l *Invoker) Invoke(ctx context.Context, function string, payload []byte) ([]byte, *messages.InvokeResponse_Error, error) {
	out, err := l.Client.Invoke(ctx, &lambda.InvokeInput{FunctionName: awsv2.String(function), Payload: payload})
	if err != nil {
		return nil, nil, invokeErr(err, function)
	}
	if out.FunctionError != nil {
		e, ok := lambdaboundary.ParsePayload(out.Payload)
		if !ok {
			e = messages.InvokeResponse_Error{Type: string(fault.Internal), Message: fmt.Sprintf("%s failed (%s)", function, awsv2.ToString(out.FunctionError))}
		}
		if e.Type == "Sandbox.Timedout" { // Lambda's name for a function past its timeout
			e = messages.InvokeResponse_Error{Type: string(fault.Timeout), Message: fmt.Sprintf("%s ran past its timeout (%s)", function, e.Message)}
		}
		return nil, &e, nil
	}
	return out.Payload, nil, nil
}

// InvokeAsync queues an Event invocation of function, which Lambda runs without the caller
// waiting for it (and retries twice if it fails); Lambda's own throttling and service faults are
// Transient.
func (l *Invoker) InvokeAsync(ctx context.Context, function string, payload []byte) error {
	_, err := l.Client.Invoke(ctx, &lambda.InvokeInput{FunctionName: awsv2.String(function), Payload: payload,
		InvocationType: types.InvocationTypeEvent})
	if err != nil {
		return invokeErr(err, function)
	}
	return nil
}

// invokeErr types a failed Invoke (fault.FromAWS); a function that Lambda is still creating or
// updating is Transient too, as it takes invocations again once done.
func invokeErr(err error, function string) error {
	switch fault.AWSCode(err) {
	case "ResourceNotReadyException", "ResourceConflictException":
		return fault.Wrap(fault.Transient, err, "invoking %s: the function is being updated; try again", function)
	}
	return fault.FromAWS(err, "invoking "+function)
}
