package toolsearch

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"sinew/internal/llm"
)

type labelled struct {
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"` // the tools that answer it: any of them among the first k is a hit
}

func loadJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// recallAt is the share of queries with one of their relevant tools among the index's first k.
func recallAt(ix *Index, qs []labelled, k int) (float64, []string) {
	hits := 0
	var misses []string
	for _, q := range qs {
		var got []string
		for _, h := range ix.Search(q.Query, k) {
			got = append(got, ix.Function(h).Name)
		}
		if slices.ContainsFunc(q.Relevant, func(n string) bool { return slices.Contains(got, n) }) {
			hits++
		} else {
			misses = append(misses, fmt.Sprintf("%q → %v (want one of %v)", q.Query, got, q.Relevant))
		}
	}
	return float64(hits) / float64(len(qs)), misses
}

// TestRecallAt5: over 284 realistic tools (testdata/tools.json: 59 services' operations as
// tool catalogues describe them), the queries of testdata/queries.json (the set the synonyms were
// written against) and testdata/heldout.json (written after the ranking was frozen) find a right
// tool among the first five at least 90% of the time. go test -v prints the figures.
func TestRecallAt5(t *testing.T) {
	var fns []llm.Function
	loadJSON(t, "testdata/tools.json", &fns)
	ix := New(fns)
	for _, set := range []string{"queries", "heldout"} {
		var qs []labelled
		loadJSON(t, "testdata/"+set+".json", &qs)
		for _, q := range qs {
			for _, r := range q.Relevant {
				if !slices.ContainsFunc(fns, func(f llm.Function) bool { return f.Name == r }) {
					t.Fatalf("%s: %q names %s, which is not a tool", set, q.Query, r)
				}
			}
		}
		r1, _ := recallAt(ix, qs, 1)
		r5, misses := recallAt(ix, qs, 5)
		t.Logf("%s: %d tools, %d queries: recall@1 %.3f, recall@5 %.3f", set, len(fns), len(qs), r1, r5)
		for _, m := range misses {
			t.Logf("  miss: %s", m)
		}
		if r5 < 0.9 {
			t.Errorf("%s: recall@5 %.3f, want at least 0.9", set, r5)
		}
	}
}
