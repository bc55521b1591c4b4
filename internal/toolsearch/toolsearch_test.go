package toolsearch

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/llm"
)

func TestTerms(t *testing.T) {
	tests := []struct{ in, want string }{
		{"listOpenIssues", "list open issu"},
		{"list_open_issues", "list open issu"},
		{"Scheduled the meetings", "schedul meet"},
		{"scheduling a meeting", "schedul meet"},
		{"replies to emails", "repli email"},
		{"running jobs", "run job"},
		{"the of and", ""},
		{"boxes watches", "box watch"},
	}
	for _, tt := range tests {
		if got := strings.Join(Terms(tt.in), " "); got != tt.want {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func manyFunctions(n int) []llm.Function {
	fns := []llm.Function{
		{Name: "weather_forecast", Description: "Get the weather forecast for a city", Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}},
		{Name: "translate_text", Description: "Translate text into another language", Parameters: map[string]any{"type": "object",
			"properties": map[string]any{"json": map[string]any{"type": "object", "properties": map[string]any{"target_language": map[string]any{"type": "string"}}}}}},
	}
	for i := len(fns); i < n; i++ {
		fns = append(fns, llm.Function{Name: fmt.Sprintf("batch_job_%03d", i), Description: "Run a nightly batch job", Parameters: map[string]any{"type": "object"}})
	}
	return fns
}

// TestOffer: past the threshold the search tool comes first, then what searches found, then what
// matches the text, threshold in all; at or under it, every function as it is.
func TestOffer(t *testing.T) {
	fns := manyFunctions(500)
	ix := New(fns)
	tests := []struct {
		name      string
		fns       []llm.Function
		threshold int
		text      string
		found     []string
		first     []string
		max       int
	}{
		{"under", fns[:30], 30, "weather", nil, []string{"weather_forecast", "translate_text"}, 30},
		{"over, text", fns, 30, "will it rain? the weather forecast please", nil, []string{ToolName, "weather_forecast"}, 30},
		{"over, found first", fns, 30, "weather forecast", []string{"translate_text"}, []string{ToolName, "translate_text", "weather_forecast"}, 30},
		{"over, many matches", fns, 10, "run a batch job", nil, []string{ToolName}, 10},
		{"default threshold", fns, 0, "batch", nil, []string{ToolName}, DefaultThreshold},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range Offer(ix, tt.fns, tt.threshold, tt.text, tt.found) {
				got = append(got, f.Name)
			}
			if len(got) > tt.max || !slices.Equal(got[:len(tt.first)], tt.first) {
				t.Errorf("Offer = %d %v, want at most %d starting %v", len(got), got, tt.max, tt.first)
			}
		})
	}
}

func TestRun(t *testing.T) {
	ix := New(manyFunctions(40))
	out, err := ix.Run(map[string]any{"query": "translate into German", "limit": int64(2)})
	if err != nil || len(out.Tools) == 0 || out.Tools[0].Name != "translate_text" || out.Total != 40 || out.Tools[0].Parameters == nil {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	for _, bad := range []map[string]any{{}, {"query": " "}, {"query": "x", "limit": 0}, {"query": "x", "limit": 21}, {"query": "x", "limit": 1.5}, {"query": "x", "limit": "3"}, {"query": strings.Repeat("x", 1001)}} {
		if _, err := ix.Run(bad); fault.KindOf(err) != fault.InvalidInput {
			t.Errorf("Run(%v) = %v, want InvalidInput", bad, err)
		}
	}
	if got := FoundIn(`{"tools":[{"name":"a"},{"name":"b"}],"total":3}`); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("FoundIn = %v", got)
	}
	if got := FoundIn(`{"error":"x"}`); len(got) != 0 {
		t.Errorf("FoundIn of an error = %v", got)
	}
}

// BenchmarkSearch500 ranks 500 tools for one query, beside building the index (what a chat turn
// does once) as the baseline.
func BenchmarkSearch500(b *testing.B) {
	fns := manyFunctions(500)
	b.Run("index", func(b *testing.B) {
		for range b.N {
			New(fns)
		}
	})
	ix := New(fns)
	b.Run("search", func(b *testing.B) {
		for range b.N {
			ix.Search("translate this into German please", 30)
		}
	})
}
