package openai

import "sinew/internal/llm"

// The chat completions wire form, as much of it as sinew sends and reads
// (https://platform.openai.com/docs/api-reference/chat/create). Optional settings are pointers so
// an explicit zero (temperature 0) is sent and an unset one is left to the server.

type request struct {
	Model      string    `json:"model"`
	Messages   []message `json:"messages"`
	Tools      []toolDef `json:"tools,omitempty"`
	ToolChoice any       `json:"tool_choice,omitempty"` // "none", "required" or a namedChoice
	// The sampling settings go as sinew names them, which are OpenAI's names: max_tokens rather
	// than max_completion_tokens, since the compatible servers (vLLM, Ollama, LiteLLM) all read it
	// and OpenAI still does for its chat models.
	llm.Settings
}

type message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content,omitempty"` // nil: an assistant message of tool calls only
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type toolDef struct {
	Type     string      `json:"type"`
	Function functionDef `json:"function"`
}

type functionDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

type namedChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type response struct {
	Model   string    `json:"model"`
	Choices []choice  `json:"choices"`
	Usage   llm.Usage `json:"usage"`
}

type choice struct {
	FinishReason string `json:"finish_reason"`
	Message      struct {
		Content   string     `json:"content"` // null decodes as ""
		ToolCalls []toolCall `json:"tool_calls"`
	} `json:"message"`
}
