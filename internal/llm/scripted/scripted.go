// Package scripted is an llm.Model that plays a conversation from a JSON script.
//
// It stands in for a real model in tests and in the offline demo, and says so: every Response has
// Model "scripted" and Scripted true.
//
// The script is a list of turns. Which turn answers a request is the number of assistant messages
// the request already holds, so the model keeps no state between calls and works the same when
// every call is a new Lambda invocation (agent_loop). A turn may state what it expects of the
// request; a request that does not match is a fault.Provider error naming the turn and the
// difference, so a test whose loop went astray fails loudly instead of playing on.
//
//	{
//	  "description": "what the conversation shows",
//	  "turns": [
//	    {"expect": {"last_role": "user", "contains": "Paris", "tools": ["weather"], "max_tools": 30},
//	     "reply": {"content": "", "tool_calls": [{"id": "tc1", "name": "weather", "arguments": {"city": "Paris"}}],
//	               "usage": {"prompt_tokens": 12, "completion_tokens": 7}}},
//	    {"expect": {"last_role": "tool", "tool_results": {"tc1": "sunny"}},
//	     "reply": {"content": "It is sunny in Paris."}},
//	    {"error": {"type": "Sinew.Transient", "message": "throttled"}}
//	  ]
//	}
//
// reply.finish_reason defaults to tool_calls when the reply has tool calls and stop otherwise;
// arguments may be an object or the JSON text itself (to play a model that writes broken JSON);
// usage.total_tokens defaults to the sum. An "error" turn fails the call with that fault kind.
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/llm"
)

// Name is the model name of every scripted reply.
const Name = "scripted"

// Script is a conversation to play.
type Script struct {
	Description string `json:"description,omitempty"`
	Turns       []Turn `json:"turns"`
}

// Turn is one model call: what the request must look like, and the reply or error.
type Turn struct {
	Expect *Expect `json:"expect,omitempty"`
	Reply  *Reply  `json:"reply,omitempty"`
	Error  *Error  `json:"error,omitempty"`
}

// Expect is what a turn checks of its request; empty fields are not checked.
type Expect struct {
	LastRole Role `json:"last_role,omitempty"`
	// Contains must be a substring of the last message's content.
	Contains string `json:"contains,omitempty"`
	// Tools must all be among the tools offered.
	Tools []string `json:"tools,omitempty"`
	// MaxTools, when set, bounds how many tools may be offered (an agent with many tools is shown
	// a search tool and a few).
	MaxTools *int `json:"max_tools,omitempty"`
	// ToolResults maps a model call id to a substring of the tool message answering it.
	ToolResults map[string]string `json:"tool_results,omitempty"`
}

// Role is a message role in a script.
type Role = llm.Role

// Reply is the model's answer in a turn.
type Reply struct {
	Content      string           `json:"content"`
	ToolCalls    []ScriptToolCall `json:"tool_calls,omitempty"`
	FinishReason llm.FinishReason `json:"finish_reason,omitempty"`
	Usage        llm.Usage        `json:"usage"`
}

// ScriptToolCall is a tool call in a reply; Arguments is an object or a string of JSON text.
type ScriptToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Error fails a turn with a fault of Type (a fixed name such as Sinew.Transient).
type Error struct {
	Type    fault.Kind `json:"type"`
	Message string     `json:"message"`
}

// Model plays a Script.
type Model struct {
	script Script
}

// New makes a Model of a script, checking it.
func New(s Script) (*Model, error) {
	if len(s.Turns) == 0 {
		return nil, fault.Invalid("turns", "a script needs at least one turn")
	}
	for i, t := range s.Turns {
		if (t.Reply == nil) == (t.Error == nil) {
			return nil, fault.Invalid(fmt.Sprintf("turns[%d]", i), "turns[%d] must have exactly one of reply and error", i)
		}
		if t.Reply != nil {
			for j, c := range t.Reply.ToolCalls {
				if c.ID == "" || c.Name == "" {
					return nil, fault.Invalid(fmt.Sprintf("turns[%d].reply.tool_calls[%d]", i, j), "turns[%d].reply.tool_calls[%d] needs an id and a name", i, j)
				}
			}
		}
	}
	return &Model{script: s}, nil
}

// Parse reads a script from JSON, refusing unknown fields (a misspelt expectation would otherwise
// check nothing).
func Parse(data []byte) (*Model, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "the model script is not valid")
	}
	return New(s)
}

// Load reads a script file.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "the model script %s cannot be read", path)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("model script %s: %w", path, err)
	}
	return m, nil
}

// Turns is the number of turns in the script.
func (m *Model) Turns() int { return len(m.script.Turns) }

// Converse implements llm.Model.
func (m *Model) Converse(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, llm.ContextError(ctx, err, "the scripted model")
	}
	n := 0
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleAssistant {
			n++
		}
	}
	if n >= len(m.script.Turns) {
		return llm.Response{}, fault.New(fault.Provider, "scripted model: the request holds %d assistant messages, but the script has only %d turns", n, len(m.script.Turns))
	}
	t := m.script.Turns[n]
	if t.Expect != nil {
		if err := t.Expect.check(req); err != nil {
			return llm.Response{}, fault.New(fault.Provider, "scripted model: turn %d: %s", n, err)
		}
	}
	if t.Error != nil {
		kind := t.Error.Type
		if kind == "" {
			kind = fault.Provider
		}
		return llm.Response{}, fault.New(kind, "scripted model: %s", t.Error.Message)
	}
	r := t.Reply
	res := llm.Response{
		Message:  llm.Message{Role: llm.RoleAssistant, Content: r.Content},
		Usage:    r.Usage,
		Model:    Name,
		Scripted: true,
	}
	if res.Usage.TotalTokens == 0 {
		res.Usage.TotalTokens = res.Usage.PromptTokens + res.Usage.CompletionTokens
	}
	for _, c := range r.ToolCalls {
		args := strings.TrimSpace(string(c.Arguments))
		if strings.HasPrefix(args, `"`) {
			var s string
			if err := json.Unmarshal(c.Arguments, &s); err == nil {
				args = s
			}
		} else if args == "" || args == "null" {
			args = "{}"
		}
		res.Message.ToolCalls = append(res.Message.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
	}
	reason := r.FinishReason
	if reason == "" {
		reason = llm.FinishStop
	}
	res.FinishReason = llm.Finish(res.Message, reason)
	return res, nil
}

func (e *Expect) check(req llm.Request) error {
	if len(req.Messages) == 0 {
		return fmt.Errorf("the request has no messages")
	}
	last := req.Messages[len(req.Messages)-1]
	if e.LastRole != "" && last.Role != e.LastRole {
		return fmt.Errorf("expected the last message to be of role %s, got %s", e.LastRole, last.Role)
	}
	if e.Contains != "" && !strings.Contains(last.Content, e.Contains) {
		return fmt.Errorf("expected the last message to contain %q, got %q", e.Contains, last.Content)
	}
	offered := make([]string, len(req.Tools))
	for i, f := range req.Tools {
		offered[i] = f.Name
	}
	if e.MaxTools != nil && len(offered) > *e.MaxTools {
		return fmt.Errorf("expected at most %d tools offered, got %d", *e.MaxTools, len(offered))
	}
	for _, name := range e.Tools {
		if !slices.Contains(offered, name) {
			return fmt.Errorf("expected tool %q to be offered, got %v", name, offered)
		}
	}
	for id, want := range e.ToolResults {
		found := false
		for _, msg := range req.Messages {
			if msg.Role == llm.RoleTool && msg.ToolCallID == id {
				found = true
				if !strings.Contains(msg.Content, want) {
					return fmt.Errorf("expected the result of call %s to contain %q, got %q", id, want, msg.Content)
				}
			}
		}
		if !found {
			return fmt.Errorf("expected a tool message answering call %s", id)
		}
	}
	return nil
}
