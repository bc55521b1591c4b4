package chat

import (
	"context"
	"fmt"
	"log/slog"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/agentloop"
	"sinew/internal/chat"
	"sinew/internal/config"
	"sinew/internal/dispatch"
	"sinew/internal/handlers/common"
	modelh "sinew/internal/handlers/model"
	"sinew/internal/integrations/all"
	"sinew/internal/llm/models"
	"sinew/internal/netguard"
	"sinew/internal/tool"
	"sinew/internal/toolfmt"
)

// FromEnv builds the chat service from the environment: the store (the chat never opens setup),
// the configured model, the formatter over every provider's schemas and the system handlers, and
// the dispatcher over the Lambda Invoke API to the executors named by SINEW_FUNCTION_*.
func FromEnv(ctx context.Context, log *slog.Logger) (*chat.Service, *config.Config, error) {
	env, err := common.Load(ctx)
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
	st := env.Store(common.NoKey{})
	svc := chat.New(chat.Deps{
		Store: st,
		// AWS_ENDPOINT_URL_SFN finds local mode's Step Functions.
		Starter:   &agentloop.Starter{Store: st, SFN: sfn.NewFromConfig(env.AWS), ARN: cfg.AgentLoopARN},
		Model:     model,
		Formatter: &toolfmt.Formatter{Integrations: reg, System: modelh.SystemSchema},
		Dispatcher: &dispatch.Dispatcher{Invoker: &chat.LambdaInvoker{Client: lambda.NewFromConfig(env.AWS)}, Functions: map[tool.Type]string{
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
