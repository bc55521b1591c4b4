package stack

import (
	"slices"
	"strings"
	"testing"

	"sinew/internal/config"
	"sinew/internal/fault"
)

func parse(ctx map[string]any) (Settings, error) {
	var keys []string
	for k := range ctx {
		keys = append(keys, k)
	}
	return ParseSettings(func(k string) (any, bool) { v, ok := ctx[k]; return v, ok }, keys)
}

func TestParseSettingsDefaults(t *testing.T) {
	s, err := parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Destroy || s.OIDCIssuer != "" || len(s.CORSOrigins) != 0 || s.ThrottleRate != DefaultThrottleRate ||
		s.ThrottleBurst != DefaultThrottleBurst || s.LogRetentionDays != DefaultLogRetentionDays || s.EventBusName != "" ||
		s.UsesOpenAI() || len(s.Env) != 0 || s.Stage != StageProd || s.LogLevel != "INFO" ||
		s.ChatThrottleRate != DefaultChatThrottleRate || s.ChatThrottleBurst != DefaultChatThrottleBurst || len(s.Tags) != 0 ||
		len(s.Reserved) != 2 || s.Reserved["api"] != DefaultAPIReservedConcurrency || s.Reserved["settle"] != DefaultSettleReservedConcurrency ||
		s.TableMaxReadUnits != DefaultTableMaxReadUnits || s.TableMaxWriteUnits != DefaultTableMaxWriteUnits {
		t.Errorf("defaults: %+v", s)
	}
	// The default model is a Bedrock one, so it is granted.
	cfg, _ := config.Load(func(string) (string, bool) { return "", false })
	if !slices.Equal(s.BedrockModels, []string{cfg.Model.Name}) {
		t.Errorf("models %v, want the default %s", s.BedrockModels, cfg.Model.Name)
	}
}

func TestParseSettings(t *testing.T) {
	tests := []struct {
		name  string
		ctx   map[string]any
		check func(t *testing.T, s Settings)
	}{
		{"destroy", map[string]any{CtxRemovalPolicy: "DESTROY"}, func(t *testing.T, s Settings) {
			if !s.Destroy {
				t.Error("not destroy")
			}
		}},
		{"dev stage", map[string]any{CtxStage: "dev"}, func(t *testing.T, s Settings) {
			if s.Stage != StageDev || !s.Destroy || s.LogRetentionDays != DevLogRetentionDays || s.LogLevel != "DEBUG" {
				t.Errorf("%+v", s)
			}
		}},
		{"dev stage kept", map[string]any{CtxStage: "dev", CtxRemovalPolicy: "retain"}, func(t *testing.T, s Settings) {
			if s.Destroy {
				t.Error("an explicit retain lost to the stage")
			}
		}},
		{"chat throttle follows a lower API's", map[string]any{CtxThrottleRate: 3, CtxThrottleBurst: 4}, func(t *testing.T, s Settings) {
			if s.ChatThrottleRate != 3 || s.ChatThrottleBurst != 4 {
				t.Errorf("chat throttle %g/%d", s.ChatThrottleRate, s.ChatThrottleBurst)
			}
		}},
		{"tags", map[string]any{CtxTags: "cost-center=ml, team = agents "}, func(t *testing.T, s Settings) {
			if len(s.Tags) != 2 || s.Tags["cost-center"] != "ml" || s.Tags["team"] != "agents" {
				t.Errorf("tags %v", s.Tags)
			}
		}},
		{"oidc", map[string]any{CtxOIDCIssuer: "https://login.example.com/realms/x", CtxOIDCAudience: " a , b,a "}, func(t *testing.T, s Settings) {
			if !slices.Equal(s.OIDCAudience, []string{"a", "b"}) {
				t.Errorf("audience %v", s.OIDCAudience)
			}
		}},
		{"numbers from cdk.json", map[string]any{CtxThrottleRate: 12.5, CtxThrottleBurst: 30, CtxLogRetentionDays: 365}, func(t *testing.T, s Settings) {
			if s.ThrottleRate != 12.5 || s.ThrottleBurst != 30 || s.LogRetentionDays != 365 {
				t.Errorf("%+v", s)
			}
		}},
		{"models", map[string]any{"SINEW_MODEL": "bedrock:eu.anthropic.claude-haiku-4-5-20251001-v1:0", CtxBedrockModels: "amazon.nova-lite-v1:0,eu.anthropic.claude-haiku-4-5-20251001-v1:0,jp.anthropic.claude-haiku-4-5-20251001-v1:0"},
			func(t *testing.T, s Settings) {
				if !slices.Equal(s.BedrockModels, []string{"eu.anthropic.claude-haiku-4-5-20251001-v1:0", "amazon.nova-lite-v1:0", "jp.anthropic.claude-haiku-4-5-20251001-v1:0"}) {
					t.Errorf("models %v", s.BedrockModels)
				}
				if s.Env["SINEW_MODEL"] == "" {
					t.Error("SINEW_MODEL not kept for the functions")
				}
			}},
		{"openai", map[string]any{"SINEW_MODEL": "openai:gpt-4o-mini", "SINEW_OPENAI_BASE_URL": "https://api.openai.com/v1",
			CtxOpenAIKeySecretARN: "arn:aws:secretsmanager:us-east-1:123456789012:secret:openai"}, func(t *testing.T, s Settings) {
			if !s.UsesOpenAI() || len(s.BedrockModels) != 0 || s.OpenAIKeySecretARN == "" {
				t.Errorf("%+v", s)
			}
		}},
		{"limits from cdk.json", map[string]any{CtxAPIReservedConcurrency: 30.0, CtxSettleReservedConcurrency: "0", CtxTableMaxReadUnits: 1e6, CtxTableMaxWriteUnits: "0"},
			func(t *testing.T, s Settings) {
				if len(s.Reserved) != 1 || s.Reserved["api"] != 30 || s.TableMaxReadUnits != 1000000 || s.TableMaxWriteUnits != 0 {
					t.Errorf("reserved %v, table maximums %d/%d", s.Reserved, s.TableMaxReadUnits, s.TableMaxWriteUnits)
				}
			}},
		{"deletion protection from cdk.json", map[string]any{CtxDeletionProtection: true}, func(t *testing.T, s Settings) {
			if !s.DeletionProtection {
				t.Error("deletion protection off")
			}
		}},
		{"cors", map[string]any{CtxCORSOrigins: "https://a.example.com, http://localhost:3000,*"}, func(t *testing.T, s Settings) {
			if len(s.CORSOrigins) != 3 {
				t.Errorf("origins %v", s.CORSOrigins)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse(tt.ctx)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

// TestParseSettingsRefuses checks each bad setting is an InvalidInput naming it.
func TestParseSettingsRefuses(t *testing.T) {
	tests := []struct {
		name  string
		ctx   map[string]any
		field string
		msg   string
	}{
		{"removal policy", map[string]any{CtxRemovalPolicy: "snapshot"}, CtxRemovalPolicy, "retain or destroy"},
		{"stage", map[string]any{CtxStage: "staging"}, CtxStage, "prod or dev"},
		{"deletion protection", map[string]any{CtxDeletionProtection: "yes"}, CtxDeletionProtection, "true or false"},
		{"tag without a value", map[string]any{CtxTags: "team"}, CtxTags, "key=value"},
		{"aws tag", map[string]any{CtxTags: "aws:team=x"}, CtxTags, "aws:"},
		{"chat throttle", map[string]any{CtxChatThrottleRate: 0}, CtxChatThrottleRate, "from 1"},
		{"chat throttle above the API's", map[string]any{CtxThrottleRate: 3, CtxChatThrottleRate: 4}, CtxChatThrottleRate, "lower one"},
		{"audience without issuer", map[string]any{CtxOIDCAudience: "a"}, CtxOIDCAudience, "without " + CtxOIDCIssuer},
		{"issuer without audience", map[string]any{CtxOIDCIssuer: "https://login.example.com"}, CtxOIDCAudience, "required"},
		{"http issuer", map[string]any{CtxOIDCIssuer: "http://login.example.com", CtxOIDCAudience: "a"}, CtxOIDCIssuer, "https"},
		{"origin with a path", map[string]any{CtxCORSOrigins: "https://a.example.com/app"}, CtxCORSOrigins, "not an origin"},
		{"throttle", map[string]any{CtxThrottleRate: "fast"}, CtxThrottleRate, "a number"},
		{"burst", map[string]any{CtxThrottleBurst: 0}, CtxThrottleBurst, "from 1"},
		{"retention", map[string]any{CtxLogRetentionDays: 31}, CtxLogRetentionDays, "accepts only"},
		{"email", map[string]any{CtxAlarmEmail: "Ops <ops@example.com>"}, CtxAlarmEmail, "bare e-mail"},
		{"bus", map[string]any{CtxEventBusName: "no spaces"}, CtxEventBusName, "event bus name"},
		{"secret arn", map[string]any{"SINEW_OPENAI_BASE_URL": "https://x.example.com", CtxOpenAIKeySecretARN: "openai"}, CtxOpenAIKeySecretARN, "secret ARN"},
		{"secret without endpoint", map[string]any{CtxOpenAIKeySecretARN: "arn:aws:secretsmanager:us-east-1:123456789012:secret:k"}, CtxOpenAIKeySecretARN, "SINEW_OPENAI_BASE_URL"},
		{"both layers", map[string]any{CtxFFmpegLayerARN: "arn:aws:lambda:us-east-1:123456789012:layer:ffmpeg:1", CtxFFmpegLayerZip: "f.zip"}, CtxFFmpegLayerARN, "both"},
		{"layer arn", map[string]any{CtxFFmpegLayerARN: "ffmpeg"}, CtxFFmpegLayerARN, "layer version ARN"},
		{"layer zip", map[string]any{CtxFFmpegLayerZip: "ffmpeg.tar"}, CtxFFmpegLayerZip, ".zip"},
		{"model id", map[string]any{CtxBedrockModels: "claude"}, CtxBedrockModels, "not a Bedrock model id"},
		{"scripted model", map[string]any{"SINEW_MODEL": "scripted:events/x.json"}, config.EnvModel, "tests and local mode"},
		{"openai without endpoint", map[string]any{"SINEW_MODEL": "openai:gpt-4o"}, config.EnvOpenAIBaseURL, "needs"},
		{"function setting checked by config", map[string]any{"SINEW_CHAT_BUDGET_S": "99"}, config.EnvChatBudget, "less than"},
		{"negative reservation", map[string]any{CtxAPIReservedConcurrency: -1}, CtxAPIReservedConcurrency, "whole number"},
		{"fractional reservation", map[string]any{CtxSettleReservedConcurrency: 2.5}, CtxSettleReservedConcurrency, "whole number"},
		{"table maximum", map[string]any{CtxTableMaxWriteUnits: "lots"}, CtxTableMaxWriteUnits, "whole number"},
		{"variable the stack fills", map[string]any{"SINEW_TABLE": "mine"}, "SINEW_TABLE", "not a setting"},
		{"typo", map[string]any{"SINEW_MODLE": "bedrock:x.y"}, "SINEW_MODLE", "not a setting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(tt.ctx)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q lacks %q", err, tt.msg)
			}
			found := false
			for _, e := range unjoin(err) {
				if fault.KindOf(e) == fault.InvalidInput && fault.FieldOf(e) == tt.field {
					found = true
				}
			}
			if !found {
				t.Errorf("no InvalidInput fault naming %s in %q", tt.field, err)
			}
		})
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}

func TestOperatorVariables(t *testing.T) {
	vars := OperatorVariables()
	for _, v := range []string{config.EnvModel, config.EnvAPICallAllow, config.EnvFlagDefaults, config.EnvJWTClaim, config.EnvChatBudget, config.EnvPendingEvents, config.ProviderEnv("brave")} {
		if !slices.Contains(vars, v) {
			t.Errorf("%s is not an operator setting: %v", v, vars)
		}
	}
	for _, v := range []string{config.EnvTable, config.EnvOpenAIKey, config.EnvSecretsKey, config.EnvEventBus, config.FunctionEnv("api")} {
		if slices.Contains(vars, v) {
			t.Errorf("%s is filled by the stack, not the operator", v)
		}
	}
}
