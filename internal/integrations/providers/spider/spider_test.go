package spider_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/spider"
)

const key = "sk-spider-test-0001"

type request struct {
	path, contentType string
	body              map[string]any
}

// fakeSpider speaks the spider.cloud API: Bearer key, POST /v1/<endpoint> with a JSON body, the
// answer's format chosen by Content-Type, 402 when out of credits.
type fakeSpider struct {
	t      *testing.T
	faults integrationstest.Faults
	mu     sync.Mutex
	last   request
}

func (f *fakeSpider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.faults.Serve(w) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+key {
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"error":"Unauthorized"}`))
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("body %q: %v", raw, err)
	}
	ct := r.Header.Get("Content-Type")
	f.mu.Lock()
	f.last = request{r.URL.Path, ct, body}
	f.mu.Unlock()
	target, _ := body["url"].(string)
	if target == "https://broke.example/" {
		w.WriteHeader(402)
		_, _ = w.Write([]byte(`{"error":"Payment required: not enough credits"}`))
		return
	}
	if target == "https://empty.example/" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
		return
	}
	switch ct {
	case "application/json":
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/links":
			_, _ = w.Write([]byte(`[{"url":"https://example.com/","content":["https://example.com/a","https://example.com/b"],"status":200,"error":null,"costs":{"total_cost":0.0001}}]`))
		case "/v1/search":
			_, _ = w.Write([]byte(`{"content":[{"title":"Result","url":"https://r.example/"}],"status":200}`))
		default:
			_, _ = w.Write([]byte(`[{"url":"https://example.com/","content":"# Example Domain","status":200,"error":null,"costs":{"total_cost":0.0002}},{"url":"https://example.com/x","content":"","status":404,"error":"not found"}]`))
		}
	case "application/jsonl":
		w.Header().Set("Content-Type", "application/jsonl")
		_, _ = w.Write([]byte("{\"url\":\"https://example.com/\",\"content\":\"one\",\"status\":200}\n{\"url\":\"https://example.com/2\",\"content\":\"two\",\"status\":200}\n"))
	case "text/csv":
		w.Header().Set("Content-Type", "text/csv")
		_, _ = w.Write([]byte("url,content\nhttps://example.com/,hello\n"))
	default:
		w.WriteHeader(415)
	}
}

func TestMethods(t *testing.T) {
	fake := &fakeSpider{t: t}
	r, _ := integrationstest.Start(t, spider.Provider, fake, nil)
	setup := map[string]any{"spider_api_key": key}
	tests := []struct {
		name    string
		method  string
		setup   map[string]any
		args    map[string]any
		wantReq request
		want    any
		kind    fault.Kind
		msg     string
		field   string
	}{
		{name: "crawl (default) with params", setup: setup, args: map[string]any{"url": "https://example.com/", "params": map[string]any{"limit": int64(2), "return_format": "markdown"}},
			wantReq: request{"/v1/crawl", "application/json", map[string]any{"url": "https://example.com/", "limit": float64(2), "return_format": "markdown"}},
			want: map[string]any{"result": []any{
				map[string]any{"url": "https://example.com/", "content": "# Example Domain", "status": int64(200), "costs": map[string]any{"total_cost": 0.0002}},
				map[string]any{"url": "https://example.com/x", "content": "", "status": int64(404), "error": "not found"},
			}}},
		{name: "links", method: "links", setup: setup, args: map[string]any{"url": "https://example.com/"},
			wantReq: request{"/v1/links", "application/json", map[string]any{"url": "https://example.com/"}},
			want:    map[string]any{"result": []any{map[string]any{"url": "https://example.com/", "content": []any{"https://example.com/a", "https://example.com/b"}, "status": int64(200), "costs": map[string]any{"total_cost": 0.0001}}}}},
		{name: "search sends the url as the query", method: "search", setup: setup, args: map[string]any{"url": "https://example.com/golang"},
			wantReq: request{"/v1/search", "application/json", map[string]any{"search": "https://example.com/golang"}},
			want:    map[string]any{"result": []any{map[string]any{"content": []any{map[string]any{"title": "Result", "url": "https://r.example/"}}, "status": int64(200)}}}},
		{name: "screenshot jsonl", method: "screenshot", setup: setup, args: map[string]any{"url": "https://example.com/", "content_type": "application/jsonl"},
			wantReq: request{"/v1/screenshot", "application/jsonl", map[string]any{"url": "https://example.com/"}},
			want:    map[string]any{"result": []any{map[string]any{"url": "https://example.com/", "content": "one", "status": int64(200)}, map[string]any{"url": "https://example.com/2", "content": "two", "status": int64(200)}}}},
		{name: "csv", method: "crawl", setup: setup, args: map[string]any{"url": "https://example.com/", "content_type": "text/csv"},
			wantReq: request{"/v1/crawl", "text/csv", map[string]any{"url": "https://example.com/"}},
			want:    map[string]any{"result": []any{map[string]any{"url": "https://example.com/", "content": "url,content\nhttps://example.com/,hello"}}}},
		{name: "no results", setup: setup, args: map[string]any{"url": "https://empty.example/"}, kind: fault.Provider, msg: "no results"},
		{name: "out of credits", setup: setup, args: map[string]any{"url": "https://broke.example/"}, kind: fault.Provider, msg: "HTTP 402"},
		{name: "bad key", setup: map[string]any{"spider_api_key": "sk-wrong-0000"}, args: map[string]any{"url": "https://example.com/"}, kind: fault.Provider, msg: "refused the credentials in the setup (HTTP 401)"},
		{name: "url not a URL", setup: setup, args: map[string]any{"url": "not a url"}, kind: fault.InvalidInput, field: "arguments.url", msg: "must be a valid uri"},
		{name: "bad content type", setup: setup, args: map[string]any{"url": "https://example.com/", "content_type": "text/html"}, kind: fault.InvalidInput, field: "arguments.content_type"},
		{name: "unknown method", method: "scrape", setup: setup, args: map[string]any{"url": "https://example.com/"}, kind: fault.InvalidInput, field: "method"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), "spider", tc.method, tc.setup, tc.args)
			if tc.kind != "" {
				integrationstest.CheckErr(t, err, tc.kind, tc.msg, tc.setup)
				if fault.FieldOf(err) != tc.field {
					t.Errorf("field %q, want %q", fault.FieldOf(err), tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fake.mu.Lock()
			last := fake.last
			fake.mu.Unlock()
			if !reflect.DeepEqual(last, tc.wantReq) {
				t.Errorf("sent %+v\nwant %+v", last, tc.wantReq)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
	integrationstest.RunFaults(t, r, &fake.faults, "spider", "links", setup, map[string]any{"url": "https://example.com/"},
		integrationstest.StandardFaults(`{"error":"Too many requests"}`, `{"error":"Service unavailable"}`))
}
