package toolsearch

import (
	"encoding/json"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/tool"
)

// ToolName is the built-in search tool's name; no stored tool can take it (it would shadow the
// search), so an agent that has one keeps it unsearchable until it is renamed.
const ToolName = "sinew_search_tools"

// DefaultThreshold is how many tools an agent may have before a chat and the MCP server show the
// search tool in place of all of them (SINEW_TOOL_SEARCH_THRESHOLD).
const DefaultThreshold = 30

// Result bounds of one search.
const (
	DefaultLimit = 5
	MaxLimit     = 20
)

// Function is the search tool as a model sees it.
func Function() llm.Function {
	return llm.Function{
		Name: ToolName,
		Description: "Search this agent's tools, which are too many to list at once, by what you want to do. " +
			"Answers the best matches with their descriptions and parameter schemas; call any of them by its name.",
		Parameters: map[string]any{
			"type":     "object",
			"required": []any{"query"},
			"properties": map[string]any{
				"query": map[string]any{"type": "string", "minLength": 1, "maxLength": 1000, "description": "what the tool should do, in words"},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxLimit, "default": DefaultLimit, "description": "how many tools to answer"},
			},
		},
	}
}

// Tool is the search tool as a loop holds it: a system tool never stored and never dispatched
// (the chat and the MCP server answer it themselves).
func Tool() *tool.Tool {
	return &tool.Tool{Name: ToolName, Type: tool.TypeSystem, Description: Function().Description,
		System: &tool.SystemDef{Resource: "agent", Operation: "tool.search"}}
}

// Match is one tool a search answers.
type Match struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// Answer is the search tool's result.
type Answer struct {
	Tools []Match `json:"tools"`
	// Total is how many tools the agent has.
	Total int `json:"total"`
}

// Run answers one call of the search tool: the limit best matches of its query.
func (ix *Index) Run(args map[string]any) (Answer, error) {
	q, _ := args["query"].(string)
	if strings.TrimSpace(q) == "" {
		return Answer{}, fault.Invalid("query", "query is required: what the tool should do, in words")
	}
	if len(q) > 1000 {
		return Answer{}, fault.Invalid("query", "query is %d characters; at most 1000", len(q))
	}
	limit := DefaultLimit
	if v, ok := args["limit"]; ok && v != nil {
		n, ok := jsonv.ToFloat(v)
		if !ok || n != float64(int(n)) || n < 1 || n > MaxLimit {
			return Answer{}, fault.Invalid("limit", "limit must be an integer from 1 to %d", MaxLimit)
		}
		limit = int(n)
	}
	out := Answer{Tools: []Match{}, Total: ix.Len()}
	for _, h := range ix.Search(q, limit) {
		f := ix.Function(h)
		out.Tools = append(out.Tools, Match{Name: f.Name, Description: f.Description, Parameters: f.Parameters})
	}
	return out, nil
}

// Offer is what a model is shown of fns when there are more than threshold: the search tool,
// then the tools found by earlier searches (named in found, most recent first), then those best
// matching text, threshold in all. At threshold or fewer it is fns as they are.
func Offer(ix *Index, fns []llm.Function, threshold int, text string, found []string) []llm.Function {
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	if len(fns) <= threshold {
		return fns
	}
	out := []llm.Function{Function()}
	seen := map[string]bool{ToolName: true}
	byName := make(map[string]int, len(fns))
	for i, f := range fns {
		byName[f.Name] = i
	}
	add := func(i int) {
		if len(out) < threshold && !seen[fns[i].Name] {
			seen[fns[i].Name] = true
			out = append(out, fns[i])
		}
	}
	for _, n := range found {
		if i, ok := byName[n]; ok {
			add(i)
		}
	}
	for _, h := range ix.Search(text, threshold) {
		add(h.Index)
	}
	return out
}

// FoundIn reads the tool names a search answered from the search tool's result as a tool
// message carries it ({"tools": [{"name": ...}]}); nothing for any other content.
func FoundIn(content string) []string {
	var a struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if json.Unmarshal([]byte(content), &a) != nil {
		return nil
	}
	var out []string
	for _, t := range a.Tools {
		out = append(out, t.Name)
	}
	return out
}
