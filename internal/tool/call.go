package tool

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"strings"

	"sinew/internal/fault"
)

// Call is one call of a tool, as every executor receives it. Exactly the field named by Type is set.
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

// NamedCall is the body of a function, integration or api_call call.
type NamedCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// SystemCall is the body of a system call: Julep's shape, which names the operation and not the
// tool, and Name, the tool's name, which sinew adds so that a system call's result names its tool
// as every other type's does (a call made without it, such as Julep's, is named by its operation).
type SystemCall struct {
	Name        string         `json:"name,omitempty"`
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

// NewCallID makes a call id as Julep's generate_call_id does: "call_" and 18 random bytes in URL-safe
// base64 without padding, 29 characters in all. sinew always makes its own ids (models reuse theirs).
func NewCallID() string {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; a failure here is unrecoverable.
		panic(fmt.Sprintf("tool: reading random bytes: %v", err))
	}
	return "call_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// ValidCallID reports whether id has the shape NewCallID makes.
func ValidCallID(id string) bool {
	rest, ok := strings.CutPrefix(id, "call_")
	if !ok || len(rest) != 24 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}

// NewCall builds a call of t with arguments. For system tools the
// definition's arguments are defaults that the call's arguments override (Julep drops them).
func NewCall(t *Tool, id string, arguments map[string]any) Call {
	if arguments == nil {
		arguments = map[string]any{}
	}
	c := Call{ID: id, Type: t.Type}
	switch t.Type {
	case TypeSystem:
		args := maps.Clone(t.System.Arguments)
		if args == nil {
			args = map[string]any{}
		}
		maps.Copy(args, arguments)
		c.System = &SystemCall{
			Name:        t.Name,
			Resource:    t.System.Resource,
			Operation:   t.System.Operation,
			ResourceID:  optional(t.System.ResourceID),
			Subresource: optional(t.System.Subresource),
			Arguments:   args,
		}
	default:
		nc := &NamedCall{Name: t.Name, Arguments: arguments}
		switch t.Type {
		case TypeFunction:
			c.Function = nc
		case TypeIntegration:
			c.Integration = nc
		case TypeAPICall:
			c.APICall = nc
		}
	}
	return c
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Name gives the tool name the call carries ("" for system calls, which have none).
func (c *Call) Name() string {
	if nc := c.named(); nc != nil {
		return nc.Name
	}
	return ""
}

// Arguments gives the call's arguments, whatever its type.
func (c *Call) Arguments() map[string]any {
	if nc := c.named(); nc != nil {
		return nc.Arguments
	}
	if c.System != nil {
		return c.System.Arguments
	}
	return nil
}

func (c *Call) named() *NamedCall {
	switch c.Type {
	case TypeFunction:
		return c.Function
	case TypeIntegration:
		return c.Integration
	case TypeAPICall:
		return c.APICall
	}
	return nil
}

// Validate checks a call received from outside (a state machine input, a Lambda event).
func (c *Call) Validate() error {
	if !ValidCallID(c.ID) {
		return fault.Invalid("call.id", "call.id %q is not a sinew call id (call_ and 24 URL-safe base64 characters)", c.ID)
	}
	var set []string
	for name, present := range map[string]bool{"function": c.Function != nil, "integration": c.Integration != nil, "api_call": c.APICall != nil, "system": c.System != nil} {
		if present {
			set = append(set, name)
		}
	}
	if len(set) != 1 || set[0] != string(c.Type) {
		return fault.Invalid("call.type", "call.type is %q but the call carries %v: exactly the field named by the type must be set", c.Type, set)
	}
	if nc := c.named(); nc != nil && nc.Name == "" {
		return fault.Invalid("call."+string(c.Type)+".name", "call.%s.name is required", c.Type)
	}
	return nil
}

// ResultOf makes the result object of a successful call.
func ResultOf(c *Call, output any) Result {
	return Result{ID: c.ID, Type: c.Type, Name: c.displayName(), Output: output}
}

// ErrorResult makes the result object of a failed call.
func ErrorResult(c *Call, errType, message string) Result {
	return Result{ID: c.ID, Type: c.Type, Name: c.displayName(), Error: &ResultError{Type: errType, Message: message}}
}

// displayName is the name a result carries: the tool's, and for a system call made without one,
// its operation (resource[.subresource].operation).
func (c *Call) displayName() string {
	if c.Type == TypeSystem && c.System != nil {
		if c.System.Name != "" {
			return c.System.Name
		}
		name := c.System.Resource
		if c.System.Subresource != nil {
			name += "." + *c.System.Subresource
		}
		return name + "." + c.System.Operation
	}
	return c.Name()
}
