// Package tool is sinew's tool model, JSON-compatible with Julep's, its validation rules, and calls
// and their results.
//
// A tool is {name, type, description} and exactly one of function, integration, api_call, system,
// agreeing with type (Julep picks the first non-empty field and accepts contradictions; sinew
// refuses with a 400 naming the fields). The name matches ^[A-Za-z_][A-Za-z0-9_]{0,39}$, as the
// model APIs accept only such names, and is unique within its owner (agent or task: a duplicate is a
// 409). sinew adds function.timeout_seconds (default 31 days, at most a year),
// function.heartbeat_seconds and api_call.timeout (up to 600 s).
//
// A call is {"id": "call_<24 chars>", "type": T, T: {"name", "arguments"}} (for system
// {resource, operation, resource_id, subresource, arguments}, no name); sinew always makes its own
// ids, and on the chat path keeps the model's as model_call_id. Executors get it in their envelope
// (package executor) beside a snapshot of the tool without its setup, so they never re-read it. A result is {id, type, name, output}; a failed call
// {id, type, name, error: {type, message}}. Julep's model, for comparison:
// https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/typespec/tools/models.tsp
package tool

import (
	"encoding/json"
	"time"
)

// Type is a tool's type: which executor runs it.
type Type string

const (
	TypeFunction    Type = "function"
	TypeIntegration Type = "integration"
	TypeSystem      Type = "system"
	TypeAPICall     Type = "api_call"
)

// Types lists the four types sinew runs, in Julep's priority order.
var Types = []Type{TypeFunction, TypeIntegration, TypeSystem, TypeAPICall}

// Tool is a tool definition: exactly one spec field is set and it agrees with Type.
type Tool struct {
	ID          string          `json:"id,omitempty"`
	Name        string          `json:"name"`
	Type        Type            `json:"type"`
	Description string          `json:"description,omitempty"`
	Function    *FunctionDef    `json:"function,omitempty"`
	Integration *IntegrationDef `json:"integration,omitempty"`
	System      *SystemDef      `json:"system,omitempty"`
	APICall     *APICallDef     `json:"api_call,omitempty"`
	CreatedAt   time.Time       `json:"created_at,omitzero"`
	UpdatedAt   time.Time       `json:"updated_at,omitzero"`
}

// FunctionDef describes a tool the client runs itself. Name and Description are Julep's "DO NOT USE"
// fields, accepted for compatibility and ignored: the model sees the tool's own name and description.
type FunctionDef struct {
	Name        *string        `json:"name,omitempty"`
	Description *string        `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
	// sinew's additions: how long the execution waits for the client (default 31 days, at most one
	// year) and, when set, how often the client must heartbeat.
	TimeoutSeconds   *int64 `json:"timeout_seconds,omitempty"`
	HeartbeatSeconds *int64 `json:"heartbeat_seconds,omitempty"`
}

// Default and largest wait of a function tool.
const (
	DefaultFunctionTimeoutSeconds int64 = 31 * 24 * 3600
	MaxFunctionTimeoutSeconds     int64 = 365 * 24 * 3600
)

// IntegrationDef names a provider, and optionally its method, setup (secrets, kept apart from the
// tool when stored) and pre-applied arguments.
type IntegrationDef struct {
	Provider  string         `json:"provider"`
	Method    string         `json:"method,omitempty"`
	Setup     map[string]any `json:"setup,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	// ParamsSchema (sinew's addition) is what the model sees as the call's arguments, for an mcp
	// call_tool whose tool_name is fixed: the call's arguments then go to the remote tool whole,
	// as call_tool's arguments, so the model calls the remote tool as if it were sinew's.
	ParamsSchema map[string]any `json:"params_schema,omitempty"`
	// Origin marks a tool an import made, so a later import from the same source knows its own.
	Origin *Origin `json:"origin,omitempty"`
}

// Origin is where an imported tool came from: for kind "mcp", the server's URL (without its query,
// which may carry a credential) and the import's prefix, and the remote tool's name.
type Origin struct {
	Kind   string `json:"kind"`
	Server string `json:"server"`
	Prefix string `json:"prefix"`
	Remote string `json:"remote"`
}

// Providers is Julep's provider enum.
var Providers = []string{
	"dummy", "weather", "wikipedia", "spider", "brave", "browserbase", "email", "mailgun",
	"remote_browser", "llama_parse", "ffmpeg", "cloudinary", "arxiv", "unstructured", "algolia",
	"mcp", "google_sheets",
	"aws_lambda", // sinew's own: a developer's Lambda function
}

// SystemDef names one of sinew's own resource operations; Arguments are defaults the call overrides.
type SystemDef struct {
	Resource    string         `json:"resource"`
	Operation   string         `json:"operation"`
	ResourceID  string         `json:"resource_id,omitempty"`
	Subresource string         `json:"subresource,omitempty"`
	Arguments   map[string]any `json:"arguments,omitempty"`
}

// Julep's SystemDef enums.
var (
	SystemResources    = []string{"agent", "user", "task", "execution", "doc", "session", "job"}
	SystemOperations   = []string{"create", "update", "patch", "create_or_update", "embed", "change_status", "search", "chat", "history", "delete", "get", "list"}
	SystemSubresources = []string{"tool", "doc", "execution", "transition"}
)

// APICallDef is an HTTP request template. Every field is honoured (Julep ignores most of them).
type APICallDef struct {
	Method                 string               `json:"method"`
	URL                    string               `json:"url"`
	Schema                 map[string]any       `json:"schema,omitempty"`
	Headers                map[string]string    `json:"headers,omitempty"`
	Secrets                map[string]SecretRef `json:"secrets,omitempty"`
	Content                *string              `json:"content,omitempty"`
	Data                   map[string]any       `json:"data,omitempty"`
	Files                  map[string]any       `json:"files,omitempty"`
	JSON                   map[string]any       `json:"json,omitempty"`
	Cookies                map[string]string    `json:"cookies,omitempty"`
	Params                 json.RawMessage      `json:"params,omitempty"` // a string or an object
	ParamsSchema           *ParameterSchema     `json:"params_schema,omitempty"`
	FollowRedirects        *bool                `json:"follow_redirects,omitempty"`
	Timeout                *int                 `json:"timeout,omitempty"` // seconds, at most 600
	IncludeResponseContent *bool                `json:"include_response_content,omitempty"`
	// ArgumentLocations places arguments of the call by name in the request (sinew's addition, see
	// ArgumentLocation); the tools made from an OpenAPI document carry it.
	ArgumentLocations map[string]ArgumentLocation `json:"argument_locations,omitempty"`
}

// HTTPMethods is the ApiCallDef method enum.
var HTTPMethods = []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "CONNECT", "TRACE"}

// MaxAPICallTimeoutSeconds bounds api_call.timeout.
const MaxAPICallTimeoutSeconds = 600

// SecretRef names a developer secret.
type SecretRef struct {
	Name string `json:"name"`
}

// ParameterSchema is the JSON Schema subset Julep's params_schema allows.
type ParameterSchema struct {
	Type                 string                        `json:"type"`
	Properties           map[string]PropertyDefinition `json:"properties"`
	Required             []string                      `json:"required,omitempty"`
	AdditionalProperties *bool                         `json:"additionalProperties,omitempty"`
}

// PropertyDefinition is one property of a ParameterSchema. Format, Properties and Required are
// sinew's additions, so that a JSON request body's object schema can be described to the model.
type PropertyDefinition struct {
	Type        string                        `json:"type,omitempty"`
	Description string                        `json:"description,omitempty"`
	Enum        []string                      `json:"enum,omitempty"`
	Items       *PropertyDefinition           `json:"items,omitempty"`
	Format      string                        `json:"format,omitempty"`
	Properties  map[string]PropertyDefinition `json:"properties,omitempty"`
	Required    []string                      `json:"required,omitempty"`
}
