package algolia_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/algolia"
)

const (
	appID = "LATENCY"
	key   = "algolia-search-key-1"
)

// fakeAlgolia speaks the Search API's multi-query endpoint: credentials in X-Algolia-Application-Id
// and X-Algolia-API-Key, errors as {"message","status"}.
func fakeAlgolia(t *testing.T, f *integrationstest.Faults, last *sync.Map) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.Serve(w) {
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		if r.Method != http.MethodPost || r.URL.Path != "/1/indexes/*/queries" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		}
		if r.Header.Get("X-Algolia-Application-Id") != appID || r.Header.Get("X-Algolia-API-Key") != key {
			w.WriteHeader(403)
			_, _ = w.Write([]byte(`{"message":"Invalid Application-ID or API key","status":403}`))
			return
		}
		var body struct {
			Requests []map[string]any `json:"requests"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Requests) != 1 {
			t.Errorf("body %v %v", body, err)
		}
		req := body.Requests[0]
		last.Store("request", req)
		if req["indexName"] != "products" {
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"message":"Index does not exist","status":404}`))
			return
		}
		hits := []any{map[string]any{"objectID": "1", "name": "Phone", "price": 500, "_highlightResult": map[string]any{}}}
		if attrs, ok := req["attributesToRetrieve"].([]any); ok && len(attrs) == 1 && attrs[0] == "name" {
			hits = []any{map[string]any{"objectID": "1", "name": "Phone"}}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"results": []any{map[string]any{
			"hits": hits, "nbHits": 1, "page": 0, "nbPages": 1, "hitsPerPage": req["hitsPerPage"], "exhaustiveNbHits": true,
			"query": req["query"], "params": "query=phone", "index": "products", "processingTimeMS": 2,
		}}})
	})
}

func TestSearch(t *testing.T) {
	f := &integrationstest.Faults{}
	var last sync.Map
	r, _ := integrationstest.Start(t, algolia.Provider, fakeAlgolia(t, f, &last), nil)
	setup := map[string]any{"algolia_application_id": appID, "algolia_api_key": key}
	meta := map[string]any{"query": "phone", "nbHits": int64(1), "page": int64(0), "nbPages": int64(1), "processingTimeMS": int64(2)}
	tests := []struct {
		name  string
		setup map[string]any
		args  map[string]any
		want  any
		sent  map[string]any
		kind  fault.Kind
		msg   string
		field string
	}{
		{name: "search", setup: setup, args: map[string]any{"index_name": "products", "query": "phone"},
			sent: map[string]any{"indexName": "products", "query": "phone", "hitsPerPage": float64(10)},
			want: map[string]any{"hits": []any{map[string]any{"objectID": "1", "name": "Phone", "price": int64(500), "_highlightResult": map[string]any{}}}, "metadata": meta}},
		{name: "attributes", setup: setup, args: map[string]any{"index_name": "products", "query": "phone", "attributes_to_retrieve": []any{"name"}, "hits_per_page": int64(5)},
			sent: map[string]any{"indexName": "products", "query": "phone", "hitsPerPage": float64(5), "attributesToRetrieve": []any{"name"}},
			want: map[string]any{"hits": []any{map[string]any{"objectID": "1", "name": "Phone"}}, "metadata": meta}},
		{name: "unknown index", setup: setup, args: map[string]any{"index_name": "nope", "query": "phone"}, kind: fault.Provider, msg: "Index does not exist"},
		{name: "wrong key", setup: map[string]any{"algolia_application_id": appID, "algolia_api_key": "wrong-key-xyz"}, args: map[string]any{"index_name": "products", "query": "phone"}, kind: fault.Provider, msg: "refused the credentials in the setup (HTTP 403)"},
		{name: "app id not a host label", setup: map[string]any{"algolia_application_id": "evil.com/x", "algolia_api_key": key}, args: map[string]any{"index_name": "products", "query": "phone"}, kind: fault.InvalidInput, field: "setup.algolia_application_id"},
		{name: "hits_per_page too big", setup: setup, args: map[string]any{"index_name": "products", "query": "phone", "hits_per_page": int64(1001)}, kind: fault.InvalidInput, field: "arguments.hits_per_page"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), "algolia", "", tc.setup, tc.args)
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
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
			if sent, _ := last.Load("request"); !reflect.DeepEqual(sent, tc.sent) {
				t.Errorf("sent %v, want %v", sent, tc.sent)
			}
		})
	}
	integrationstest.RunFaults(t, r, f, "algolia", "", setup, map[string]any{"index_name": "products", "query": "phone"},
		integrationstest.StandardFaults(`{"message":"Too many requests","status":429}`, `{"message":"Service Unavailable","status":503}`))
}
