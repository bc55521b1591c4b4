// Package arxiv is the arxiv integration.
//
// It searches arXiv through its Atom API (GET /api/query on export.arxiv.org) and returns the
// results as Julep's arxiv provider does, with the option of downloading each result's PDF. The
// Atom feed is parsed here; results are paged 100 at a time like the arxiv PyPI client. Unlike
// Julep, id_list is passed to the API (Julep's model has it and its code drops it).
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/arxiv.py
package arxiv

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"regexp"
	"strconv"
	"strings"
	"time"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// pageSize is the arxiv client's page size.
const pageSize = 100

// maxPDF bounds one downloaded PDF.
const maxPDF = 50 << 20

// Arguments of search.
type Arguments struct {
	Query       string   `json:"query" jsonschema:"minLength=1" jsonschema_description:"The search query (arXiv query syntax, e.g. ti:transformer AND cat:cs.CL)."`
	IDList      []string `json:"id_list,omitempty" jsonschema_description:"arXiv ids to restrict the search to."`
	MaxResults  int      `json:"max_results,omitempty" jsonschema:"minimum=1,maximum=300000,default=5" jsonschema_description:"How many results to return."`
	DownloadPDF bool     `json:"download_pdf,omitempty" jsonschema:"default=false" jsonschema_description:"Also download each result's PDF (base64)."`
	SortBy      string   `json:"sort_by,omitempty" jsonschema:"enum=relevance,enum=lastUpdatedDate,enum=submittedDate,default=relevance"`
	SortOrder   string   `json:"sort_order,omitempty" jsonschema:"enum=ascending,enum=descending,default=descending"`
}

// PDF is a downloaded PDF.
type PDF struct {
	Base64   string `json:"base64"`
	MimeType string `json:"mime_type"`
	Title    string `json:"title"`
}

// Result is one paper.
type Result struct {
	EntryID         string   `json:"entry_id"`
	Title           string   `json:"title"`
	Updated         string   `json:"updated"`
	Published       string   `json:"published"`
	Authors         []string `json:"authors"`
	Summary         string   `json:"summary"`
	Comment         *string  `json:"comment" jsonschema:"nullable"`
	JournalRef      *string  `json:"journal_ref" jsonschema:"nullable"`
	DOI             *string  `json:"doi" jsonschema:"nullable"`
	PrimaryCategory *string  `json:"primary_category" jsonschema:"nullable"`
	Categories      []string `json:"categories"`
	Links           []string `json:"links"`
	PDFURL          *string  `json:"pdf_url" jsonschema:"nullable"`
	PDFDownloaded   *PDF     `json:"pdf_downloaded" jsonschema:"nullable"`
}

// Output of search.
type Output struct {
	Result []Result `json:"result"`
}

type feed struct {
	TotalResults int     `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
	Entries      []entry `xml:"http://www.w3.org/2005/Atom entry"`
}

type entry struct {
	ID        string `xml:"http://www.w3.org/2005/Atom id"`
	Updated   string `xml:"http://www.w3.org/2005/Atom updated"`
	Published string `xml:"http://www.w3.org/2005/Atom published"`
	Title     string `xml:"http://www.w3.org/2005/Atom title"`
	Summary   string `xml:"http://www.w3.org/2005/Atom summary"`
	Authors   []struct {
		Name string `xml:"http://www.w3.org/2005/Atom name"`
	} `xml:"http://www.w3.org/2005/Atom author"`
	Links []struct {
		Href  string `xml:"href,attr"`
		Title string `xml:"title,attr"`
	} `xml:"http://www.w3.org/2005/Atom link"`
	Categories []struct {
		Term string `xml:"term,attr"`
	} `xml:"http://www.w3.org/2005/Atom category"`
	Primary *struct {
		Term string `xml:"term,attr"`
	} `xml:"http://arxiv.org/schemas/atom primary_category"`
	Comment    *string `xml:"http://arxiv.org/schemas/atom comment"`
	JournalRef *string `xml:"http://arxiv.org/schemas/atom journal_ref"`
	DOI        *string `xml:"http://arxiv.org/schemas/atom doi"`
}

var spaces = regexp.MustCompile(`\s+`)

func search(ctx context.Context, env integrations.Env, _ integrations.NoSetup, a Arguments) (Output, error) {
	out := Output{Result: []Result{}}
	for start := 0; len(out.Result) < a.MaxResults; start += pageSize {
		n := min(pageSize, a.MaxResults-len(out.Result))
		resp, err := env.Do(ctx, integrations.Request{
			URL:    env.BaseURL + "/api/query",
			Header: map[string][]string{"Accept": {"application/atom+xml"}},
			Query: map[string][]string{
				"search_query": {a.Query}, "id_list": {strings.Join(a.IDList, ",")},
				"sortBy": {a.SortBy}, "sortOrder": {a.SortOrder},
				"start": {strconv.Itoa(start)}, "max_results": {strconv.Itoa(n)},
			},
		})
		if err != nil {
			return Output{}, err
		}
		var f feed
		if err := xml.Unmarshal(resp.Body, &f); err != nil {
			return Output{}, fault.Wrap(fault.Provider, err, "arXiv answered with a malformed Atom feed")
		}
		for _, e := range f.Entries {
			r, err := convert(e)
			if err != nil {
				return Output{}, err
			}
			if a.DownloadPDF && r.PDFURL != nil {
				pdf, err := env.Do(ctx, integrations.Request{URL: *r.PDFURL, Header: map[string][]string{"Accept": {"application/pdf"}}, MaxBytes: maxPDF})
				if err != nil {
					return Output{}, err
				}
				r.PDFDownloaded = &PDF{Base64: base64.StdEncoding.EncodeToString(pdf.Body), MimeType: "application/pdf", Title: r.Title}
			}
			out.Result = append(out.Result, r)
			if len(out.Result) == a.MaxResults {
				break
			}
		}
		if len(f.Entries) < n || start+len(f.Entries) >= f.TotalResults {
			break
		}
	}
	return out, nil
}

// convert builds a result as the arxiv client and Julep do: whitespace in titles collapsed, newlines
// dropped from the summary, dates as "YYYY-MM-DD HH:MM:SS".
func convert(e entry) (Result, error) {
	r := Result{
		EntryID:    strings.TrimSpace(e.ID),
		Title:      strings.TrimSpace(spaces.ReplaceAllString(e.Title, " ")),
		Summary:    strings.ReplaceAll(strings.TrimSpace(e.Summary), "\n", ""),
		Authors:    []string{},
		Categories: []string{},
		Links:      []string{},
		Comment:    e.Comment, JournalRef: e.JournalRef, DOI: e.DOI,
	}
	var err error
	if r.Published, err = date(e.Published); err != nil {
		return Result{}, err
	}
	if r.Updated, err = date(e.Updated); err != nil {
		return Result{}, err
	}
	for _, a := range e.Authors {
		r.Authors = append(r.Authors, strings.TrimSpace(a.Name))
	}
	for _, c := range e.Categories {
		r.Categories = append(r.Categories, c.Term)
	}
	for _, l := range e.Links {
		r.Links = append(r.Links, l.Href)
		if l.Title == "pdf" && r.PDFURL == nil {
			href := l.Href
			r.PDFURL = &href
		}
	}
	if e.Primary != nil {
		term := e.Primary.Term
		r.PrimaryCategory = &term
	}
	return r, nil
}

func date(s string) (string, error) {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return "", fault.Wrap(fault.Provider, err, "arXiv sent a date that is not RFC 3339: %q", s)
	}
	return t.UTC().Format(time.DateTime), nil
}

// Provider is the arxiv provider.
var Provider = &integrations.Provider{
	Name:         "arxiv",
	FriendlyName: "Arxiv Search",
	URL:          "https://arxiv.org/",
	Docs:         "https://info.arxiv.org/help/api/index.html",
	Icon:         "https://arxiv.com/favicon.ico",
	BaseURL:      "https://export.arxiv.org",
	Methods: []*integrations.Method{
		integrations.NewMethod("search", "Search in Arxiv", search),
	},
}
