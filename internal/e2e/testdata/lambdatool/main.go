// Command lambdatool is a developer's Lambda function for the aws_lambda tests: it adds a and b,
// fails with its "fail" argument as the message, and echoes anything else.
package main

import (
	"context"
	"errors"

	"github.com/aws/aws-lambda-go/lambda"
)

func handle(_ context.Context, ev map[string]any) (any, error) {
	if msg, ok := ev["fail"].(string); ok {
		return nil, errors.New(msg)
	}
	a, aok := ev["a"].(float64)
	b, bok := ev["b"].(float64)
	if aok && bok {
		return map[string]any{"sum": a + b}, nil
	}
	return map[string]any{"event": ev}, nil
}

func main() { lambda.Start(handle) }
