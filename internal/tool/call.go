package tool

// Call is the envelope every executor receives. Exactly the field named by Type is set.
type Call struct {
	ID          string      `json:"id"`
	Type        Type        `json:"type"`
	Function    *NamedCall  `json:"function,omitempty"`
	Integration *NamedCall  `json:"integration,omitempty"`
	APICall     *NamedCall  `json:"api_call,omitempty"`
	System      *SystemCall `json:"system,omitempty"`
	// ModelCallID is the model's own id for the call, on the chat path, so the caller's tool
	// messages can be matched.
	ModelCallID string `json:"model_call_id,omitempty"`
}

// NamedCall is the body of a function, integration or api_call envelope.
type NamedCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// SystemCall is the body of a system envelope: it has no name (Julep's shape).
type SystemCall struct {
	Resource    string         `json:"resource"`
	Operation   string         `json:"operation"`
	ResourceID  *string        `json:"resource_id"`
	Subresource *string        `json:"subresource"`
	Arguments   map[string]any `json:"arguments"`
}

// Result is what a call produced: Output, or Error for a failed call.
type Result struct {
	ID     string       `json:"id"`
	Type   Type         `json:"type"`
	Name   string       `json:"name"`
	Output any          `json:"output,omitempty"`
	Error  *ResultError `json:"error,omitempty"`
}

// ResultError is a failed call's error: Type is a fixed error name (package fault) or Client.<type>.
type ResultError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}
