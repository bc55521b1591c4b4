// Package brave is the brave integration: web search through the Brave Search API
// (GET /res/v1/web/search, key in X-Subscription-Token), three results, each {title, link, snippet}
// as LangChain's BraveSearchWrapper builds them. Julep's typespec says the output
// is `result: string`; sinew keeps the list the service returns: where Julep's schema and its service disagree,
// the service's behaviour is what callers already get.
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/brave.py
package brave

import (
	"context"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// resultCount is Julep's search_kwargs {"count": 3}.
const resultCount = "3"

// Setup of the brave provider.
type Setup struct {
	APIKey string `json:"brave_api_key" jsonschema:"minLength=1" jsonschema_description:"Brave Search API subscription token." sinew:"secret"`
}

// Arguments of search.
type Arguments struct {
	Query string `json:"query" jsonschema:"minLength=1" jsonschema_description:"The search query."`
}

// Result is one web result.
type Result struct {
	Title   string `json:"title"`
	Link    string `json:"link"`
	Snippet string `json:"snippet"`
}

// Output of search.
type Output struct {
	Result []Result `json:"result"`
}

type webSearch struct {
	Web *struct {
		Results []struct {
			Title         string   `json:"title"`
			URL           string   `json:"url"`
			Description   string   `json:"description"`
			ExtraSnippets []string `json:"extra_snippets"`
		} `json:"results"`
	} `json:"web"`
}

func search(ctx context.Context, env integrations.Env, s Setup, a Arguments) (Output, error) {
	var ws webSearch
	err := env.DoJSON(ctx, integrations.Request{
		URL:    env.BaseURL + "/res/v1/web/search",
		Query:  map[string][]string{"q": {a.Query}, "count": {resultCount}},
		Header: map[string][]string{"X-Subscription-Token": {s.APIKey}},
	}, &ws)
	if err != nil {
		// Brave answers a bad token with 422 SUBSCRIPTION_TOKEN_INVALID rather than 401.
		if integrations.StatusOf(err) == 422 && strings.Contains(fault.Message(err), "SUBSCRIPTION_TOKEN_INVALID") {
			return Output{}, fault.Wrap(fault.Provider, err, "Brave Search refused the subscription token in the setup (brave_api_key); check it")
		}
		return Output{}, err
	}
	out := Output{Result: []Result{}}
	if ws.Web == nil {
		return out, nil
	}
	for _, r := range ws.Web.Results {
		parts := make([]string, 0, 1+len(r.ExtraSnippets))
		for _, p := range append([]string{r.Description}, r.ExtraSnippets...) {
			if p != "" {
				parts = append(parts, p)
			}
		}
		out.Result = append(out.Result, Result{Title: r.Title, Link: r.URL, Snippet: strings.Join(parts, " ")})
	}
	return out, nil
}

// Provider is the brave provider.
var Provider = &integrations.Provider{
	Name:         "brave",
	FriendlyName: "Brave Search",
	URL:          "https://brave.com/search/api/",
	Docs:         "https://api-dashboard.search.brave.com/app/documentation/web-search/get-started",
	Icon:         "https://brave.com/static-assets/images/brave-logo-sans-text.svg",
	BaseURL:      "https://api.search.brave.com",
	Methods: []*integrations.Method{
		integrations.NewMethod("search", "Search with Brave", search),
	},
}
