// Package chat is the chat Lambda: POST /sessions/{session_id}/chat, the model-tool loop within the
// request's time budget (package chat's service); the system function builds the same service for
// session.chat (Service).
package chat

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambda"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	chatpkg "sinew/internal/chat"
	"sinew/internal/dispatch"
	"sinew/internal/dispatch/lambdainvoke"
	"sinew/internal/handler"
	"sinew/internal/handler/model"
	"sinew/internal/httpapi"
	"sinew/internal/lambdaboundary"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// New builds the chat Lambda from env: POST /sessions/{session_id}/chat over the chat service of
// Service.
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	svc, err := Service(ctx, l, env.Logger())
	if err != nil {
		return nil, err
	}
	rt := httpapi.New(httpapi.Options{JWTClaim: l.Config.JWTClaim, Logger: env.Logger()})
	chatpkg.Register(rt, svc)
	return lambdaboundary.Handler(rt.ServeEvent), nil
}

// Service builds the chat service from l: the store (the chat never opens setup), the configured
// model and the tool formatter (package model), the agent_loop starter (Starter) and the dispatcher
// over the Lambda Invoke API to the executors named by SINEW_FUNCTION_*; log is its logger.
func Service(ctx context.Context, l *handler.Loaded, log *slog.Logger) (*chatpkg.Service, error) {
	cfg := l.Config
	m, err := model.Model(ctx, l)
	if err != nil {
		return nil, err
	}
	st := l.Store(handler.NoKey{})
	// AWS_ENDPOINT_URL_SFN finds local mode's Step Functions.
	sfnc := sfn.NewFromConfig(l.AWS)
	svc := chatpkg.New(chatpkg.Deps{
		Store:     st,
		Starter:   &agentloop.Starter{Store: st, SFN: sfnc, ARN: cfg.AgentLoopARN},
		Liveness:  workflow.NewLiveness(st, sfnc, cfg.ToolCallARN, cfg.AgentLoopARN).WithExpress(cfg.ToolCallExpressARN != ""),
		Model:     m,
		Formatter: model.Formatter(),
		Dispatcher: &dispatch.Dispatcher{Invoker: &lambdainvoke.Invoker{Client: lambdasvc.NewFromConfig(l.AWS)}, Functions: map[tool.Type]string{
			tool.TypeIntegration: cfg.FunctionNames["integration"],
			tool.TypeAPICall:     cfg.FunctionNames["apicall"],
			tool.TypeSystem:      cfg.FunctionNames["system"],
		}},
		FlagDefaults:        cfg.FlagDefaults,
		Budget:              cfg.ChatBudget,
		Log:                 log,
		MaxCallsPerReply:    cfg.MaxCallsPerReply,
		MaxCallsPerTurn:     cfg.MaxCallsPerTurn,
		ToolSearchThreshold: cfg.ToolSearchThreshold,
	})
	return svc, nil
}

// Starter starts agent_loop executions (AWS_ENDPOINT_URL_SFN finds local mode's Step Functions).
func Starter(l *handler.Loaded, st *store.Store) *agentloop.Starter {
	return &agentloop.Starter{Store: st, SFN: sfn.NewFromConfig(l.AWS), ARN: l.Config.AgentLoopARN}
}
