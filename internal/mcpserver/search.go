package mcpserver

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/toolsearch"
)

// addSearch serves sinew_search_tools when the scope has more tools than the threshold: tools/list
// then answers the search tool and the scope's first threshold-1 tools, and every tool stays
// callable by the name a search gives. It answers names with the search tool's added.
func (s *service) addSearch(srv *mcp.Server, sc *scope, names []string) []string {
	threshold := s.d.ToolSearchThreshold
	if threshold <= 0 {
		threshold = toolsearch.DefaultThreshold
	}
	if len(sc.tools) <= threshold || slices.Contains(names, toolsearch.ToolName) {
		return names
	}
	fns := make([]llm.Function, len(sc.tools))
	listed := map[string]bool{toolsearch.ToolName: true}
	for i, f := range sc.tools {
		fns[i] = f.Function
		if i < threshold-1 {
			listed[f.Function.Name] = true
		}
	}
	ix := toolsearch.New(fns)
	fn := toolsearch.Function()
	srv.AddTool(&mcp.Tool{Name: fn.Name, Description: fn.Description, InputSchema: fn.Parameters},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return searchResult(ix, req.Params.Arguments), nil
		})
	srv.AddReceivingMiddleware(listOnly(listed))
	return append(names, toolsearch.ToolName)
}

// searchResult runs one search: its matches as structured content and JSON text, or a tool error.
func searchResult(ix *toolsearch.Index, raw json.RawMessage) *mcp.CallToolResult {
	args := map[string]any{}
	if len(raw) > 0 {
		v, err := jsonv.Decode(raw)
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			return errorResult("", string(fault.InvalidInput), "the arguments must be a JSON object: {\"query\": ...}")
		}
		args = m
	}
	out, err := ix.Run(args)
	if err != nil {
		return errorResult("", string(fault.KindOf(err)), fault.Message(err))
	}
	b, err := jsonv.Encode(out)
	if err != nil {
		return errorResult("", string(fault.Internal), "the search's answer could not be encoded")
	}
	v, _ := jsonv.Decode(b)
	m, _ := v.(map[string]any)
	return &mcp.CallToolResult{StructuredContent: m, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// listOnly keeps tools/list to the named tools, the search tool first.
func listOnly(listed map[string]bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListToolsResult)
			if err != nil || method != "tools/list" || !ok {
				return res, err
			}
			kept := make([]*mcp.Tool, 0, len(listed))
			for _, t := range lr.Tools {
				if listed[t.Name] {
					kept = append(kept, t)
				}
			}
			slices.SortStableFunc(kept, func(a, b *mcp.Tool) int {
				switch {
				case a.Name == toolsearch.ToolName:
					return -1
				case b.Name == toolsearch.ToolName:
					return 1
				}
				return 0
			})
			lr.Tools = kept
			return lr, nil
		}
	}
}
