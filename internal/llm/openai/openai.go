// Package openai is the llm.Model adapter for any OpenAI-compatible chat completions endpoint
// (OpenAI, vLLM, Ollama, a LiteLLM proxy), through the official openai-go client with a
// configurable base URL and key. The client's own retries are off: a Transient error goes back to
// the caller, whose retry policy is the one place that decides.
package openai

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/llm"
)

// Model talks to one model of an OpenAI-compatible endpoint.
type Model struct {
	client  oa.Client
	model   string
	baseURL string // as configured, for messages ("" is OpenAI's)
}

// Options configure a Model.
type Options struct {
	BaseURL    string       // e.g. http://127.0.0.1:11434/v1; "" is OpenAI's
	APIKey     string       // may be empty for servers that take none
	HTTPClient *http.Client // nil: the client's default
}

// New makes a Model for model at the endpoint.
func New(model string, o Options) *Model {
	opts := []option.RequestOption{option.WithMaxRetries(0)}
	if o.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.BaseURL))
	}
	// A key is always set so OPENAI_API_KEY from the environment never leaks into a request for
	// another endpoint; servers that need none ignore it.
	key := o.APIKey
	if key == "" {
		key = "none"
	}
	opts = append(opts, option.WithAPIKey(key))
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &Model{client: oa.NewClient(opts...), model: model, baseURL: o.BaseURL}
}

// Converse implements llm.Model.
func (m *Model) Converse(ctx context.Context, req llm.Request) (llm.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	out, err := m.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return llm.Response{}, classify(ctx, err, m.endpoint())
	}
	if len(out.Choices) == 0 {
		return llm.Response{}, fault.New(fault.Provider, "the model endpoint answered without a choice")
	}
	ch := out.Choices[0]
	res := llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: ch.Message.Content},
		Usage:   llm.Usage{PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens, TotalTokens: out.Usage.TotalTokens},
		Model:   out.Model,
	}
	if res.Model == "" {
		res.Model = string(params.Model)
	}
	for _, c := range ch.Message.ToolCalls {
		if c.Type != "" && c.Type != "function" {
			continue // custom tools are never offered, so never expected
		}
		res.Message.ToolCalls = append(res.Message.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	var reason llm.FinishReason
	switch ch.FinishReason {
	case "tool_calls", "function_call":
		reason = llm.FinishToolCalls
	case "length":
		reason = llm.FinishLength
	case "content_filter":
		reason = llm.FinishContentFilter
	default:
		reason = llm.FinishStop
	}
	res.FinishReason = llm.Finish(res.Message, reason)
	return res, nil
}

func (m *Model) params(req llm.Request) (oa.ChatCompletionNewParams, error) {
	model := m.model
	if req.Model != "" {
		model = req.Model
	}
	p := oa.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleSystem:
			p.Messages = append(p.Messages, oa.SystemMessage(msg.Content))
		case llm.RoleUser:
			p.Messages = append(p.Messages, oa.UserMessage(msg.Content))
		case llm.RoleAssistant:
			a := oa.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = param.NewOpt(msg.Content)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, oa.ChatCompletionMessageToolCallUnionParam{OfFunction: &oa.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: oa.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
				}})
			}
			p.Messages = append(p.Messages, oa.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case llm.RoleTool:
			p.Messages = append(p.Messages, oa.ToolMessage(msg.Content, msg.ToolCallID))
		default:
			f := "messages[" + strconv.Itoa(i) + "].role"
			return p, fault.Invalid(f, "%s must be system, user, assistant or tool, not %q", f, msg.Role)
		}
	}
	for _, f := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: f.Name, Parameters: shared.FunctionParameters(objectSchema(f.Parameters))}
		if f.Description != "" {
			def.Description = param.NewOpt(f.Description)
		}
		p.Tools = append(p.Tools, oa.ChatCompletionFunctionTool(def))
	}
	// tool_choice only with tools: OpenAI refuses it without them, and "none" means nothing then.
	if len(req.Tools) > 0 {
		switch req.ToolChoice.Mode {
		case llm.ChoiceNone, llm.ChoiceRequired:
			p.ToolChoice.OfAuto = param.NewOpt(string(req.ToolChoice.Mode))
		case llm.ChoiceNamed:
			p.ToolChoice.OfFunctionToolChoice = &oa.ChatCompletionNamedToolChoiceParam{Function: oa.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice.Name}}
		}
	}
	s := req.Settings
	if s.Temperature != nil {
		p.Temperature = param.NewOpt(*s.Temperature)
	}
	if s.MaxTokens != nil {
		// max_tokens rather than max_completion_tokens: the compatible servers (vLLM, Ollama,
		// LiteLLM) all read it, and OpenAI still does for its chat models.
		p.MaxTokens = param.NewOpt(*s.MaxTokens)
	}
	if s.TopP != nil {
		p.TopP = param.NewOpt(*s.TopP)
	}
	if len(s.Stop) > 0 {
		p.Stop.OfStringArray = s.Stop
	}
	if s.Seed != nil {
		p.Seed = param.NewOpt(*s.Seed)
	}
	if s.FrequencyPenalty != nil {
		p.FrequencyPenalty = param.NewOpt(*s.FrequencyPenalty)
	}
	if s.PresencePenalty != nil {
		p.PresencePenalty = param.NewOpt(*s.PresencePenalty)
	}
	return p, nil
}

func objectSchema(p map[string]any) map[string]any {
	if p == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return p
}

// endpoint names the endpoint in messages.
func (m *Model) endpoint() string {
	if m.baseURL == "" {
		return "OpenAI's API"
	}
	return "the model endpoint at " + m.baseURL
}

// classify types an endpoint error (llm.StatusKind for statuses); where names the endpoint. The
// endpoint's own message is kept: it names the broken rule (context too long, unknown model), never
// the key.
func classify(ctx context.Context, err error, where string) error {
	if e := llm.ContextError(ctx, err, where); e != nil {
		return e
	}
	var ae *oa.Error
	if errors.As(err, &ae) {
		msg := ae.Message
		if msg == "" {
			msg = http.StatusText(ae.StatusCode)
		}
		kind := llm.StatusKind(ae.StatusCode)
		switch ae.StatusCode {
		case 401, 403:
			return fault.Wrap(kind, err, "%s refused the credentials (HTTP %d: %s): check the key in %s (or the secret %s names)", where, ae.StatusCode, msg, config.EnvOpenAIAPIKey, config.EnvOpenAIKey)
		case 404:
			return fault.Wrap(kind, err, "%s answered HTTP 404 (%s): check the model name in %s and the base URL in %s (it usually ends in /v1)", where, msg, config.EnvModel, config.EnvOpenAIBaseURL)
		}
		return fault.Wrap(kind, err, "%s answered HTTP %d: %s", where, ae.StatusCode, msg)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fault.Wrap(fault.Transient, err, "%s did not answer in time; try again", where)
	}
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fault.Wrap(fault.Transient, err, "%s could not be reached (%v): check that the server runs and %s points at it", where, llm.RootCause(err), config.EnvOpenAIBaseURL)
	}
	return fault.Wrap(fault.Provider, err, "%s failed", where)
}
