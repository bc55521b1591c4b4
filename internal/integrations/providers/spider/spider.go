// Package spider is the spider integration: crawl, list links of, screenshot or search a site through
// the spider.cloud API (POST /v1/<crawl|links|screenshot|search>, Bearer key), as Julep does with the
// spider-client SDK. The request body is {"url": url, ...params} (for search
// {"search": url, ...params}, as Julep passes its url argument as the query), and Content-Type is the
// content_type argument, which picks the answer's format. A JSON answer (a list of pages, or one
// object) becomes the result list; JSON Lines are parsed line by line; CSV or XML come back as one
// result whose content is the text (Julep fails on them). Julep's typespec card lists only crawl;
// sinew follows the service's four methods.
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/spider.py
package spider

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// Setup of the spider provider.
type Setup struct {
	APIKey string `json:"spider_api_key" jsonschema:"minLength=1" jsonschema_description:"spider.cloud API key." sinew:"secret"`
}

// Arguments of every spider method.
type Arguments struct {
	URL         string         `json:"url" jsonschema:"format=uri" jsonschema_description:"The URL to crawl (for search: the query)."`
	ContentType string         `json:"content_type,omitempty" jsonschema:"enum=application/json,enum=text/csv,enum=application/xml,enum=application/jsonl,default=application/json" jsonschema_description:"The format of the answer."`
	Params      map[string]any `json:"params,omitempty" jsonschema_description:"Other spider.cloud request parameters (limit, depth, return_format, ...)."`
}

// Page is one result.
type Page struct {
	URL     *string        `json:"url,omitempty"`
	Content any            `json:"content,omitempty" jsonschema:"oneof_type=string;array"`
	Error   *string        `json:"error,omitempty"`
	Status  *int64         `json:"status,omitempty"`
	Costs   map[string]any `json:"costs,omitempty"`
}

// Output of every spider method.
type Output struct {
	Result []Page `json:"result"`
}

func run(endpoint, urlKey string) func(context.Context, integrations.Env, Setup, Arguments) (Output, error) {
	return func(ctx context.Context, env integrations.Env, s Setup, a Arguments) (Output, error) {
		body := map[string]any{}
		for k, v := range a.Params {
			body[k] = v
		}
		body[urlKey] = a.URL
		raw, err := json.Marshal(body)
		if err != nil {
			return Output{}, fault.Wrap(fault.InvalidInput, err, "arguments.params is not JSON")
		}
		resp, err := env.Do(ctx, integrations.Request{
			Method:      "POST",
			URL:         env.BaseURL + "/v1/" + endpoint,
			Header:      map[string][]string{"Authorization": {"Bearer " + s.APIKey}, "Accept": {a.ContentType + ", application/json;q=0.5"}},
			Body:        raw,
			ContentType: a.ContentType,
		})
		if err != nil {
			return Output{}, err
		}
		pages, err := parse(a.ContentType, a.URL, resp.Body)
		if err != nil {
			return Output{}, err
		}
		if len(pages) == 0 {
			return Output{}, fault.New(fault.Provider, "Spider found no results for %s", endpoint)
		}
		return Output{Result: pages}, nil
	}
}

func parse(contentType, url string, body []byte) ([]Page, error) {
	trimmed := bytes.TrimSpace(body)
	switch {
	case contentType == "application/jsonl":
		var pages []Page
		for _, line := range bytes.Split(trimmed, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) == 0 {
				continue
			}
			var p Page
			if err := json.Unmarshal(line, &p); err != nil {
				return nil, fault.Wrap(fault.Provider, err, "Spider answered with malformed JSON Lines")
			}
			pages = append(pages, p)
		}
		return pages, nil
	case len(trimmed) > 0 && trimmed[0] == '[':
		var pages []Page
		if err := json.Unmarshal(trimmed, &pages); err != nil {
			return nil, fault.Wrap(fault.Provider, err, "Spider answered with malformed JSON")
		}
		return pages, nil
	case len(trimmed) > 0 && trimmed[0] == '{':
		var p Page
		if err := json.Unmarshal(trimmed, &p); err != nil {
			return nil, fault.Wrap(fault.Provider, err, "Spider answered with malformed JSON")
		}
		return []Page{p}, nil
	case contentType == "application/json":
		if len(trimmed) == 0 {
			return nil, nil
		}
		return nil, fault.New(fault.Provider, "Spider answered with malformed JSON")
	default:
		if len(trimmed) == 0 {
			return nil, nil
		}
		u := url
		return []Page{{URL: &u, Content: strings.TrimSpace(string(body))}}, nil
	}
}

// Provider is the spider provider.
var Provider = &integrations.Provider{
	Name:         "spider",
	FriendlyName: "Spider",
	URL:          "https://spider.cloud/",
	Docs:         "https://spider.cloud/docs/api",
	Icon:         "https://spider.cloud/favicon.ico",
	BaseURL:      "https://api.spider.cloud",
	Methods: []*integrations.Method{
		integrations.NewMethod("crawl", "Crawl a website and extract data", run("crawl", "url")),
		integrations.NewMethod("links", "Extract all links from the webpage", run("links", "url")),
		integrations.NewMethod("screenshot", "Take a screenshot of the webpage", run("screenshot", "url")),
		integrations.NewMethod("search", "Search content within the webpage", run("search", "search")),
	},
}
