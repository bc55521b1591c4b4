package chat

import (
	"context"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/tool"
	"sinew/internal/toolsearch"
)

// toolSearch is a chat's view of an agent with more tools than the threshold: each model call is
// shown sinew_search_tools, the tools the turn's searches found, and the tools best matching the
// turn's user message, threshold in all, never the whole list; any of the agent's tools may still
// be called by name. Searches are answered here, without an executor.
type toolSearch struct {
	ix        *toolsearch.Index
	fns       []llm.Function
	threshold int
	search    *tool.Tool // the search tool's definition in this loop; calls of it are answered here
}

// newToolSearch is nil when the tools are no more than threshold (all are shown then).
func newToolSearch(formatted []toolfmt.Formatted, threshold int) *toolSearch {
	if threshold <= 0 {
		threshold = toolsearch.DefaultThreshold
	}
	if len(formatted) <= threshold {
		return nil
	}
	fns := make([]llm.Function, len(formatted))
	for i, f := range formatted {
		fns[i] = f.Function
	}
	return &toolSearch{ix: toolsearch.New(fns), fns: fns, threshold: threshold, search: toolsearch.Tool()}
}

// withSearch adds the search tool to the loop's tools, unless a tool of the agent holds its name.
func (ts *toolSearch) withSearch(formatted []toolfmt.Formatted) []toolfmt.Formatted {
	for _, f := range formatted {
		if f.Function.Name == toolsearch.ToolName {
			return formatted
		}
	}
	return append(formatted, toolfmt.Formatted{Tool: ts.search, Function: toolsearch.Function()})
}

// offer chooses what the next model call sees, from the conversation: the last user message is
// the text the tools are ranked against, and the search results since then come first.
func (ts *toolSearch) offer(st *loop.State) []llm.Function {
	text, found := turnOf(st.Messages)
	return toolsearch.Offer(ts.ix, ts.fns, ts.threshold, text, found)
}

// turnOf is the text of the last user message and the tool names the searches after it answered,
// the latest search's first.
func turnOf(msgs []llm.Message) (text string, found []string) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		switch {
		case m.Role == llm.RoleUser:
			return m.Content, found
		case m.Role == llm.RoleTool && m.Name == toolsearch.ToolName:
			found = append(found, toolsearch.FoundIn(m.Content)...)
		}
	}
	return "", found
}

// runner answers the search tool's calls and hands every other call to next.
func (ts *toolSearch) runner(next loop.Runner) loop.Runner {
	return loop.RunnerFunc(func(ctx context.Context, call *tool.Call, def *tool.Tool) tool.Result {
		if def != ts.search {
			return next.Run(ctx, call, def)
		}
		out, err := ts.ix.Run(call.Arguments())
		if err == nil {
			var b []byte
			if b, err = jsonv.Encode(out); err == nil {
				var v any
				if v, err = jsonv.Decode(b); err == nil {
					return tool.ResultOf(call, v)
				}
			}
		}
		return tool.ErrorResult(call, string(fault.KindOf(err)), fault.Message(err))
	})
}
