// Package openapitools makes api_call tools from an OpenAPI 3.0 or 3.1 document, one per operation,
// as AWS's AgentCore Gateway makes targets of one.
//
// Each tool's URL is the operation's server and path, its params_schema the JSON Schema of the
// operation's parameters and JSON (or form) body, and its argument_locations say where each
// argument goes in the request (path, query, header, cookie, body). The document's security schemes
// that a request header, query parameter or cookie can carry (apiKey, HTTP bearer and basic) become
// x-api_call-setup entries for the owner's metadata, holding a developer-secret reference or a
// value the store seals; the store binds them to the tool, whose URL fixes the host they go to.
//
// An operation that cannot become a whole tool is skipped with a reason a person can act on,
// never made in part: OAuth2 and OpenID Connect security, multipart and binary bodies, callbacks,
// parameters serialized in ways a request part cannot express, servers the network guard refuses.
// A document that cannot be read at all is an InvalidInput naming the problem.
//
// The parsing and $ref resolution are kin-openapi's (github.com/getkin/kin-openapi), which reads
// 3.0 and 3.1 into one model and never follows a $ref outside the document: references to other
// files or URLs are refused, so an import makes no request of its own.
package openapitools

import (
	"fmt"
	"regexp"
	"sync"

	"sinew/internal/tool"
)

// Bounds of one import.
const (
	// MaxDocumentBytes bounds the document's text: large public documents (Twilio's, 1.5 MB of
	// YAML) fit, and the request stays well under a Lambda's 6 MB payload.
	MaxDocumentBytes = 4 << 20
	// MaxTools bounds the tools one import makes: each is two items written, and the model sees
	// every tool of an agent on every turn.
	MaxTools = 500
)

// Request is the body of POST /agents/{agent_id}/tools/openapi.
type Request struct {
	// Document is the OpenAPI document: a JSON object, or its JSON or YAML text as a string.
	Document []byte `json:"-"`
	// BaseURL replaces the document's servers (required when they are relative or absent).
	BaseURL string `json:"base_url,omitempty"`
	// Prefix starts every tool's name.
	Prefix string `json:"prefix,omitempty"`
	// Operations, when given, are the only operations made into tools, by operationId or as
	// "METHOD /path".
	Operations []string `json:"operations,omitempty"`
	// Security gives the credentials of the document's security schemes, by scheme name.
	Security map[string]Credential `json:"security,omitempty"`
}

// Credential is a security scheme's credential: a developer secret's name, or the value itself
// (which the store seals). For HTTP basic, the value is "user:password" and a secret holds the
// base64 of it, as the Authorization header carries it.
type Credential struct {
	Secret string  `json:"secret,omitempty"`
	Value  *string `json:"value,omitempty"`
}

// Result is what an import makes.
type Result struct {
	Tools []tool.Tool
	// Setup are the x-api_call-setup entries of the tools that carry credentials, by tool name.
	Setup   map[string]map[string]any
	Skipped []Skipped
}

// Skipped is an operation not made into a tool, and why.
type Skipped struct {
	Operation string `json:"operation"`
	Reason    string `json:"reason"`
}

// prefixPattern leaves room in the 40 characters of a tool's name for the operation's own.
var prefixPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,23}$`) })

// secretNamePattern is the developer secrets' name rule (store.PutSecret's).
var secretNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`) })

// label names an operation in messages and in Request.Operations: its operationId, else
// "METHOD /path".
func label(method, path, operationID string) string {
	if operationID != "" {
		return operationID
	}
	return fmt.Sprintf("%s %s", method, path)
}
