// Package openai is the llm.Model adapter for any OpenAI-compatible chat completions endpoint
// (OpenAI, vLLM, Ollama, a LiteLLM proxy).
//
// It sends one POST {base}/chat/completions in the documented wire form
// (https://platform.openai.com/docs/api-reference/chat/create), over net/http and encoding/json. It
// keeps no retry loop: a Transient error goes back to the caller, whose retry policy is the one
// place that decides.
//
// It speaks the wire form itself rather than through a client library: the one request and answer
// it needs are a few structs, and the official client's package initialisation alone added about
// 14 MiB to every Lambda bootstrap that linked it, and its time to each cold start.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/llm"
)

// DefaultBaseURL is OpenAI's own endpoint.
const DefaultBaseURL = "https://api.openai.com/v1"

// maxBody caps an answer read into memory: far above any chat completion, far below a Lambda's memory.
const maxBody = 32 << 20

// Model talks to one model of an OpenAI-compatible endpoint.
type Model struct {
	url     string
	key     string
	http    *http.Client
	model   string
	baseURL string // as configured, for messages ("" is OpenAI's)
}

// Options configure a Model.
type Options struct {
	BaseURL    string       // e.g. http://127.0.0.1:11434/v1; "" is OpenAI's
	APIKey     string       // may be empty for servers that take none
	HTTPClient *http.Client // nil: http.DefaultClient
}

// New makes a Model for model at the endpoint. Nothing is read from the process environment (no
// OPENAI_API_KEY): the key configured for this endpoint is the only one ever sent.
func New(model string, o Options) *Model {
	base := o.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	c := o.HTTPClient
	if c == nil {
		c = http.DefaultClient
	}
	return &Model{url: strings.TrimRight(base, "/") + "/chat/completions", key: o.APIKey, http: c, model: model, baseURL: o.BaseURL}
}

// Converse implements llm.Model.
func (m *Model) Converse(ctx context.Context, req llm.Request) (llm.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	out, err := m.post(ctx, params)
	if err != nil {
		return llm.Response{}, err // typed by post, naming the endpoint
	}
	if len(out.Choices) == 0 {
		return llm.Response{}, fault.New(fault.Provider, "the model endpoint answered without a choice")
	}
	ch := out.Choices[0]
	res := llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: ch.Message.Content},
		Usage:   out.Usage,
		Model:   out.Model,
	}
	if res.Model == "" {
		res.Model = params.Model
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

// post sends one request and decodes a 2xx answer; any other status is classified by errorOf.
func (m *Model) post(ctx context.Context, params *request) (*response, error) {
	body, err := json.Marshal(params)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "the model request cannot be written as JSON")
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(body))
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "the model endpoint's URL is not usable")
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if m.key != "" {
		hr.Header.Set("Authorization", "Bearer "+m.key)
	}
	resp, err := m.http.Do(hr)
	if err != nil {
		return nil, classify(ctx, err, m.endpoint())
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, classify(ctx, err, m.endpoint())
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, errorOf(resp.StatusCode, raw, m.endpoint())
	}
	var out response
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fault.Wrap(fault.Provider, err, "the model endpoint's answer is not a chat completion: %v", err)
	}
	return &out, nil
}

func (m *Model) params(req llm.Request) (*request, error) {
	p := &request{Model: m.model}
	if req.Model != "" {
		p.Model = req.Model
	}
	for i, msg := range req.Messages {
		w := message{Role: string(msg.Role)}
		switch msg.Role {
		case llm.RoleSystem, llm.RoleUser:
			w.Content = &msg.Content
		case llm.RoleAssistant:
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				w.Content = &msg.Content
			}
			for _, c := range msg.ToolCalls {
				w.ToolCalls = append(w.ToolCalls, toolCall{ID: c.ID, Type: "function", Function: functionCall{Name: c.Name, Arguments: c.Arguments}})
			}
		case llm.RoleTool:
			w.Content, w.ToolCallID = &msg.Content, msg.ToolCallID
		default:
			f := "messages[" + strconv.Itoa(i) + "].role"
			return nil, fault.Invalid(f, "%s must be system, user, assistant or tool, not %q", f, msg.Role)
		}
		p.Messages = append(p.Messages, w)
	}
	for _, f := range req.Tools {
		p.Tools = append(p.Tools, toolDef{Type: "function", Function: functionDef{Name: f.Name, Description: f.Description, Parameters: objectSchema(f.Parameters)}})
	}
	// tool_choice only with tools: OpenAI refuses it without them, and "none" means nothing then.
	if len(req.Tools) > 0 {
		switch req.ToolChoice.Mode {
		case llm.ChoiceNone, llm.ChoiceRequired:
			p.ToolChoice = string(req.ToolChoice.Mode)
		case llm.ChoiceNamed:
			p.ToolChoice = namedChoice{Type: "function", Function: struct {
				Name string `json:"name"`
			}{req.ToolChoice.Name}}
		}
	}
	p.Settings = req.Settings
	return p, nil
}

func objectSchema(p map[string]any) map[string]any {
	if p == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return p
}

func (m *Model) endpoint() string {
	if m.baseURL == "" {
		return "OpenAI's API"
	}
	return "the model endpoint at " + m.baseURL
}

// errorOf types a non-2xx answer (llm.StatusKind for statuses); where names the endpoint. The
// endpoint's own message is kept: it names the broken rule (context too long, unknown model), never
// the key.
func errorOf(status int, body []byte, where string) error {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &e) == nil {
		msg = e.Error.Message
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	cause := fmt.Errorf("HTTP %d", status)
	kind := llm.StatusKind(status)
	switch status {
	case 401, 403:
		return fault.Wrap(kind, cause, "%s refused the credentials (HTTP %d: %s): check the key in %s (or the secret %s names)", where, status, msg, config.EnvOpenAIAPIKey, config.EnvOpenAIKey)
	case 404:
		return fault.Wrap(kind, cause, "%s answered HTTP 404 (%s): check the model name in %s and the base URL in %s (it usually ends in /v1)", where, msg, config.EnvModel, config.EnvOpenAIBaseURL)
	}
	return fault.Wrap(kind, cause, "%s answered HTTP %d: %s", where, status, msg)
}

// classify types a failure to exchange the request and answer; where names the endpoint.
func classify(ctx context.Context, err error, where string) error {
	if e := llm.ContextError(ctx, err, where); e != nil {
		return e
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
