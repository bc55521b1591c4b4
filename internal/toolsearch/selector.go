package toolsearch

import (
	"context"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/tool"
)

// Selector is a model loop's view of an agent with more tools than the threshold: each model call
// is shown sinew_search_tools, the tools the turn's searches found, and the tools best matching
// the turn's user message, threshold in all, never the whole list; any of the agent's tools may
// still be called by name. Searches are answered by the Selector itself, without an executor: by
// the chat's runner (Runner), and by agent_loop's model step (Answer), whose other calls its Map
// runs.
type Selector struct {
	ix        *Index
	fns       []llm.Function
	threshold int
	search    *tool.Tool // the search tool's definition in this loop; calls of it are answered here
}

// NewSelector is nil when the tools are no more than threshold (all are shown then; 0 is
// DefaultThreshold).
func NewSelector(formatted []toolfmt.Formatted, threshold int) *Selector {
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	if len(formatted) <= threshold {
		return nil
	}
	fns := make([]llm.Function, len(formatted))
	for i, f := range formatted {
		fns[i] = f.Function
	}
	return &Selector{ix: New(fns), fns: fns, threshold: threshold, search: Tool()}
}

// WithSearch adds the search tool to the loop's tools, unless a tool of the agent holds its name.
func (s *Selector) WithSearch(formatted []toolfmt.Formatted) []toolfmt.Formatted {
	for _, f := range formatted {
		if f.Function.Name == ToolName {
			return formatted
		}
	}
	return append(formatted, toolfmt.Formatted{Tool: s.search, Function: Function()})
}

// Offer chooses what the next model call sees, from the conversation (loop.Config.Offer): the last
// user message is the text the tools are ranked against, and the search results since then come
// first.
func (s *Selector) Offer(st *loop.State) []llm.Function {
	text, found := turnOf(st.Messages)
	return Offer(s.ix, s.fns, s.threshold, text, found)
}

// turnOf is the text of the last user message and the tool names the searches after it answered,
// the latest search's first.
func turnOf(msgs []llm.Message) (text string, found []string) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		switch {
		case m.Role == llm.RoleUser:
			return m.Content, found
		case m.Role == llm.RoleTool && m.Name == ToolName:
			found = append(found, FoundIn(m.Content)...)
		}
	}
	return "", found
}

// Owns reports whether def is this loop's search tool (not an agent's tool of the same name).
func (s *Selector) Owns(def *tool.Tool) bool { return s != nil && def == s.search }

// Answer is the search call's result.
func (s *Selector) Answer(call *tool.Call) tool.Result {
	out, err := s.ix.Run(call.Arguments())
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
}

// Runner answers the search tool's calls and hands every other call to next.
func (s *Selector) Runner(next loop.Runner) loop.Runner {
	return loop.RunnerFunc(func(ctx context.Context, call *tool.Call, def *tool.Tool) tool.Result {
		if !s.Owns(def) {
			return next.Run(ctx, call, def)
		}
		return s.Answer(call)
	})
}
