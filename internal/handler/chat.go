package handler

import (
	"context"
	"fmt"
	"log/slog"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/chat"
	"sinew/internal/config"
	"sinew/internal/dispatch"
	"sinew/internal/executions"
	"sinew/internal/httpapi"
	"sinew/internal/integrations/all"
	"sinew/internal/llm/models"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/netguard"
	"sinew/internal/system"
	"sinew/internal/tool"
)

// ChatFromEnv builds the chat Lambda's router from the environment: POST
// /sessions/{session_id}/chat over the chat service of ChatServiceFromEnv; log is the router's and
// the service's logger.
func ChatFromEnv(ctx context.Context, log *slog.Logger) (*httpapi.Router, error) {
	svc, cfg, err := ChatServiceFromEnv(ctx, log)
	if err != nil {
		return nil, err
	}
	rt := httpapi.New(httpapi.Options{JWTClaim: cfg.JWTClaim, Logger: log})
	chat.Register(rt, svc)
	return rt, nil
}

// ChatServiceFromEnv builds the chat service from the environment: the store (the chat never opens setup),
// the configured model, the formatter over every provider's schemas and the system handlers, and
// the dispatcher over the Lambda Invoke API to the executors named by SINEW_FUNCTION_*.
func ChatServiceFromEnv(ctx context.Context, log *slog.Logger) (*chat.Service, *config.Config, error) {
	env, err := Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	cfg := env.Config
	model, err := models.FromConfig(ctx, cfg, models.Deps{AWS: env.AWS, SecretValue: secretValue(env.AWS)})
	if err != nil {
		return nil, nil, fmt.Errorf("the model: %w", err)
	}
	// The registry is used only for schemas here; the guard matters to the executors.
	reg, err := all.New(netguard.New(netguard.WithAllowlist(cfg.APICallAllow)))
	if err != nil {
		return nil, nil, err
	}
	st := env.Store(NoKey{})
	// AWS_ENDPOINT_URL_SFN finds local mode's Step Functions.
	sfnc := sfn.NewFromConfig(env.AWS)
	svc := chat.New(chat.Deps{
		Store:     st,
		Starter:   &agentloop.Starter{Store: st, SFN: sfnc, ARN: cfg.AgentLoopARN},
		Liveness:  executions.NewLiveness(st, sfnc, cfg.ToolCallARN, cfg.AgentLoopARN),
		Model:     model,
		Formatter: &toolfmt.Formatter{Integrations: reg, System: system.Schema},
		Dispatcher: &dispatch.Dispatcher{Invoker: &dispatch.LambdaInvoker{Client: lambda.NewFromConfig(env.AWS)}, Functions: map[tool.Type]string{
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
	return svc, cfg, nil
}

// secretValue reads a Secrets Manager secret's string (the OpenAI-compatible endpoint's key).
func secretValue(aws awsv2.Config) func(ctx context.Context, name string) (string, error) {
	c := secretsmanager.NewFromConfig(aws)
	return func(ctx context.Context, name string) (string, error) {
		out, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: awsv2.String(name)})
		if err != nil {
			return "", fmt.Errorf("read the secret %s: %w", name, err)
		}
		return awsv2.ToString(out.SecretString), nil
	}
}
