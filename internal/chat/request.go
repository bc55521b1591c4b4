package chat

import (
	"encoding/json"
	"fmt"
	"time"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Request is the chat request, parsed and checked.
type Request struct {
	Messages      []llm.Message
	Tools         []*tool.Tool // nil: the session agent's stored tools
	ToolChoice    llm.ToolChoice
	AutoRunTools  *bool
	Model         string
	Settings      map[string]any
	MaxIterations int
	Async         bool
	rawToolChoice any // as sent, for agent_loop's input
}

// wire is the request body as sent.
type wire struct {
	Messages      []json.RawMessage `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	ToolChoice    any               `json:"tool_choice"`
	AutoRunTools  *bool             `json:"auto_run_tools"`
	Model         *string           `json:"model"`
	Settings      map[string]any    `json:"settings"`
	MaxIterations *int              `json:"max_iterations"`
	Async         *bool             `json:"async"`
	Stream        *bool             `json:"stream"`
}

var wireKeys = map[string]bool{"messages": true, "tools": true, "tool_choice": true, "auto_run_tools": true, "model": true,
	"settings": true, "max_iterations": true, "async": true, "stream": true}

var roles = map[llm.Role]bool{llm.RoleSystem: true, llm.RoleUser: true, llm.RoleAssistant: true, llm.RoleTool: true}

// ParseRequest checks a chat request body: every broken rule is a fault.InvalidInput naming the field.
func ParseRequest(body []byte) (*Request, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, fault.Invalid("", "the body must be a JSON object: the chat request")
	}
	for k := range top {
		if !wireKeys[k] {
			return nil, fault.Invalid(k, "unknown field %q: a chat request has messages, tools, tool_choice, auto_run_tools, model, settings, max_iterations, async and stream", k)
		}
	}
	var w wire
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "the chat request does not fit its schema: %v", err)
	}
	if w.Stream != nil && *w.Stream {
		return nil, fault.Invalid("stream", "stream: true is not supported: API Gateway's HTTP API cannot stream a Lambda's answer")
	}
	if len(w.Messages) == 0 {
		return nil, fault.Invalid("messages", "messages must hold at least one message")
	}
	r := &Request{AutoRunTools: w.AutoRunTools, Settings: w.Settings}
	for i, raw := range w.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		var m llm.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fault.Invalid(field, "%s is not a message {role, content, tool_call_id?, name?}: %v", field, err)
		}
		if !roles[m.Role] {
			return nil, fault.Invalid(field+".role", "%s.role must be one of system, user, assistant, tool", field)
		}
		if m.Role == llm.RoleTool && m.ToolCallID == "" {
			return nil, fault.Invalid(field+".tool_call_id", "%s is a tool message: tool_call_id names the call it answers", field)
		}
		// Refused before the model runs: a turn whose message cannot be saved would run for nothing.
		if n := storedBytes(m); n > store.MaxMessageBytes {
			return nil, &fault.Error{Kind: fault.TooLarge, Field: field, Msg: fmt.Sprintf("%s is %d bytes as stored; a session's history keeps messages of at most %d bytes: send it shorter, or store the text as a doc and refer to it", field, n, store.MaxMessageBytes)}
		}
		r.Messages = append(r.Messages, m)
	}
	if w.Tools != nil {
		r.Tools = []*tool.Tool{}
		for i, raw := range w.Tools {
			field := fmt.Sprintf("tools[%d]", i)
			t, err := tool.Decode(raw)
			if err != nil {
				return nil, fault.Wrap(fault.InvalidInput, err, "%s: %v", field, err)
			}
			// Inline tools are not stored, so their setup would travel in envelopes.
			if t.Integration != nil && len(t.Integration.Setup) > 0 {
				return nil, fault.Invalid(field+".integration.setup", "%s: an inline tool may not carry setup: store the tool, or put the setup in the session's metadata", field)
			}
			r.Tools = append(r.Tools, t)
		}
	}
	if w.ToolChoice != nil {
		tc, err := llm.ParseToolChoice("tool_choice", w.ToolChoice)
		if err != nil {
			return nil, err
		}
		r.ToolChoice, r.rawToolChoice = tc, w.ToolChoice
	}
	if w.Model != nil {
		r.Model = *w.Model
	}
	if w.MaxIterations != nil {
		if *w.MaxIterations < 1 || *w.MaxIterations > loop.MaxIterations {
			return nil, fault.Invalid("max_iterations", "max_iterations must be between 1 and %d", loop.MaxIterations)
		}
		r.MaxIterations = *w.MaxIterations
	}
	if w.Async != nil {
		r.Async = *w.Async
	}
	return r, nil
}

// storedBytes is the size m takes in the session's history (its id and time included).
func storedBytes(m llm.Message) int {
	sm := store.Message{ID: "00000000-0000-0000-0000-000000000000", Role: string(m.Role), Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID, CreatedAt: time.Now()}
	if len(m.ToolCalls) > 0 {
		sm.ToolCalls = m.ToolCalls
	}
	return store.MessageBytes(sm)
}
