// Package prepareenv builds the prepare function's dependencies from the environment. It is apart
// from package handler because it links the Lambda client (package lambdainvoke), which the
// executors, built from package handler too, never need.
package prepareenv

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"sinew/internal/dispatch/lambdainvoke"
	"sinew/internal/handler"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Deps builds the prepare function's dependencies: the store, and the executors named by
// SINEW_FUNCTION_* over the Lambda Invoke API (AWS_ENDPOINT_URL_LAMBDA finds local mode's).
func Deps(ctx context.Context) (handler.PrepareDeps, error) {
	env, err := handler.Load(ctx)
	if err != nil {
		return handler.PrepareDeps{}, err
	}
	names := env.Config.FunctionNames
	return handler.PrepareDeps{
		Workflow: &workflow.Service{Store: env.Store(handler.NoKey{})},
		Invoker:  &lambdainvoke.Invoker{Client: lambda.NewFromConfig(env.AWS)},
		Executors: map[tool.Type]string{
			tool.TypeIntegration: names["integration"],
			tool.TypeAPICall:     names["apicall"],
			tool.TypeSystem:      names["system"],
		},
	}, nil
}
