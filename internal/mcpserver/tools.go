package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/integrations"
	"sinew/internal/jsonv"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// scope is what one request's server serves: whose, which agent (and session), which tools.
type scope struct {
	dev, agentID, sessionID string
	agentName               string
	tools                   []toolfmt.Formatted
	headerKey               string // the Idempotency-Key header, "" when absent
}

// scope reads the route's agent (or session and its agent) as the caller's, and formats the
// agent's tools but function tools as a chat would show them to a model.
func (s *service) scope(ctx context.Context, r *httpapi.Request) (*scope, error) {
	key, err := r.IdempotencyKey()
	if err != nil {
		return nil, err
	}
	sc := &scope{dev: r.DeveloperID, agentID: r.Param("agent_id"), sessionID: r.Param("session_id"), headerKey: key}
	var scopeMeta map[string]any
	if sc.sessionID != "" {
		sess, err := s.d.Store.GetSession(ctx, sc.dev, sc.sessionID)
		if err != nil {
			return nil, err
		}
		sc.agentID, scopeMeta = sess.AgentID, sess.Metadata
	}
	agent, err := s.d.Store.GetAgent(ctx, sc.dev, sc.agentID)
	if err != nil {
		return nil, err
	}
	sc.agentName = agent.Name
	stored, err := s.d.Store.ToolsFor(ctx, sc.dev, agent.ID, "")
	if err != nil {
		return nil, fmt.Errorf("mcp: the agent's tools: %w", err)
	}
	var tools []*tool.Tool
	for i := range stored {
		if stored[i].Type != tool.TypeFunction {
			tools = append(tools, &stored[i])
		}
	}
	if sc.tools, err = s.d.Formatter.FormatAll(tools, agentloop.IntegrationArgs(agent.Metadata, scopeMeta)); err != nil {
		return nil, err
	}
	return sc, nil
}

// server is an MCP server of the scope's tools, for one request.
func (s *service) server(sc *scope) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sinew", Title: "sinew: " + sc.agentName, Version: "1"}, &mcp.ServerOptions{
		Instructions: "The tools of sinew agent " + sc.agentName + ". Each call is a durable Step Functions execution (GET /executions lists it); " +
			"give _meta[\"" + MetaIdempotencyKey + "\"] (or an Idempotency-Key header) to make a retry the same call.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	names := make([]string, 0, len(sc.tools))
	for i := range sc.tools {
		f := &sc.tools[i]
		names = append(names, f.Function.Name)
		srv.AddTool(&mcp.Tool{Name: f.Function.Name, Description: f.Function.Description, InputSchema: f.Function.Parameters},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return s.call(ctx, sc, f, req)
			})
	}
	names = s.addSearch(srv, sc, names) // past the threshold: tools/list answers sinew_search_tools first
	srv.AddReceivingMiddleware(unknownTools(sc.agentName, names))
	return srv
}

// unknownTools answers a tools/call of a name the agent has no tool of with an error that lists
// the names it has (the SDK's own says only that the name is unknown).
func unknownTools(agent string, names []string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" && !slices.Contains(names, p.Name) {
				have := "it has none this route serves"
				if len(names) > 0 {
					have = "its tools here are " + strings.Join(names, ", ")
				}
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
					"agent %q has no tool %q: %s (function tools are the client's own and are not served over MCP; tools/list shows what is)", agent, p.Name, have)}
			}
			return next(ctx, method, req)
		}
	}
}

// call runs one tools/call as POST /tool-calls does and answers its result.
func (s *service) call(ctx context.Context, sc *scope, f *toolfmt.Formatted, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := arguments(req.Params.Arguments)
	if err == nil {
		err = integrations.CheckArguments(f.Function.Parameters, args)
	}
	if err != nil {
		return nil, s.protocolError(ctx, err, f.Function.Name)
	}
	key, err := idempotencyKey(sc.headerKey, req.Params.Meta)
	if err != nil {
		return nil, s.protocolError(ctx, err, f.Function.Name)
	}
	started := time.Now()
	st, err := s.d.Workflow.CallTool(ctx, sc.dev, workflow.ToolCallRequest{
		AgentID: sc.agentID, SessionID: sc.sessionID, Tool: f.Function.Name, Arguments: args},
		workflow.StartOptions{IdempotencyKey: key, Wait: s.d.Wait})
	if err != nil {
		if fault.Is(err, fault.Transient) {
			return errorResult("", string(fault.Transient), fault.Message(err)+retryHint(key)), nil
		}
		return nil, s.protocolError(ctx, err, f.Function.Name)
	}
	if st.Ended != nil {
		// It ran on tool_call_express and ended within the start: no poll.
		return s.result(ctx, sc.dev, st.Ended)
	}
	x, err := s.wait(ctx, sc.dev, st.ExecutionID, s.d.Wait-time.Since(started))
	if err != nil {
		s.d.Logger.WarnContext(ctx, "mcp: reading the execution", "execution_id", st.ExecutionID, "error", err.Error())
		return stillRunning(st.ExecutionID, key), nil
	}
	if x == nil {
		return stillRunning(st.ExecutionID, key), nil
	}
	return s.result(ctx, sc.dev, x)
}

func retryHint(key string) string {
	if key == "" {
		return "; call again"
	}
	return "; call again with the same idempotency key"
}

// arguments decodes a call's arguments: an object, or nothing.
func arguments(raw []byte) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	v, err := jsonv.Decode(raw)
	if err != nil {
		return nil, fault.Invalid("arguments", "arguments are not valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fault.Invalid("arguments", "arguments must be an object, not %s", jsonv.TypeName(v))
	}
	return m, nil
}

// idempotencyKey is the call's key: _meta's, else the header's.
func idempotencyKey(header string, meta mcp.Meta) (string, error) {
	v, ok := meta[MetaIdempotencyKey]
	if !ok || v == nil {
		return header, nil
	}
	k, isStr := v.(string)
	if !isStr || k == "" {
		return "", fault.Invalid("_meta."+MetaIdempotencyKey, "_meta[%q] must be a non-empty string", MetaIdempotencyKey)
	}
	return k, httpapi.CheckIdempotencyKey("_meta."+MetaIdempotencyKey, k)
}

// protocolError is the JSON-RPC error for a call that could not start: the caller's mistakes are
// invalid params with sinew's message; anything else is an internal error whose text stays here.
func (s *service) protocolError(ctx context.Context, err error, name string) error {
	switch fault.KindOf(err) {
	case fault.InvalidInput, fault.TooLarge, fault.NotFound, fault.Unprocessable, fault.Conflict:
		msg := fault.Message(err)
		if field := fault.FieldOf(err); field != "" && !strings.Contains(msg, field) {
			msg = field + ": " + msg
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %q: %s", name, msg)}
	}
	s.d.Logger.ErrorContext(ctx, "mcp: the call could not start", "tool", name, "error", err.Error())
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
}
