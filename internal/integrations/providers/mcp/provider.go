package mcp

import (
	"context"

	"sinew/internal/integrations"
)

// Provider is the mcp provider for the registry.
var Provider = &integrations.Provider{
	Name:         "mcp",
	FriendlyName: "Model Context Protocol",
	URL:          "https://modelcontextprotocol.io",
	Docs:         "https://modelcontextprotocol.io/specification",
	Methods: []*integrations.Method{
		integrations.NewMethod("list_tools", "List the tools an MCP server offers (streamable HTTP or SSE).", func(ctx context.Context, ienv integrations.Env, s Setup, a ListToolsArguments) (ListToolsOutput, error) {
			return ListTools(ctx, fromRegistry(ienv), withDefaultURL(s, ienv), a)
		}),
		integrations.NewMethod("call_tool", "Call a tool on an MCP server and return its text, structured content, content items and is_error.", func(ctx context.Context, ienv integrations.Env, s Setup, a CallToolArguments) (CallToolOutput, error) {
			return CallTool(ctx, fromRegistry(ienv), withDefaultURL(s, ienv), a)
		}),
	},
}

func fromRegistry(ienv integrations.Env) Env { return Env{Guard: ienv.Guard, Log: ienv.Log} }

// withDefaultURL fills http_url, when setup has none, from the provider's base URL
// (SINEW_MCP_BASE_URL): an operator can point every mcp tool at one server.
func withDefaultURL(s Setup, ienv integrations.Env) Setup {
	if s.HTTPURL == "" {
		s.HTTPURL = ienv.BaseURL
	}
	return s
}
