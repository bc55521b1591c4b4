// Package docsearch is the keyword search over an owner's docs.
//
// The query's words are scored against each doc's title and content with BM25 (k1 1.2, b 0.75),
// case- and accent-insensitively on letters and digits; docs that match no word are left out, and
// metadata_filter keeps docs whose metadata has each given key with an equal value. It is not
// Julep's embedding search: a vector is refused by name. The caller reads the docs (at most
// MaxDocs); Rank only scores them.
package docsearch

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
)

// Input is the body of POST /agents/{agent_id}/search and POST /users/{user_id}/search. The
// fields may also come under search_params (Julep's shape), which win over the top level.
type Input struct {
	Text           string         `json:"text,omitempty"`
	Limit          int            `json:"limit,omitempty"`
	MetadataFilter map[string]any `json:"metadata_filter,omitempty"`
	// Vector is Julep's embedding search; sinew has no embeddings and refuses it by name.
	Vector []float64 `json:"vector,omitempty"`
	Params *Params   `json:"search_params,omitempty"`
}

// Params is Julep's nested form of the search fields (mmr_strength, alpha and confidence
// belong to its vector search and are accepted and ignored).
type Params struct {
	Text           string         `json:"text,omitempty"`
	Limit          int            `json:"limit,omitempty"`
	MetadataFilter map[string]any `json:"metadata_filter,omitempty"`
	Vector         []float64      `json:"vector,omitempty"`
	MMRStrength    *float64       `json:"mmr_strength,omitempty"`
	Alpha          *float64       `json:"alpha,omitempty"`
	Confidence     *float64       `json:"confidence,omitempty"`
	Lang           string         `json:"lang,omitempty"`
}

// Search limits: the default and largest number of results, and how many docs one search reads.
const (
	DefaultLimit = 10
	MaxLimit     = 100
	MaxDocs      = 2000
)

// Check folds search_params into the top level, refuses a vector search and an empty text, and
// defaults the limit.
func (in *Input) Check() error {
	if p := in.Params; p != nil {
		if p.Text != "" {
			in.Text = p.Text
		}
		if p.Limit != 0 {
			in.Limit = p.Limit
		}
		if p.MetadataFilter != nil {
			in.MetadataFilter = p.MetadataFilter
		}
		if p.Vector != nil {
			in.Vector = p.Vector
		}
	}
	if in.Vector != nil {
		return fault.Invalid("vector", "vector search is not supported: sinew's doc search is a keyword search; send text")
	}
	if strings.TrimSpace(in.Text) == "" {
		return fault.Invalid("text", "text is required: the words to search for")
	}
	if in.Limit == 0 {
		in.Limit = DefaultLimit
	}
	if in.Limit < 1 || in.Limit > MaxLimit {
		return fault.Invalid("limit", "limit must be between 1 and %d", MaxLimit)
	}
	return nil
}

// Hit is one doc found, with its score (higher is better).
type Hit struct {
	store.Doc
	Score float64 `json:"score"`
}

// Result is a search's answer.
type Result struct {
	Docs []Hit `json:"docs"`
	// Truncated is true when the owner has more docs than one search reads (MaxDocs): only the
	// oldest were searched.
	Truncated bool `json:"truncated"`
}

const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Rank scores docs against in (checked) and gives the best in.Limit, best first.
func Rank(docs []store.Doc, in *Input) []Hit {
	query := uniq(tokens(in.Text))
	inQuery := make(map[string]struct{}, len(query))
	for _, q := range query {
		inQuery[q] = struct{}{}
	}
	type docTerms struct {
		doc store.Doc
		tf  map[string]int
		n   int
	}
	var corpus []docTerms
	total := 0
	for _, d := range docs {
		if !MatchesFilter(d.Metadata, in.MetadataFilter) {
			continue
		}
		// Only the query's words are counted: a doc's other words matter only by their number.
		tf := make(map[string]int, len(query))
		n := 0
		eachToken(d.Title+" "+contentText(d.Content), func(t string) {
			n++
			if _, ok := inQuery[t]; ok {
				tf[t]++
			}
		})
		corpus = append(corpus, docTerms{d, tf, n})
		total += n
	}
	hits := []Hit{}
	if len(corpus) == 0 {
		return hits
	}
	avg := float64(total) / float64(len(corpus))
	if avg == 0 {
		avg = 1
	}
	df := map[string]int{}
	for _, dt := range corpus {
		for _, q := range query {
			if dt.tf[q] > 0 {
				df[q]++
			}
		}
	}
	n := float64(len(corpus))
	for _, dt := range corpus {
		score := 0.0
		for _, q := range query {
			f := float64(dt.tf[q])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[q])+0.5)/(float64(df[q])+0.5))
			score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(dt.n)/avg))
		}
		if score > 0 {
			hits = append(hits, Hit{Doc: dt.doc, Score: math.Round(score*1e6) / 1e6})
		}
	}
	// Best first; equal scores keep the docs' order (oldest first), so answers are stable.
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > in.Limit {
		hits = hits[:in.Limit]
	}
	return hits
}

func contentText(c any) string {
	switch x := c.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}

// tokens splits text into lower-case words of letters and digits, with accents folded for the
// common Latin letters so "café" finds "cafe".
func tokens(text string) []string {
	var out []string
	eachToken(text, func(t string) { out = append(out, t) })
	return out
}

// eachToken calls f with each word of text, as tokens gives them, without building the list; a
// word needing no folding is passed as a substring, without allocating.
func eachToken(text string, f func(string)) {
	lower := strings.ToLower(text)
	start, needFold := -1, false
	emit := func(end int) {
		if start < 0 {
			return
		}
		w := lower[start:end]
		if needFold {
			w = strings.Map(fold, w)
		}
		f(w)
		start, needFold = -1, false
	}
	for i, r := range lower {
		var word bool
		if r < utf8.RuneSelf { // the common case, without the tables
			word = 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
		} else {
			word = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		if !word {
			emit(i)
			continue
		}
		if start < 0 {
			start = i
		}
		if r >= 0xC0 && r <= 0xFF {
			if _, ok := folds[r]; ok {
				needFold = true
			}
		}
	}
	emit(len(lower))
}

var folds = map[rune]rune{'à': 'a', 'á': 'a', 'â': 'a', 'ä': 'a', 'ã': 'a', 'å': 'a', 'ç': 'c', 'è': 'e', 'é': 'e', 'ê': 'e', 'ë': 'e',
	'ì': 'i', 'í': 'i', 'î': 'i', 'ï': 'i', 'ñ': 'n', 'ò': 'o', 'ó': 'o', 'ô': 'o', 'ö': 'o', 'õ': 'o', 'ù': 'u', 'ú': 'u', 'û': 'u', 'ü': 'u', 'ý': 'y', 'ÿ': 'y'}

func fold(r rune) rune {
	if f, ok := folds[r]; ok {
		return f
	}
	return r
}

func uniq(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// MatchesFilter tells whether meta has each key of filter with an equal value.
func MatchesFilter(meta, filter map[string]any) bool {
	for k, v := range filter {
		mv, ok := meta[k]
		if !ok || !jsonv.Equal(mv, v) {
			return false
		}
	}
	return true
}
