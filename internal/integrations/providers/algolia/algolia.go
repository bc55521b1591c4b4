// Package algolia is the algolia integration.
//
// It searches one index through Algolia's Search API (POST /1/indexes/*/queries, the multi-query
// endpoint the Python client's search() calls), with the application id and key in the X-Algolia-*
// headers. The host is https://<APP_ID>-dsn.algolia.net unless SINEW_ALGOLIA_BASE_URL says
// otherwise.
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/algolia.py
package algolia

import (
	"context"
	"strings"

	"sinew/internal/integrations"
)

// Setup of the algolia provider.
type Setup struct {
	ApplicationID string `json:"algolia_application_id" jsonschema:"pattern=^[A-Za-z0-9]+$" jsonschema_description:"Algolia application id." sinew:"endpoint"`
	APIKey        string `json:"algolia_api_key" jsonschema:"minLength=1" jsonschema_description:"Algolia API key with the search ACL." sinew:"secret"`
}

// Arguments of search.
type Arguments struct {
	IndexName            string   `json:"index_name" jsonschema:"minLength=1" jsonschema_description:"The index to search."`
	Query                string   `json:"query" jsonschema_description:"The search query."`
	AttributesToRetrieve []string `json:"attributes_to_retrieve,omitempty" jsonschema_description:"Attributes to return in each hit (default: all)."`
	HitsPerPage          int      `json:"hits_per_page,omitempty" jsonschema:"minimum=1,maximum=1000,default=10" jsonschema_description:"How many hits to return."`
}

// Metadata of a search.
type Metadata struct {
	Query            string `json:"query"`
	NbHits           int64  `json:"nbHits"`
	Page             int64  `json:"page"`
	NbPages          int64  `json:"nbPages"`
	ProcessingTimeMS int64  `json:"processingTimeMS"`
}

// Output of search.
type Output struct {
	Hits     []map[string]any `json:"hits"`
	Metadata Metadata         `json:"metadata"`
}

type query struct {
	IndexName            string   `json:"indexName"`
	Query                string   `json:"query"`
	HitsPerPage          int      `json:"hitsPerPage"`
	AttributesToRetrieve []string `json:"attributesToRetrieve,omitempty"`
}

type answer struct {
	Results []struct {
		Hits             []map[string]any `json:"hits"`
		Query            string           `json:"query"`
		NbHits           int64            `json:"nbHits"`
		Page             int64            `json:"page"`
		NbPages          int64            `json:"nbPages"`
		ProcessingTimeMS int64            `json:"processingTimeMS"`
	} `json:"results"`
}

func search(ctx context.Context, env integrations.Env, s Setup, a Arguments) (Output, error) {
	base := env.BaseURL
	if base == "" {
		base = "https://" + strings.ToLower(s.ApplicationID) + "-dsn.algolia.net"
	}
	var ans answer
	err := env.DoJSON(ctx, integrations.Request{
		Method: "POST",
		URL:    base + "/1/indexes/*/queries",
		Header: map[string][]string{"X-Algolia-Application-Id": {s.ApplicationID}, "X-Algolia-API-Key": {s.APIKey}},
		JSON: map[string]any{"requests": []query{{
			IndexName: a.IndexName, Query: a.Query, HitsPerPage: a.HitsPerPage, AttributesToRetrieve: a.AttributesToRetrieve,
		}}},
	}, &ans)
	if err != nil {
		return Output{}, err
	}
	out := Output{Hits: []map[string]any{}, Metadata: Metadata{Query: a.Query}}
	if len(ans.Results) > 0 {
		r := ans.Results[0]
		if r.Hits != nil {
			out.Hits = r.Hits
		}
		out.Metadata = Metadata{Query: r.Query, NbHits: r.NbHits, Page: r.Page, NbPages: r.NbPages, ProcessingTimeMS: r.ProcessingTimeMS}
	}
	return out, nil
}

// Provider is the algolia provider.
var Provider = &integrations.Provider{
	Name:         "algolia",
	FriendlyName: "Algolia Search",
	URL:          "https://www.algolia.com/",
	Docs:         "https://www.algolia.com/doc/rest-api/search/",
	Icon:         "https://www.algolia.com/favicon.ico",
	// No fixed default: the host is derived from the application id (see search).
	Methods: []*integrations.Method{
		integrations.NewMethod("search", "Search for content in an Algolia index", search),
	},
}
