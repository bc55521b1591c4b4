// Package mcpserver serves an agent's tools to any MCP client.
//
// POST /agents/{agent_id}/mcp and POST /sessions/{session_id}/mcp speak MCP's streamable HTTP
// transport, stateless, answering in JSON (the official Go SDK's server,
// github.com/modelcontextprotocol/go-sdk, does the protocol).
//
//   - tools/list gives the agent's integration, api_call and system tools as a model sees them in
//     a chat (package toolfmt); function tools are the client's own and are not listed. Past
//     Deps.ToolSearchThreshold tools it lists sinew_search_tools first and that many in all
//     (package toolsearch); every tool stays callable by name.
//   - tools/call starts the call as POST /tool-calls does (package workflow: same envelope, merge,
//     Step Functions execution and Idempotency-Key), waits for its result up to Deps.Wait, and
//     answers it as MCP content; a call that outlives the wait answers with its execution id and
//     goes on running.
//
// On a session's route, the session's metadata overrides the agent's, as in a chat. The routes sit
// behind the API's JWT authorizer like every other; GET /.well-known/oauth-protected-resource
// (RFC 9728) tells an MCP client what protects them.
package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"sinew/internal/httpapi"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// DefaultWait is how long tools/call waits for its execution: under API Gateway's 30 s.
const DefaultWait = 25 * time.Second

// MetaIdempotencyKey is the tools/call _meta key that carries an idempotency key (the
// Idempotency-Key header does too; the JSON-RPC id never does: clients reuse ids freely).
const MetaIdempotencyKey = "sinew/idempotency_key"

// Deps are the routes' dependencies.
type Deps struct {
	Store     *store.Store
	Workflow  *workflow.Service // starts tool_call executions, as POST /tool-calls does
	Formatter *toolfmt.Formatter
	Wait      time.Duration // how long tools/call waits for a result; DefaultWait when 0
	// Issuer is the bearer tokens' issuer, listed as the authorization server in the
	// protected-resource metadata; "" leaves it out.
	Issuer string
	Logger *slog.Logger // slog.Default() when nil
	// ToolSearchThreshold: an agent with more tools is listed as sinew_search_tools and its first
	// tools, this many in all (toolsearch.DefaultThreshold when 0); all stay callable.
	ToolSearchThreshold int
}

const tag = "mcp"

// Register adds the MCP routes and the protected-resource metadata to rt.
func Register(rt *httpapi.Router, d Deps) {
	if d.Wait <= 0 {
		d.Wait = DefaultWait
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	s := &service{d: d}
	desc := "MCP's streamable HTTP transport (stateless; JSON answers; the Go SDK's newest revision, 2026-07-28, and the earlier ones its server negotiates). " +
		"tools/list gives the %s's integration, api_call and system tools as a model sees them; tools/call runs one as POST /tool-calls does " +
		"(an Idempotency-Key header or _meta[\"" + MetaIdempotencyKey + "\"] makes a repeat the same execution) and answers its result as MCP content, " +
		"or, past the wait (SINEW_MCP_WAIT_S), its execution id while it goes on running. Other methods than POST answer 405: the server opens no stream."
	for _, p := range []struct{ path, scope, sumry string }{
		{"/agents/{agent_id}/mcp", "agent", "An agent's tools as an MCP server"},
		{"/sessions/{session_id}/mcp", "session's agent (its metadata over the agent's)", "A session's tools as an MCP server"},
	} {
		rt.Handle(httpapi.Route{Method: http.MethodPost, Path: p.path, Handler: s.serve, Op: httpapi.Operation{
			Summary: p.sumry, Description: fmt.Sprintf(desc, p.scope), Tags: []string{tag},
			Params:  []httpapi.Param{httpapi.IdempotencyParam()},
			Request: map[string]any{"type": "object", "description": "a JSON-RPC 2.0 message of MCP"},
			Responses: map[int]httpapi.Resp{200: {Description: "the JSON-RPC answer", Schema: map[string]any{"type": "object"}},
				202: {Description: "a notification or response was accepted"}, 400: {Description: "not an MCP message, or a bad header"},
				404: {Description: "unknown or not yours"}},
		}})
	}
	registerMetadata(rt, d.Issuer)
}

type service struct{ d Deps }

// serve answers one MCP message on an agent's or a session's route.
func (s *service) serve(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	sc, err := s.scope(ctx, r)
	if err != nil {
		return nil, err
	}
	return serveMCP(ctx, s.server(sc), r)
}
