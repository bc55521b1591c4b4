package resources

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
)

// SearchInput is the body of POST /agents/{agent_id}/search and POST /users/{user_id}/search. The
// fields may also come under search_params (Julep's shape), which win over the top level.
type SearchInput struct {
	Text           string         `json:"text,omitempty"`
	Limit          int            `json:"limit,omitempty"`
	MetadataFilter map[string]any `json:"metadata_filter,omitempty"`
	// Vector is Julep's embedding search; sinew has no embeddings and refuses it by name.
	Vector       []float64     `json:"vector,omitempty"`
	SearchParams *SearchParams `json:"search_params,omitempty"`
}

// SearchParams is Julep's nested form of the search fields (mmr_strength, alpha and confidence
// belong to its vector search and are accepted and ignored).
type SearchParams struct {
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
	DefaultSearchLimit = 10
	MaxSearchLimit     = 100
	MaxSearchDocs      = 2000
)

func (in *SearchInput) check() error {
	if p := in.SearchParams; p != nil {
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
		in.Limit = DefaultSearchLimit
	}
	if in.Limit < 1 || in.Limit > MaxSearchLimit {
		return fault.Invalid("limit", "limit must be between 1 and %d", MaxSearchLimit)
	}
	return nil
}

// SearchHit is one doc found, with its score (higher is better).
type SearchHit struct {
	store.Doc
	Score float64 `json:"score"`
}

// SearchResult is a search's answer.
type SearchResult struct {
	Docs []SearchHit `json:"docs"`
	// Truncated is true when the owner has more docs than one search reads (MaxSearchDocs): only the
	// oldest were searched.
	Truncated bool `json:"truncated"`
}

// SearchDocs is a keyword search of an owner's docs: the query's words are scored against each
// doc's title and content with BM25 (k1 1.2, b 0.75), case- and accent-insensitively on letters and
// digits; docs that match no word are left out; metadata_filter keeps docs whose metadata has each
// given key with an equal value. It is not Julep's embedding search, and says so.
func (s *Service) SearchDocs(ctx context.Context, dev string, o store.Owner, body []byte) (*SearchResult, error) {
	in, err := decodeInput[SearchInput](body)
	if err != nil {
		return nil, err
	}
	docs, truncated, err := s.allDocs(ctx, dev, o)
	if err != nil {
		return nil, err
	}
	return &SearchResult{Docs: rank(docs, in), Truncated: truncated}, nil
}

func (s *Service) allDocs(ctx context.Context, dev string, o store.Owner) ([]store.Doc, bool, error) {
	var out []store.Doc
	p := store.Page{Limit: store.MaxLimit}
	for {
		l, err := s.Store.ListDocs(ctx, dev, o, p)
		if err != nil {
			return nil, false, err
		}
		out = append(out, l.Items...)
		if l.NextCursor == nil {
			return out, false, nil
		}
		if len(out) >= MaxSearchDocs {
			return out[:MaxSearchDocs], true, nil
		}
		p.Cursor = *l.NextCursor
	}
}

const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

func rank(docs []store.Doc, in *SearchInput) []SearchHit {
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
		if !matchesFilter(d.Metadata, in.MetadataFilter) {
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
	hits := []SearchHit{}
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
			hits = append(hits, SearchHit{Doc: dt.doc, Score: math.Round(score*1e6) / 1e6})
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

func matchesFilter(meta, filter map[string]any) bool {
	for k, v := range filter {
		mv, ok := meta[k]
		if !ok || !jsonv.Equal(mv, v) {
			return false
		}
	}
	return true
}
