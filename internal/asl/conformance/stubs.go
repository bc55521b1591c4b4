package conformance

import (
	"context"
	"fmt"
	"strings"

	"sinew/internal/asl"
)

// Lambdas stands in for the few Lambda handlers the recorded tests deploy, by function name. The
// error payloads carry the recorded errorType and errorMessage; the Python stack traces and request
// ids of the recordings cannot be reproduced, so comparisons skip those causes.
type Lambdas map[string]func(payload []byte) *asl.LambdaResponse

// Invoke implements asl.LambdaInvoker; a function ARN is matched by its name.
func (l Lambdas) Invoke(_ context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	name := req.FunctionName
	if i := strings.Index(name, ":function:"); i >= 0 {
		name = name[i+len(":function:"):]
		if j := strings.Index(name, ":"); j >= 0 {
			name = name[:j]
		}
	}
	f, ok := l[name]
	if !ok {
		return nil, &asl.LambdaServiceError{Code: "ResourceNotFoundException", Message: fmt.Sprintf(
			"Function not found: arn:aws:lambda:us-east-1:000000000000:function:%s (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: 00000000-0000-0000-0000-000000000000; Proxy: null)", name)}
	}
	return f(req.Payload), nil
}

// Identity returns its event.
func Identity(p []byte) *asl.LambdaResponse { return &asl.LambdaResponse{Payload: p} }

// Raise returns a function error of type typ with message msg.
func Raise(typ, msg string) func([]byte) *asl.LambdaResponse {
	return func([]byte) *asl.LambdaResponse {
		return &asl.LambdaResponse{FunctionError: "Unhandled", Payload: []byte(fmt.Sprintf(`{"errorMessage":%q,"errorType":%q}`, msg, typ))}
	}
}
