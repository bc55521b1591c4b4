// Package wikipedia is the wikipedia integration: search Wikipedia through the MediaWiki Action API
// and return the best pages as LangChain-style documents, as Julep's WikipediaLoader does.
// One request finds the pages with their summaries and URLs (generator=search with
// TextExtracts' intro), then one request per page fetches its plain-text content, cut at 4000
// characters like LangChain's loader.
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/wikipedia.py
package wikipedia

import (
	"context"
	"sort"
	"strconv"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// maxContent is LangChain's doc_content_chars_max.
const maxContent = 4000

// Arguments of search.
type Arguments struct {
	Query       string `json:"query" jsonschema:"minLength=1" jsonschema_description:"The search query."`
	LoadMaxDocs int    `json:"load_max_docs,omitempty" jsonschema:"minimum=1,maximum=10,default=2" jsonschema_description:"How many pages to return (1 to 10)."`
}

// Metadata of a document.
type Metadata struct {
	Title   string `json:"title"`
	Summary string `json:"summary"`
	Source  string `json:"source"`
}

// Document is a LangChain Document.
type Document struct {
	PageContent string   `json:"page_content"`
	Metadata    Metadata `json:"metadata"`
	Type        string   `json:"type" jsonschema:"enum=Document"`
}

// Output of search.
type Output struct {
	Documents []Document `json:"documents"`
}

type page struct {
	PageID   int64  `json:"pageid"`
	Title    string `json:"title"`
	Index    int    `json:"index"`
	Extract  string `json:"extract"`
	FullURL  string `json:"fullurl"`
	Missing  bool   `json:"missing"`
	Invalid  bool   `json:"invalid"`
	Redirect bool   `json:"redirect"`
}

type queryResponse struct {
	Query struct {
		Pages []page `json:"pages"`
	} `json:"query"`
	Error *struct {
		Code string `json:"code"`
		Info string `json:"info"`
	} `json:"error"`
}

func (e Env) api() string { return e.BaseURL + "/w/api.php" }

// Env wraps integrations.Env for the API path.
type Env struct{ integrations.Env }

func search(ctx context.Context, ienv integrations.Env, _ integrations.NoSetup, a Arguments) (Output, error) {
	env := Env{ienv}
	var found queryResponse
	err := env.DoJSON(ctx, integrations.Request{URL: env.api(), Query: map[string][]string{
		"action": {"query"}, "format": {"json"}, "formatversion": {"2"},
		"generator": {"search"}, "gsrsearch": {a.Query}, "gsrlimit": {strconv.Itoa(a.LoadMaxDocs)},
		"prop": {"extracts|info"}, "exintro": {"1"}, "explaintext": {"1"}, "exlimit": {"max"}, "inprop": {"url"},
	}}, &found)
	if err != nil {
		return Output{}, err
	}
	if err := apiError(found); err != nil {
		return Output{}, err
	}
	pages := found.Query.Pages
	sort.SliceStable(pages, func(i, j int) bool { return pages[i].Index < pages[j].Index })
	out := Output{Documents: []Document{}}
	for _, p := range pages {
		if p.Missing || p.Invalid {
			continue
		}
		content, err := env.content(ctx, p.PageID)
		if err != nil {
			return Output{}, err
		}
		if r := []rune(content); len(r) > maxContent {
			content = string(r[:maxContent])
		}
		out.Documents = append(out.Documents, Document{
			PageContent: content,
			Metadata:    Metadata{Title: p.Title, Summary: p.Extract, Source: p.FullURL},
			Type:        "Document",
		})
	}
	return out, nil
}

// content fetches one page's whole plain text (TextExtracts gives whole pages one at a time).
func (e Env) content(ctx context.Context, id int64) (string, error) {
	var r queryResponse
	err := e.DoJSON(ctx, integrations.Request{URL: e.api(), Query: map[string][]string{
		"action": {"query"}, "format": {"json"}, "formatversion": {"2"},
		"prop": {"extracts"}, "explaintext": {"1"}, "pageids": {strconv.FormatInt(id, 10)},
	}}, &r)
	if err != nil {
		return "", err
	}
	if err := apiError(r); err != nil {
		return "", err
	}
	for _, p := range r.Query.Pages {
		if p.PageID == id {
			return p.Extract, nil
		}
	}
	return "", nil
}

// apiError turns a MediaWiki error object (sent with HTTP 200) into a typed error: "maxlag" and
// "ratelimited" are transient, the rest refusals.
func apiError(r queryResponse) error {
	if r.Error == nil {
		return nil
	}
	switch r.Error.Code {
	case "maxlag", "ratelimited", "readonly", "internal_api_error_DBQueryError":
		return fault.New(fault.Transient, "Wikipedia is busy (%s): %s", r.Error.Code, r.Error.Info)
	}
	return fault.New(fault.Provider, "Wikipedia refused the search (%s): %s", r.Error.Code, r.Error.Info)
}

// Provider is the wikipedia provider.
var Provider = &integrations.Provider{
	Name:         "wikipedia",
	FriendlyName: "Wikipedia",
	URL:          "https://www.wikipedia.org/",
	Docs:         "https://www.mediawiki.org/wiki/API:Search",
	Icon:         "https://www.wikipedia.org/static/favicon/wikipedia.ico",
	BaseURL:      "https://en.wikipedia.org",
	Methods: []*integrations.Method{
		integrations.NewMethod("search", "Search for a page on Wikipedia", search),
	},
}
