// Package chatenv builds the chat Lambda's router and the chat service from the environment; the
// system function builds the same service for session.chat.
package chatenv

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/chat"
	"sinew/internal/dispatch"
	"sinew/internal/dispatch/lambdainvoke"
	"sinew/internal/handler"
	"sinew/internal/handler/modelenv"
	"sinew/internal/httpapi"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Router builds the chat Lambda's router from the environment: POST
// /sessions/{session_id}/chat over the chat service of Service; log is the router's and the
// service's logger.
func Router(ctx context.Context, log *slog.Logger) (*httpapi.Router, error) {
	env, err := handler.Load(ctx)
	if err != nil {
		return nil, err
	}
	svc, err := Service(ctx, env, log)
	if err != nil {
		return nil, err
	}
	rt := httpapi.New(httpapi.Options{JWTClaim: env.Config.JWTClaim, Logger: log})
	chat.Register(rt, svc)
	return rt, nil
}

// Service builds the chat service from env: the store (the chat never opens setup), the
// configured model and the tool formatter (package modelenv), the agent_loop starter (Starter) and
// the dispatcher over the Lambda Invoke API to the executors named by SINEW_FUNCTION_*.
func Service(ctx context.Context, env *handler.Env, log *slog.Logger) (*chat.Service, error) {
	cfg := env.Config
	model, err := modelenv.Model(ctx, env)
	if err != nil {
		return nil, err
	}
	st := env.Store(handler.NoKey{})
	// AWS_ENDPOINT_URL_SFN finds local mode's Step Functions.
	sfnc := sfn.NewFromConfig(env.AWS)
	svc := chat.New(chat.Deps{
		Store:     st,
		Starter:   &agentloop.Starter{Store: st, SFN: sfnc, ARN: cfg.AgentLoopARN},
		Liveness:  workflow.NewLiveness(st, sfnc, cfg.ToolCallARN, cfg.AgentLoopARN),
		Model:     model,
		Formatter: modelenv.Formatter(),
		Dispatcher: &dispatch.Dispatcher{Invoker: &lambdainvoke.Invoker{Client: lambda.NewFromConfig(env.AWS)}, Functions: map[tool.Type]string{
			tool.TypeIntegration: cfg.FunctionNames["integration"],
			tool.TypeAPICall:     cfg.FunctionNames["apicall"],
			tool.TypeSystem:      cfg.FunctionNames["system"],
		}},
		FlagDefaults:     cfg.FlagDefaults,
		Budget:           cfg.ChatBudget,
		Log:              log,
		MaxCallsPerReply: cfg.MaxCallsPerReply,
		MaxCallsPerTurn:  cfg.MaxCallsPerTurn,
	})
	return svc, nil
}

// Starter starts agent_loop executions (AWS_ENDPOINT_URL_SFN finds local mode's Step Functions).
func Starter(env *handler.Env, st *store.Store) *agentloop.Starter {
	return &agentloop.Starter{Store: st, SFN: sfn.NewFromConfig(env.AWS), ARN: env.Config.AgentLoopARN}
}
