// Package mcptools makes a remote MCP server's tools an agent's (or task's) own integration tools.
// There is one tool per remote tool (provider mcp, method call_tool, the remote name fixed in its
// arguments, the remote input schema as its params_schema), so a chat, POST /tool-calls and sinew's
// own MCP server show and call them like any tool. Importing again refreshes them: the tools an
// earlier import with the same prefix and server made (marked by integration.origin) are updated or
// removed to match the server; a name held by any other tool is a Conflict and nothing changes.
package mcptools

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"sync"

	"sinew/internal/fault"
	"sinew/internal/integrations/providers/mcp"
	"sinew/internal/tool"
)

// Request is the body of POST .../tools/mcp.
type Request struct {
	// Setup is the mcp provider's setup: transport, http_url and http_headers, whose values are
	// strings (sealed when stored) or developer-secret references ({"secret": "NAME"}).
	Setup map[string]any `json:"setup"`
	// Prefix starts every tool's name and, with the server, identifies the import for a refresh.
	Prefix string `json:"prefix"`
}

// Result is a refresh's outcome, by tool name.
type Result struct {
	Added     []string  `json:"added"`
	Changed   []string  `json:"changed"`
	Removed   []string  `json:"removed"`
	Unchanged int       `json:"unchanged"`
	Skipped   []Skipped `json:"skipped"`
}

// Skipped is a remote tool not made into a tool, and why.
type Skipped struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// OriginKind marks the tools this package makes.
const OriginKind = "mcp"

// prefixPattern leaves room in the 40 characters of a tool's name for the remote tool's own.
var prefixPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,23}$`) })

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_]`) })

// ServerKey is the server's URL as an origin records it: without query or fragment, which may
// carry a credential.
func ServerKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// checkRequest checks what can be checked before the server is asked.
func (r Request) check() error {
	if !prefixPattern().MatchString(r.Prefix) {
		return fault.Invalid("prefix", "prefix is required and must match ^[A-Za-z_][A-Za-z0-9_]{0,23}$, got %q", r.Prefix)
	}
	if r.Setup == nil {
		return fault.Invalid("setup", "setup is required: {\"transport\": \"http\" or \"sse\", \"http_url\": ..., \"http_headers\": {...}}")
	}
	return nil
}

// checkSetup checks what the api side can of a setup without opening anything (the executor
// checks the rest, with its secrets resolved): the transport, the server's URL, and header values
// that are strings or developer-secret references. It answers the server as origins record it.
func checkSetup(m map[string]any) (string, error) {
	for k := range m {
		switch k {
		case "transport", "http_url", "http_headers":
		default:
			return "", fault.Invalid("setup."+k, "setup.%s is not taken: an import's setup has transport, http_url and http_headers (stdio servers are not run)", k)
		}
	}
	if t, _ := m["transport"].(string); t != "http" && t != "sse" {
		return "", fault.Invalid("setup.transport", "setup.transport must be http or sse")
	}
	raw, _ := m["http_url"].(string)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fault.Invalid("setup.http_url", "setup.http_url must be an absolute http or https URL (the server's MCP endpoint)")
	}
	if u.User != nil {
		return "", fault.Invalid("setup.http_url", "setup.http_url may not carry credentials; put them in setup.http_headers")
	}
	if hv, ok := m["http_headers"]; ok && hv != nil {
		headers, ok := hv.(map[string]any)
		if !ok {
			return "", fault.Invalid("setup.http_headers", "setup.http_headers must be an object of header names to values")
		}
		for k, v := range headers {
			switch x := v.(type) {
			case string:
			case map[string]any:
				if name, _ := x["secret"].(string); name == "" || len(x) != 1 {
					return "", fault.Invalid("setup.http_headers", "setup.http_headers[%s] must be a string or {\"secret\": \"NAME\"}", k)
				}
			default:
				return "", fault.Invalid("setup.http_headers", "setup.http_headers[%s] must be a string or {\"secret\": \"NAME\"}", k)
			}
		}
	}
	return ServerKey(raw), nil
}

// toolName is the local name of a remote tool, or why it has none.
func toolName(prefix, remote string) (string, error) {
	name := prefix + unsafeChars().ReplaceAllString(remote, "_")
	if remote == "" || len(name) > 40 {
		return "", fmt.Errorf("%q with the prefix is longer than a tool name's 40 characters; choose a shorter prefix", remote)
	}
	return name, nil
}

// build makes one tool per remote tool; two remote names that become one local name keep the
// first.
func build(req Request, server string, remote []mcp.ToolInfo) ([]tool.Tool, []Skipped) {
	var out []tool.Tool
	var skipped []Skipped
	seen := map[string]string{}
	for _, r := range remote {
		name, err := toolName(req.Prefix, r.Name)
		if err != nil {
			skipped = append(skipped, Skipped{Tool: r.Name, Reason: err.Error()})
			continue
		}
		if other, dup := seen[name]; dup {
			skipped = append(skipped, Skipped{Tool: r.Name, Reason: fmt.Sprintf("its name %s is %q's already", name, other)})
			continue
		}
		seen[name] = r.Name
		desc := ""
		if r.Description != nil {
			desc = truncate(*r.Description, tool.MaxDescription)
		}
		out = append(out, tool.Tool{Name: name, Type: tool.TypeIntegration, Description: desc, Integration: &tool.IntegrationDef{
			Provider: "mcp", Method: "call_tool", Setup: req.Setup,
			Arguments:    map[string]any{"tool_name": r.Name},
			ParamsSchema: schemaOf(r.InputSchema),
			Origin:       &tool.Origin{Kind: OriginKind, Server: server, Prefix: req.Prefix, Remote: r.Name},
		}})
	}
	return out, skipped
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// schemaOf is a remote input schema as plain JSON values, an empty object schema when it has none.
func schemaOf(v any) map[string]any {
	var m map[string]any
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return m
}

// Plan is what a refresh does.
type plan struct {
	add     []tool.Tool
	change  []change
	remove  []tool.Tool
	same    int
	clashes []string
}

type change struct {
	id   string
	want tool.Tool
}

// diff compares the tools wanted with the owner's: own are those an earlier import with this
// origin made; any other tool holding a wanted name is a clash.
func diff(want []tool.Tool, have []tool.Tool, server, prefix string) plan {
	var p plan
	byName := map[string]tool.Tool{}
	for _, t := range have {
		byName[t.Name] = t
	}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.Name] = true
		h, ok := byName[w.Name]
		switch {
		case !ok:
			p.add = append(p.add, w)
		case !own(h, server, prefix):
			p.clashes = append(p.clashes, w.Name)
		case h.Description == w.Description && reflect.DeepEqual(schemaOf(h.Integration.ParamsSchema), w.Integration.ParamsSchema) &&
			h.Integration.Origin.Remote == w.Integration.Origin.Remote:
			p.same++
		default:
			p.change = append(p.change, change{id: h.ID, want: w})
		}
	}
	for _, h := range have {
		if own(h, server, prefix) && !wanted[h.Name] {
			p.remove = append(p.remove, h)
		}
	}
	sort.Strings(p.clashes)
	return p
}

func own(t tool.Tool, server, prefix string) bool {
	d := t.Integration
	return t.Type == tool.TypeIntegration && d != nil && d.Origin != nil &&
		d.Origin.Kind == OriginKind && d.Origin.Server == server && d.Origin.Prefix == prefix
}
