package arxiv_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/arxiv"
)

const feedHead = `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <link href="http://arxiv.org/api/query" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query</title>
  <id>http://arxiv.org/api/x</id>
  <updated>2024-01-01T00:00:00-05:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">%d</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">%d</opensearch:startIndex>
  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">%d</opensearch:itemsPerPage>
`

func entryXML(base string, i int, full bool) string {
	extra := ""
	if full {
		extra = `<arxiv:comment xmlns:arxiv="http://arxiv.org/schemas/atom">15 pages, 3 figures</arxiv:comment>
    <arxiv:journal_ref xmlns:arxiv="http://arxiv.org/schemas/atom">NeurIPS 2017</arxiv:journal_ref>
    <arxiv:doi xmlns:arxiv="http://arxiv.org/schemas/atom">10.1000/xyz` + strconv.Itoa(i) + `</arxiv:doi>`
	}
	return fmt.Sprintf(`  <entry>
    <id>http://arxiv.org/abs/1706.%05dv7</id>
    <updated>2023-08-02T00:41:18Z</updated>
    <published>2017-06-12T17:57:34Z</published>
    <title>Attention Is
      All You Need %d</title>
    <summary>  The dominant sequence transduction models
are based on recurrent networks.
</summary>
    <author><name>Ashish Vaswani</name></author>
    <author><name>Noam Shazeer</name></author>
    %s
    <link href="http://arxiv.org/abs/1706.%05dv7" rel="alternate" type="text/html"/>
    <link title="pdf" href="%s/pdf/1706.%05dv7" rel="related" type="application/pdf"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
`, i, i, extra, i, base, i)
}

type fakeArxiv struct {
	t        *testing.T
	base     string
	faults   integrationstest.Faults
	requests atomic.Int64
}

// ServeHTTP speaks the arXiv API: GET /api/query with search_query, id_list, sortBy, sortOrder,
// start and max_results; an Atom feed back; a bad query is HTTP 400 with an error entry.
func (f *fakeArxiv) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.faults.Serve(w) {
		return
	}
	if strings.HasPrefix(r.URL.Path, "/pdf/") {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write([]byte("%PDF-1.4 " + r.URL.Path))
		return
	}
	f.requests.Add(1)
	q := r.URL.Query()
	if r.URL.Path != "/api/query" || q.Get("sortBy") == "" || q.Get("sortOrder") == "" {
		f.t.Errorf("unexpected request %s", r.URL)
	}
	start, _ := strconv.Atoi(q.Get("start"))
	max, _ := strconv.Atoi(q.Get("max_results"))
	if max > 100 {
		f.t.Errorf("page of %d", max)
	}
	w.Header().Set("Content-Type", "application/atom+xml; charset=utf-8")
	total := 0
	switch q.Get("search_query") {
	case "bad(":
		w.WriteHeader(400)
		fmt.Fprintf(w, feedHead, 1, 0, 1)
		_, _ = w.Write([]byte(`<entry><id>http://arxiv.org/api/errors#incorrect_id_format_for_1234</id><title>Error</title><summary>malformed query</summary></entry></feed>`))
		return
	case "broken":
		_, _ = w.Write([]byte(`<feed><entry>`))
		return
	case "many":
		total = 250
	case "all:attention":
		total = 3
		want := map[string]string{"sortBy": "submittedDate", "sortOrder": "ascending", "id_list": "1706.03762"}
		for k, v := range want {
			if q.Get(k) != v {
				f.t.Errorf("%s = %q, want %q", k, q.Get(k), v)
			}
		}
	}
	n := max
	if start+n > total {
		n = total - start
	}
	fmt.Fprintf(w, feedHead, total, start, n)
	for i := start; i < start+n; i++ {
		_, _ = w.Write([]byte(entryXML(f.base, i, i == 0)))
	}
	_, _ = w.Write([]byte("</feed>"))
}

func TestSearch(t *testing.T) {
	fake := &fakeArxiv{t: t}
	r, srv := integrationstest.Start(t, arxiv.Provider, fake, nil)
	fake.base = srv.URL
	str := func(s string) any { return s }

	t.Run("first result in full", func(t *testing.T) {
		got, err := r.Execute(context.Background(), "arxiv", "", nil, map[string]any{"query": "all:attention", "max_results": int64(2), "sort_by": "submittedDate", "sort_order": "ascending", "id_list": []any{"1706.03762"}})
		if err != nil {
			t.Fatal(err)
		}
		res := got.(map[string]any)["result"].([]any)
		if len(res) != 2 {
			t.Fatalf("%d results", len(res))
		}
		want := map[string]any{
			"entry_id": "http://arxiv.org/abs/1706.00000v7", "title": "Attention Is All You Need 0",
			"updated": "2023-08-02 00:41:18", "published": "2017-06-12 17:57:34",
			"authors": []any{"Ashish Vaswani", "Noam Shazeer"},
			"summary": "The dominant sequence transduction modelsare based on recurrent networks.",
			"comment": str("15 pages, 3 figures"), "journal_ref": str("NeurIPS 2017"), "doi": str("10.1000/xyz0"),
			"primary_category": "cs.CL", "categories": []any{"cs.CL", "cs.LG"},
			"links":          []any{"http://arxiv.org/abs/1706.00000v7", srv.URL + "/pdf/1706.00000v7"},
			"pdf_url":        srv.URL + "/pdf/1706.00000v7",
			"pdf_downloaded": nil,
		}
		if !reflect.DeepEqual(res[0], want) {
			t.Fatalf("got  %#v\nwant %#v", res[0], want)
		}
		second := res[1].(map[string]any)
		if second["comment"] != nil || second["doi"] != nil || second["journal_ref"] != nil {
			t.Errorf("absent fields not null: %v", second)
		}
	})

	tests := []struct {
		name     string
		args     map[string]any
		count    int
		requests int64
		kind     fault.Kind
		msg      string
		field    string
	}{
		{name: "default five", args: map[string]any{"query": "many"}, count: 5, requests: 1},
		{name: "pages of 100", args: map[string]any{"query": "many", "max_results": int64(150)}, count: 150, requests: 2},
		{name: "stops at the total", args: map[string]any{"query": "many", "max_results": int64(1000)}, count: 250, requests: 3},
		{name: "no results", args: map[string]any{"query": "nothing"}, count: 0, requests: 1},
		{name: "bad query", args: map[string]any{"query": "bad("}, kind: fault.Provider, msg: "HTTP 400"},
		{name: "malformed feed", args: map[string]any{"query": "broken"}, kind: fault.Provider, msg: "malformed Atom feed"},
		{name: "bad sort", args: map[string]any{"query": "x", "sort_by": "date"}, kind: fault.InvalidInput, field: "arguments.sort_by"},
		{name: "zero results asked", args: map[string]any{"query": "x", "max_results": int64(0)}, kind: fault.InvalidInput, field: "arguments.max_results"},
		{name: "setup refused", args: map[string]any{"query": "x"}, kind: fault.InvalidInput, field: "setup"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake.requests.Store(0)
			var setup map[string]any
			if tc.name == "setup refused" {
				setup = map[string]any{"key": "v"}
			}
			got, err := r.Execute(context.Background(), "arxiv", "search", setup, tc.args)
			if tc.kind != "" {
				integrationstest.CheckErr(t, err, tc.kind, tc.msg, nil)
				if fault.FieldOf(err) != tc.field {
					t.Errorf("field %q, want %q", fault.FieldOf(err), tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res := got.(map[string]any)["result"].([]any)
			if len(res) != tc.count || fake.requests.Load() != tc.requests {
				t.Fatalf("%d results in %d requests, want %d in %d", len(res), fake.requests.Load(), tc.count, tc.requests)
			}
			for i, x := range res {
				if id := x.(map[string]any)["entry_id"]; id != fmt.Sprintf("http://arxiv.org/abs/1706.%05dv7", i) {
					t.Fatalf("result %d is %v", i, id)
				}
			}
		})
	}

	t.Run("download_pdf", func(t *testing.T) {
		got, err := r.Execute(context.Background(), "arxiv", "", nil, map[string]any{"query": "many", "max_results": int64(2), "download_pdf": true})
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range got.(map[string]any)["result"].([]any) {
			pdf := x.(map[string]any)["pdf_downloaded"].(map[string]any)
			b, _ := base64.StdEncoding.DecodeString(pdf["base64"].(string))
			if string(b) != fmt.Sprintf("%%PDF-1.4 /pdf/1706.%05dv7", i) || pdf["mime_type"] != "application/pdf" || pdf["title"] != fmt.Sprintf("Attention Is All You Need %d", i) {
				t.Errorf("pdf %d: %v (%q)", i, pdf, b)
			}
		}
	})

	integrationstest.RunFaults(t, r, &fake.faults, "arxiv", "", nil, map[string]any{"query": "many"},
		integrationstest.StandardFaults("Rate exceeded.", "<html><body>Service Unavailable</body></html>"))
}
