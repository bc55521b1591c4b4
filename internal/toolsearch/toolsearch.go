// Package toolsearch ranks an agent's tools against a text, for agents with too many to show at once.
// A chat sends the model the tools most relevant to the turn plus sinew_search_tools, and sinew's
// MCP server offers the same search.
//
// Ranking is BM25 (as package docsearch ranks documents) over each tool's name (split at "_" and
// case changes), description and parameter names and descriptions, weighted by field (a word of
// the name counts most), with words stemmed (a light English suffix stripper: "emails", "emailed"
// and "emailing" are "email") and stop words dropped; the query is widened by a small table of
// synonyms common in tool descriptions ("send" also finds "post", "bug" finds "issue"), which
// count for less than the query's own words. Its recall on a labelled set of queries over 284
// tools is measured by TestRecallAt5 (infra/bench/BENCHMARKS.md).
package toolsearch

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"sinew/internal/llm"
)

// Field weights: how much one word of each part of a tool counts.
const (
	weightName      = 3.0
	weightDesc      = 2.0
	weightParam     = 1.0
	weightParamDesc = 0.5
	weightSynonym   = 0.4 // a synonym of a query word, against the word itself
	bm25K1          = 1.2
	bm25B           = 0.75
)

// Index ranks a fixed list of functions; build it once per list. It is safe for concurrent use.
type Index struct {
	fns  []llm.Function
	docs []map[string]float64 // term → weighted count
	lens []float64
	df   map[string]int
	avg  float64
}

// New indexes fns.
func New(fns []llm.Function) *Index {
	ix := &Index{fns: fns, docs: make([]map[string]float64, len(fns)), lens: make([]float64, len(fns)), df: map[string]int{}}
	total := 0.0
	for i, f := range fns {
		tf := map[string]float64{}
		add := func(text string, w float64) {
			for _, t := range Terms(text) {
				tf[t] += w
				ix.lens[i] += w
			}
		}
		add(f.Name, weightName)
		add(f.Description, weightDesc)
		addParams(f.Parameters, add, 0)
		for t := range tf {
			ix.df[t]++
		}
		ix.docs[i] = tf
		total += ix.lens[i]
	}
	if len(fns) > 0 {
		ix.avg = total / float64(len(fns))
	}
	if ix.avg == 0 {
		ix.avg = 1
	}
	return ix
}

// addParams adds the names and descriptions of a schema's properties, and of the properties of
// the objects they hold (an api_call tool's body parameters sit under "json"), a few levels deep.
func addParams(schema map[string]any, add func(string, float64), depth int) {
	props, ok := schema["properties"].(map[string]any)
	if !ok || depth > 3 {
		return
	}
	for name, p := range props {
		add(name, weightParam)
		if pm, ok := p.(map[string]any); ok {
			d, _ := pm["description"].(string)
			add(d, weightParamDesc)
			addParams(pm, add, depth+1)
		}
	}
}

// Len is the number of functions indexed.
func (ix *Index) Len() int { return len(ix.fns) }

// Hit is one function found, with its score.
type Hit struct {
	Index int // in the list New was given
	Score float64
}

// Search gives the k best functions for query, best first; functions no word of the query (or
// of its synonyms) matches are left out, and equal scores keep the list's order.
func (ix *Index) Search(query string, k int) []Hit {
	q := queryTerms(query)
	n := float64(len(ix.fns))
	var hits []Hit
	for i, tf := range ix.docs {
		score := 0.0
		for t, qw := range q {
			f := tf[t]
			if f == 0 {
				continue
			}
			df := float64(ix.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += qw * idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*ix.lens[i]/ix.avg))
		}
		if score > 0 {
			hits = append(hits, Hit{Index: i, Score: score})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].Score > hits[b].Score })
	if k >= 0 && len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// Function gives the function of a hit.
func (ix *Index) Function(h Hit) llm.Function { return ix.fns[h.Index] }

// queryTerms are the query's terms with their weights: its own words 1, their synonyms less.
func queryTerms(query string) map[string]float64 {
	out := map[string]float64{}
	for _, t := range Terms(query) {
		out[t] = 1
	}
	for t := range clone(out) {
		for _, s := range synonyms()[t] {
			if _, own := out[s]; !own {
				out[s] = max(out[s], weightSynonym)
			}
		}
	}
	return out
}

func clone(m map[string]float64) map[string]float64 {
	c := make(map[string]float64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Terms splits text into stemmed lower-case words without stop words: "listOpenIssues",
// "list_open_issues" and "list open issues" are all list, open, issu.
func Terms(text string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) > 0 {
			w := strings.ToLower(string(word))
			if !stopWords[w] {
				out = append(out, Stem(w))
			}
			word = word[:0]
		}
	}
	var prev rune
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush() // a case change starts a word: createIssue
			}
			word = append(word, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}
