// Package llm is sinew's model client.
//
// It has one Model interface that the model-tool loop talks to, with adapters for Amazon Bedrock
// Converse (package llm/bedrock), any OpenAI-compatible endpoint (package llm/openai) and a
// scripted model for tests and the offline demo (package llm/scripted).
//
// The message form is OpenAI's chat form, because it is what sinew's chat API speaks and what its
// history stores: {role, content, tool_calls: [{id, type: "function", function: {name, arguments}}],
// tool_call_id, name}. Adapters translate it to their wire format and back, so the loop and the
// routes never see a provider's shapes.
//
// Every error an adapter returns is a *fault.Error: throttling, 5xx and connection failures are
// fault.Transient (the state machine's Retry or the caller retries; adapters keep no retry loop of
// their own), refused credentials and other permanent refusals fault.Provider, a request the model
// API finds malformed fault.InvalidInput, the context's deadline fault.Timeout.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Model is a chat model that can call tools.
type Model interface {
	// Converse sends the conversation and the tools, and gives the model's next message.
	Converse(ctx context.Context, req Request) (Response, error)
}

// Role is a message's author.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one message of a conversation, in OpenAI's chat form.
type Message struct {
	Role Role `json:"role"`
	// Content is the text. For a tool message it is the result as the model sees it (JSON text).
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the model's id of the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool's name on a tool message.
	Name string `json:"name,omitempty"`
}

// UnmarshalJSON accepts content as a string, null, or OpenAI's array of content parts (whose text
// parts are joined), so callers may send any of the forms OpenAI clients produce.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role       Role            `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  []ToolCall      `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
		Name       string          `json:"name"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	content, err := contentText(raw.Content)
	if err != nil {
		return err
	}
	*m = Message{Role: raw.Role, Content: content, ToolCalls: raw.ToolCalls, ToolCallID: raw.ToolCallID, Name: raw.Name}
	return nil
}

func contentText(raw json.RawMessage) (string, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return "", nil
	}
	if s[0] == '"' {
		var out string
		err := json.Unmarshal(raw, &out)
		return out, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content must be a string or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "" && p.Type != "text" {
			return "", fmt.Errorf("content part of type %q is not supported: only text parts are", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// ToolCall is a call the model asks for: its own id, the tool's name and the arguments as the JSON
// text the model wrote (which may be invalid: the loop checks it).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// MarshalJSON writes OpenAI's form {"id", "type": "function", "function": {"name", "arguments"}}.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	var w wireToolCall
	w.ID, w.Type, w.Function.Name, w.Function.Arguments = c.ID, "function", c.Name, c.Arguments
	return json.Marshal(w)
}

// UnmarshalJSON reads OpenAI's form.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var w wireToolCall
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Type != "" && w.Type != "function" {
		return fmt.Errorf("tool call of type %q is not supported: only function calls are", w.Type)
	}
	*c = ToolCall{ID: w.ID, Name: w.Function.Name, Arguments: w.Function.Arguments}
	return nil
}

// Function is a tool as the model sees it: a name, a description and a JSON Schema of the
// arguments (an object schema).
type Function struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// ToolChoiceMode says whether and which tools the model may call.
type ToolChoiceMode string

const (
	ChoiceAuto     ToolChoiceMode = "auto"     // the model decides (the default)
	ChoiceNone     ToolChoiceMode = "none"     // no tool calls
	ChoiceRequired ToolChoiceMode = "required" // at least one tool call
	ChoiceNamed    ToolChoiceMode = "named"    // a call of the named tool
)

// ToolChoice is the request's tool_choice; the zero value is auto.
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode,omitempty"`
	Name string         `json:"name,omitempty"` // with ChoiceNamed
}

// ParseToolChoice reads tool_choice as callers send it: "auto", "none", "required" (OpenAI's; "any"
// is accepted as Bedrock's name for it), Julep's {"function": {"name": X}} or OpenAI's {"type":
// "function", "function": {"name": X}}. nil is auto. field names the request field for errors.
func ParseToolChoice(field string, v any) (ToolChoice, error) {
	switch x := v.(type) {
	case nil:
		return ToolChoice{Mode: ChoiceAuto}, nil
	case string:
		switch x {
		case "auto", "":
			return ToolChoice{Mode: ChoiceAuto}, nil
		case "none":
			return ToolChoice{Mode: ChoiceNone}, nil
		case "required", "any":
			return ToolChoice{Mode: ChoiceRequired}, nil
		}
		return ToolChoice{}, fault.Invalid(field, "%s must be \"auto\", \"none\", \"required\" or {\"function\": {\"name\": ...}}, not %q", field, x)
	case map[string]any:
		if t, ok := x["type"]; ok && t != "function" {
			return ToolChoice{}, fault.Invalid(field+".type", "%s.type must be \"function\"", field)
		}
		fn, _ := x["function"].(map[string]any)
		name, _ := fn["name"].(string)
		if name == "" {
			return ToolChoice{}, fault.Invalid(field+".function.name", "%s.function.name is required and must be a tool's name", field)
		}
		return ToolChoice{Mode: ChoiceNamed, Name: name}, nil
	}
	return ToolChoice{}, fault.Invalid(field, "%s must be a string or an object", field)
}

// Settings are the sampling settings sinew passes on. Bedrock Converse takes only max_tokens,
// temperature, top_p and stop; its adapter ignores the others.
type Settings struct {
	Temperature      *float64 `json:"temperature,omitempty"`
	MaxTokens        *int64   `json:"max_tokens,omitempty"`
	TopP             *float64 `json:"top_p,omitempty"`
	Stop             []string `json:"stop,omitempty"`
	Seed             *int64   `json:"seed,omitempty"`
	FrequencyPenalty *float64 `json:"frequency_penalty,omitempty"`
	PresencePenalty  *float64 `json:"presence_penalty,omitempty"`
}

// ParseSettings reads settings from their JSON object form (values in the jsonv form or as
// encoding/json decodes them), checking each known key's type and range. An unknown key is refused
// by name: a silently dropped setting is a setting the caller believes in and the model never saw.
// field names the request field ("settings").
func ParseSettings(field string, m map[string]any) (Settings, error) {
	var s Settings
	for k, v := range m {
		if v == nil {
			continue
		}
		f := field + "." + k
		switch k {
		case "temperature":
			x, err := number(f, v, 0, 2)
			if err != nil {
				return s, err
			}
			s.Temperature = &x
		case "top_p":
			x, err := number(f, v, 0, 1)
			if err != nil {
				return s, err
			}
			s.TopP = &x
		case "frequency_penalty", "presence_penalty":
			x, err := number(f, v, -2, 2)
			if err != nil {
				return s, err
			}
			if k == "frequency_penalty" {
				s.FrequencyPenalty = &x
			} else {
				s.PresencePenalty = &x
			}
		case "max_tokens", "seed":
			x, err := number(f, v, 1, 1<<31-1)
			if k == "seed" {
				x, err = number(f, v, -(1 << 53), 1<<53)
			}
			if err != nil {
				return s, err
			}
			if x != float64(int64(x)) {
				return s, fault.Invalid(f, "%s must be an integer", f)
			}
			n := int64(x)
			if k == "max_tokens" {
				s.MaxTokens = &n
			} else {
				s.Seed = &n
			}
		case "stop":
			switch x := v.(type) {
			case string:
				s.Stop = []string{x}
			case []any:
				for i, e := range x {
					str, ok := e.(string)
					if !ok || str == "" {
						return s, fault.Invalid(fmt.Sprintf("%s[%d]", f, i), "%s[%d] must be a non-empty string", f, i)
					}
					s.Stop = append(s.Stop, str)
				}
			default:
				return s, fault.Invalid(f, "%s must be a string or an array of strings", f)
			}
			if len(s.Stop) > 4 {
				return s, fault.Invalid(f, "%s may hold at most 4 sequences", f)
			}
		default:
			return s, fault.Invalid(f, "%s is not a known setting (known: temperature, max_tokens, top_p, stop, seed, frequency_penalty, presence_penalty)", f)
		}
	}
	return s, nil
}

func number(field string, v any, lo, hi float64) (float64, error) {
	var x float64
	switch n := v.(type) {
	case int64:
		x = float64(n)
	case int:
		x = float64(n)
	case float64:
		x = n
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, fault.Invalid(field, "%s must be a number", field)
		}
		x = f
	default:
		return 0, fault.Invalid(field, "%s must be a number", field)
	}
	if x < lo || x > hi {
		return 0, fault.Invalid(field, "%s must be between %g and %g", field, lo, hi)
	}
	return x, nil
}

// Request is one call of the model.
type Request struct {
	// Model overrides the adapter's model id for this call ("" keeps it).
	Model      string
	Messages   []Message
	Tools      []Function
	ToolChoice ToolChoice
	Settings   Settings
}

// FinishReason says why the model stopped, normalised across providers.
type FinishReason string

const (
	FinishStop          FinishReason = "stop"           // a natural end, or a stop sequence
	FinishToolCalls     FinishReason = "tool_calls"     // the model asks for tools
	FinishLength        FinishReason = "length"         // max_tokens or the context window ran out
	FinishContentFilter FinishReason = "content_filter" // a guardrail or content filter stopped it
)

// Usage counts tokens.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// Add sums u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.PromptTokens + v.PromptTokens, u.CompletionTokens + v.CompletionTokens, u.TotalTokens + v.TotalTokens}
}

// Response is the model's answer.
type Response struct {
	Message      Message      `json:"message"` // role assistant
	FinishReason FinishReason `json:"finish_reason"`
	Usage        Usage        `json:"usage"`
	Model        string       `json:"model"`              // the model that answered
	Scripted     bool         `json:"scripted,omitempty"` // played from a script, not a real model
}

// Finish normalises a finish reason: a message with tool calls finished for them, whatever the
// provider said (some OpenAI-compatible servers answer "stop" with tool calls).
func Finish(msg Message, reported FinishReason) FinishReason {
	if len(msg.ToolCalls) > 0 && reported != FinishLength {
		return FinishToolCalls
	}
	if reported == FinishToolCalls {
		return FinishStop // it asked for no tool after all
	}
	return reported
}

// StatusKind classifies an HTTP status of a model API: 408, 429, 5xx and 524 are
// Transient, 401 and 403 (credentials refused) and 404 (no such model) Provider, other 4xx
// InvalidInput (the request was malformed, e.g. too long for the context window).
func StatusKind(status int) fault.Kind {
	switch {
	case status == 408 || status == 429 || status >= 500:
		return fault.Transient
	case status == 401 || status == 403 || status == 404:
		return fault.Provider
	case status >= 400:
		return fault.InvalidInput
	}
	return fault.Provider
}

// ContextError types an error that came from ctx running out, or gives nil.
func ContextError(ctx context.Context, err error, what string) error {
	if ctx.Err() == nil {
		return nil
	}
	if ctx.Err() == context.DeadlineExceeded {
		return fault.Wrap(fault.Timeout, err, "%s: the time budget ran out", what)
	}
	return fault.Wrap(fault.Transient, err, "%s: the request was cancelled", what)
}

// RootCause is err's innermost error, without the operation and URL an HTTP client or SDK adds
// around it: for messages that say why an endpoint could not be reached.
func RootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// ParseArguments reads a tool call's arguments: a JSON object, or "" for none.
func ParseArguments(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}, nil
	}
	v, err := jsonv.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the arguments must be a JSON object, not %s", jsonv.TypeName(v))
	}
	return m, nil
}

// IsErrorResult reports whether a tool message's content is a failed call's result: a JSON object
// of "error" (a string) and at most "type", the form sinew gives every failed or refused call (and
// Julep's {"error": "Tool 'x' not found"}). An adapter whose API marks failed results (Bedrock's
// toolResult status) reads it.
func IsErrorResult(content string) bool {
	v, err := jsonv.DecodeString(content)
	if err != nil {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := m["error"].(string); !ok {
		return false
	}
	for k := range m {
		if k != "error" && k != "type" {
			return false
		}
	}
	return true
}
