package wikipedia_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/wikipedia"
)

// fakeMediaWiki answers the two Action API queries the provider makes, as MediaWiki does with
// formatversion=2: pages as an array in no particular order, each with its search "index".
func fakeMediaWiki(t *testing.T, f *integrationstest.Faults) http.Handler {
	long := strings.Repeat("é", 5000)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.Serve(w) {
			return
		}
		q := r.URL.Query()
		if r.URL.Path != "/w/api.php" || r.Method != http.MethodGet || q.Get("action") != "query" || q.Get("format") != "json" || q.Get("formatversion") != "2" {
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
			http.Error(w, "bad request", 400)
			return
		}
		if r.Header.Get("User-Agent") == "" {
			t.Error("no User-Agent (Wikimedia requires one)")
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case q.Get("generator") == "search":
			if q.Get("prop") != "extracts|info" || q.Get("exintro") != "1" || q.Get("explaintext") != "1" || q.Get("inprop") != "url" {
				t.Errorf("search query %s", r.URL.RawQuery)
			}
			switch q.Get("gsrsearch") {
			case "lagging":
				_, _ = w.Write([]byte(`{"error":{"code":"maxlag","info":"Waiting for 10.0.0.1: 7 seconds lagged."}}`))
				return
			case "bad":
				_, _ = w.Write([]byte(`{"error":{"code":"badvalue","info":"Unrecognized value for parameter \"gsrwhat\"."}}`))
				return
			case "nothing":
				_, _ = w.Write([]byte(`{"batchcomplete":true}`))
				return
			}
			pages := []map[string]any{
				{"pageid": 2, "ns": 0, "title": "Go (game)", "index": 2, "extract": "Go is a board game.", "fullurl": "https://en.wikipedia.org/wiki/Go_(game)"},
				{"pageid": 1, "ns": 0, "title": "Go (programming language)", "index": 1, "extract": "Go is a language.", "fullurl": "https://en.wikipedia.org/wiki/Go_(programming_language)"},
				{"pageid": 3, "ns": 0, "title": "Go", "index": 3, "extract": "Go may refer to", "fullurl": "https://en.wikipedia.org/wiki/Go"},
			}
			n, err := strconv.Atoi(q.Get("gsrlimit"))
			if err != nil {
				t.Errorf("gsrlimit %q", q.Get("gsrlimit"))
			}
			if n < len(pages) {
				// Keep the first n by index, sent in reverse order.
				keep := []map[string]any{}
				for _, p := range pages {
					if p["index"].(int) <= n {
						keep = append(keep, p)
					}
				}
				pages = keep
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"batchcomplete": true, "query": map[string]any{"pages": pages}})
		case q.Get("pageids") != "":
			if q.Get("prop") != "extracts" || q.Get("explaintext") != "1" || q.Get("exintro") != "" {
				t.Errorf("content query %s", r.URL.RawQuery)
			}
			text := "Full text of page " + q.Get("pageids")
			if q.Get("pageids") == "2" {
				text = long
			}
			id, _ := json.Number(q.Get("pageids")).Int64()
			_ = json.NewEncoder(w).Encode(map[string]any{"batchcomplete": true, "query": map[string]any{"pages": []any{map[string]any{"pageid": id, "ns": 0, "title": "x", "extract": text}}}})
		default:
			t.Errorf("unexpected query %s", r.URL.RawQuery)
			http.Error(w, "bad request", 400)
		}
	})
}

func TestSearch(t *testing.T) {
	f := &integrationstest.Faults{}
	r, _ := integrationstest.Start(t, wikipedia.Provider, fakeMediaWiki(t, f), nil)
	tests := []struct {
		name     string
		args     map[string]any
		titles   []string
		kind     fault.Kind
		msg      string
		field    string
		checkLen bool
	}{
		{name: "default two docs in search order", args: map[string]any{"query": "go"}, titles: []string{"Go (programming language)", "Go (game)"}, checkLen: true},
		{name: "load_max_docs", args: map[string]any{"query": "go", "load_max_docs": int64(1)}, titles: []string{"Go (programming language)"}},
		{name: "no results", args: map[string]any{"query": "nothing"}, titles: []string{}},
		{name: "maxlag is transient", args: map[string]any{"query": "lagging"}, kind: fault.Transient, msg: "maxlag"},
		{name: "api error is a refusal", args: map[string]any{"query": "bad"}, kind: fault.Provider, msg: "badvalue"},
		{name: "missing query", args: map[string]any{}, kind: fault.InvalidInput, field: "arguments.query"},
		{name: "too many docs", args: map[string]any{"query": "go", "load_max_docs": int64(11)}, kind: fault.InvalidInput, field: "arguments.load_max_docs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), "wikipedia", "", nil, tc.args)
			if tc.kind != "" {
				integrationstest.CheckErr(t, err, tc.kind, tc.msg, nil)
				if tc.field != "" && fault.FieldOf(err) != tc.field {
					t.Errorf("field %q, want %q", fault.FieldOf(err), tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			docs := got.(map[string]any)["documents"].([]any)
			if len(docs) != len(tc.titles) {
				t.Fatalf("%d docs, want %d: %v", len(docs), len(tc.titles), got)
			}
			for i, d := range docs {
				doc := d.(map[string]any)
				md := doc["metadata"].(map[string]any)
				if md["title"] != tc.titles[i] || doc["type"] != "Document" {
					t.Errorf("doc %d: %v", i, doc)
				}
				if !strings.HasPrefix(md["source"].(string), "https://en.wikipedia.org/wiki/") || md["summary"] == "" {
					t.Errorf("doc %d metadata %v", i, md)
				}
			}
			if tc.checkLen {
				first := docs[0].(map[string]any)
				if first["page_content"] != "Full text of page 1" {
					t.Errorf("content %v", first["page_content"])
				}
				second := docs[1].(map[string]any)["page_content"].(string)
				if n := len([]rune(second)); n != 4000 {
					t.Errorf("content cut at %d runes, want 4000", n)
				}
			}
		})
	}
	integrationstest.RunFaults(t, r, f, "wikipedia", "", nil, map[string]any{"query": "go"},
		integrationstest.StandardFaults("Too many requests", "<html>Our servers are currently under maintenance</html>"))
}
