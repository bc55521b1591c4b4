package tool

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"sinew/internal/fault"
)

// namePattern: the model APIs (Bedrock, OpenAI) accept only ASCII tool names, so sinew refuses at
// creation a name that would break every chat later (Julep allows any Unicode identifier).
// Compiled on first use: a counted repetition compiles to hundreds of allocations, paid at every
// Lambda cold start otherwise.
var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,39}$`) })

// MaxDescription is Julep's database limit on a tool's description.
const MaxDescription = 16000

// anthropicTypes are Julep's Anthropic tool types, which sinew does not port.
var anthropicTypes = []string{"computer_20241022", "text_editor_20241022", "bash_20241022"}

// ValidName reports whether name is a valid tool name.
func ValidName(name string) bool { return namePattern().MatchString(name) }

// Validate checks the rules of the package doc. Errors are fault.InvalidInput naming the field and rule.
func (t *Tool) Validate() error {
	if t.Name == "" {
		return fault.Invalid("name", "name is required")
	}
	if !ValidName(t.Name) {
		return fault.Invalid("name", "name %q is invalid: it must start with an ASCII letter or underscore, hold only ASCII letters, digits and underscores, and be at most 40 characters (the model APIs accept nothing else)", t.Name)
	}
	if len(t.Description) > MaxDescription {
		return fault.Invalid("description", "description is %d characters; at most %d are allowed", len(t.Description), MaxDescription)
	}
	set := t.specFields()
	switch {
	case t.Type == "":
		return fault.Invalid("type", "type is required: one of function, integration, system, api_call")
	case slices.Contains(anthropicTypes, string(t.Type)):
		return fault.Invalid("type", "type %q is not supported by sinew: Anthropic's computer, text-editor and bash tools are not ported", t.Type)
	case !slices.Contains(Types, t.Type):
		return fault.Invalid("type", "type %q is unknown: use one of function, integration, system, api_call", t.Type)
	case len(set) == 0:
		return fault.Invalid(string(t.Type), "a tool of type %q needs its %q field", t.Type, t.Type)
	case len(set) > 1:
		return fault.Invalid(strings.Join(set, ","), "exactly one of function, integration, system, api_call may be set, but %s are", strings.Join(set, " and "))
	case set[0] != string(t.Type):
		return fault.Invalid(set[0], "type is %q but the %q field is set: they must agree", t.Type, set[0])
	}
	switch t.Type {
	case TypeFunction:
		return t.Function.validate()
	case TypeIntegration:
		return t.Integration.validate()
	case TypeSystem:
		return t.System.validate()
	default:
		return t.APICall.validate()
	}
}

func (t *Tool) specFields() []string {
	var set []string
	if t.Function != nil {
		set = append(set, string(TypeFunction))
	}
	if t.Integration != nil {
		set = append(set, string(TypeIntegration))
	}
	if t.System != nil {
		set = append(set, string(TypeSystem))
	}
	if t.APICall != nil {
		set = append(set, string(TypeAPICall))
	}
	return set
}

// Timeout gives the function tool's wait bound in seconds, with the default applied.
func (f *FunctionDef) Timeout() int64 {
	if f == nil || f.TimeoutSeconds == nil {
		return DefaultFunctionTimeoutSeconds
	}
	return *f.TimeoutSeconds
}

func (f *FunctionDef) validate() error {
	if p := f.Parameters; p != nil {
		if typ, ok := p["type"]; ok && typ != "object" {
			return fault.Invalid("function.parameters.type", "function.parameters must be a JSON Schema of type \"object\" (the model APIs take arguments as an object), not %v", typ)
		}
	}
	if ts := f.TimeoutSeconds; ts != nil && (*ts < 1 || *ts > MaxFunctionTimeoutSeconds) {
		return fault.Invalid("function.timeout_seconds", "function.timeout_seconds must be between 1 and %d (one year), not %d", MaxFunctionTimeoutSeconds, *ts)
	}
	if hb := f.HeartbeatSeconds; hb != nil {
		if *hb < 1 {
			return fault.Invalid("function.heartbeat_seconds", "function.heartbeat_seconds must be at least 1, not %d", *hb)
		}
		if *hb >= f.Timeout() {
			return fault.Invalid("function.heartbeat_seconds", "function.heartbeat_seconds (%d) must be less than the timeout (%d s)", *hb, f.Timeout())
		}
	}
	return nil
}

func (d *IntegrationDef) validate() error {
	if d.Provider == "" {
		return fault.Invalid("integration.provider", "integration.provider is required: one of %s", strings.Join(Providers, ", "))
	}
	if !slices.Contains(Providers, d.Provider) {
		return fault.Invalid("integration.provider", "integration.provider %q is unknown: use one of %s", d.Provider, strings.Join(Providers, ", "))
	}
	if d.Method != "" && !namePattern().MatchString(d.Method) {
		return fault.Invalid("integration.method", "integration.method %q is not a method name", d.Method)
	}
	if d.ParamsSchema != nil {
		if d.Provider != "mcp" || d.Method != "call_tool" {
			return fault.Invalid("integration.params_schema", "integration.params_schema is only for provider mcp, method call_tool")
		}
		if name, _ := d.Arguments["tool_name"].(string); name == "" {
			return fault.Invalid("integration.params_schema", "integration.params_schema needs integration.arguments.tool_name: the remote tool the call reaches")
		}
		if ty, ok := d.ParamsSchema["type"]; ok && ty != "object" {
			return fault.Invalid("integration.params_schema.type", "integration.params_schema must be a JSON Schema of type object")
		}
	}
	if o := d.Origin; o != nil && (o.Kind == "" || o.Server == "") {
		return fault.Invalid("integration.origin", "integration.origin needs kind and server")
	}
	return nil
}

func (d *SystemDef) validate() error {
	if !slices.Contains(SystemResources, d.Resource) {
		return fault.Invalid("system.resource", "system.resource %q is unknown: use one of %s", d.Resource, strings.Join(SystemResources, ", "))
	}
	if !slices.Contains(SystemOperations, d.Operation) {
		return fault.Invalid("system.operation", "system.operation %q is unknown: use one of %s", d.Operation, strings.Join(SystemOperations, ", "))
	}
	if d.Subresource != "" && !slices.Contains(SystemSubresources, d.Subresource) {
		return fault.Invalid("system.subresource", "system.subresource %q is unknown: use one of %s", d.Subresource, strings.Join(SystemSubresources, ", "))
	}
	if d.ResourceID != "" {
		if _, err := uuid.Parse(d.ResourceID); err != nil {
			return fault.Invalid("system.resource_id", "system.resource_id %q is not a UUID", d.ResourceID)
		}
	}
	return nil
}

func (d *APICallDef) validate() error {
	if !slices.Contains(HTTPMethods, d.Method) {
		return fault.Invalid("api_call.method", "api_call.method %q is unknown: use one of %s (upper case)", d.Method, strings.Join(HTTPMethods, ", "))
	}
	if d.URL == "" {
		return fault.Invalid("api_call.url", "api_call.url is required")
	}
	u, err := url.Parse(d.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fault.Invalid("api_call.url", "api_call.url %q must be an absolute http or https URL", d.URL)
	}
	if u.User != nil {
		return fault.Invalid("api_call.url", "api_call.url must not carry credentials: put them in the agent's x-api_call-setup headers, which are stored encrypted")
	}
	if u.Fragment != "" {
		return fault.Invalid("api_call.url", "api_call.url must not have a fragment")
	}
	if _, err := ParseURLTemplate(d.URL); err != nil {
		return err
	}
	if d.Timeout != nil && (*d.Timeout < 1 || *d.Timeout > MaxAPICallTimeoutSeconds) {
		return fault.Invalid("api_call.timeout", "api_call.timeout must be between 1 and %d seconds, not %d", MaxAPICallTimeoutSeconds, *d.Timeout)
	}
	if d.Content != nil {
		if _, err := base64.StdEncoding.DecodeString(*d.Content); err != nil {
			return fault.Invalid("api_call.content", "api_call.content must be base64 (standard alphabet)")
		}
	}
	if len(d.Params) > 0 && string(d.Params) != "null" {
		var s string
		var m map[string]any
		if json.Unmarshal(d.Params, &s) != nil && json.Unmarshal(d.Params, &m) != nil {
			return fault.Invalid("api_call.params", "api_call.params must be a query string or an object")
		}
	}
	if ps := d.ParamsSchema; ps != nil {
		if ps.Type != "object" {
			return fault.Invalid("api_call.params_schema.type", "api_call.params_schema.type must be \"object\", not %q", ps.Type)
		}
		for _, r := range ps.Required {
			if _, ok := ps.Properties[r]; !ok {
				return fault.Invalid("api_call.params_schema.required", "api_call.params_schema.required names %q, which is not among its properties", r)
			}
		}
	}
	for name, ref := range d.Secrets {
		if ref.Name == "" {
			return fault.Invalid("api_call.secrets."+name+".name", "api_call.secrets.%s.name is required", name)
		}
	}
	return d.validateLocations()
}
