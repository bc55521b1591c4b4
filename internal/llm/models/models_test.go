package models_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/llm/bedrock"
	"sinew/internal/llm/models"
)

func TestFromConfig(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "..", "events", "models", "echo_demo.json")

	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	defer srv.Close()
	secrets := func(_ context.Context, name string) (string, error) {
		if name != "sinew/openai" {
			return "", errors.New("no such secret")
		}
		return "sk-from-secrets", nil
	}

	t.Run("scripted", func(t *testing.T) {
		m, err := models.FromConfig(context.Background(), &config.Config{Model: config.Model{Provider: "scripted", Name: script}}, models.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Converse(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "echo"}}, Tools: []llm.Function{{Name: "echo"}, {Name: "ask_user"}}})
		if err != nil || !res.Scripted {
			t.Errorf("res %+v err %v", res, err)
		}
	})
	t.Run("openai with the key from Secrets Manager", func(t *testing.T) {
		c := &config.Config{Model: config.Model{Provider: "openai", Name: "m"}, OpenAIBaseURL: srv.URL, OpenAIKey: "sinew/openai"}
		m, err := models.FromConfig(context.Background(), c, models.Deps{SecretValue: secrets})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Converse(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err != nil {
			t.Fatal(err)
		}
		if gotAuth != "Bearer sk-from-secrets" {
			t.Errorf("Authorization = %q", gotAuth)
		}
	})
	t.Run("openai with the key from the environment (local mode)", func(t *testing.T) {
		t.Setenv(config.EnvModel, "openai:m")
		t.Setenv(config.EnvOpenAIBaseURL, srv.URL)
		t.Setenv(config.EnvOpenAIAPIKey, "sk-from-env")
		c, err := config.FromEnv()
		if err != nil {
			t.Fatal(err)
		}
		m, err := models.FromConfig(context.Background(), c, models.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Converse(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err != nil {
			t.Fatal(err)
		}
		if gotAuth != "Bearer sk-from-env" {
			t.Errorf("Authorization = %q", gotAuth)
		}
		t.Setenv(config.EnvOpenAIKey, "sinew/openai")
		if _, err := config.FromEnv(); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("both ways of giving the key: err = %v, want a refusal", err)
		}
	})
	t.Run("bedrock", func(t *testing.T) {
		m, err := models.FromConfig(context.Background(), &config.Config{Model: config.Model{Provider: "bedrock", Name: "amazon.nova-lite-v1:0"}}, models.Deps{AWS: aws.Config{Region: "us-east-1"}})
		if b, ok := m.(*bedrock.Model); err != nil || !ok || b.ModelID != "amazon.nova-lite-v1:0" {
			t.Errorf("model %#v err %v", m, err)
		}
	})
	t.Run("missing script", func(t *testing.T) {
		_, err := models.FromConfig(context.Background(), &config.Config{Model: config.Model{Provider: "scripted", Name: "/nonexistent.json"}}, models.Deps{})
		if !fault.Is(err, fault.InvalidInput) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unknown provider", func(t *testing.T) {
		_, err := models.FromConfig(context.Background(), &config.Config{Model: config.Model{Provider: "gemini", Name: "x"}}, models.Deps{})
		if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != config.EnvModel {
			t.Errorf("err = %v", err)
		}
	})
}
