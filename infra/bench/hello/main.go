// Command hello is the baseline for cold starts: the smallest aws-lambda-go handler, built the same
// way as sinew's functions (infra/scripts/build.sh flags).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, map[string]any) (string, error) { return "hello", nil })
}
