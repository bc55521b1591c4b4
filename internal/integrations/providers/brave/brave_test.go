package brave_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/brave"
)

const key = "BSA-test-token-1"

// fakeBrave speaks the Brave Web Search API: token in X-Subscription-Token, JSON errors with
// {"type":"ErrorResponse","error":{...}}.
func fakeBrave(t *testing.T, f *integrationstest.Faults) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.Serve(w) {
			return
		}
		q := r.URL.Query()
		if r.Method != http.MethodGet || r.URL.Path != "/res/v1/web/search" || q.Get("count") != "3" || r.Header.Get("Accept") != "application/json" {
			t.Errorf("unexpected request %s %s %v", r.Method, r.URL, r.Header)
		}
		if q.Get("X-Subscription-Token") != "" {
			t.Error("token sent in the query")
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-Subscription-Token") != key {
			w.WriteHeader(422)
			_, _ = w.Write([]byte(`{"type":"ErrorResponse","error":{"id":"x","status":422,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid."},"time":1}`))
			return
		}
		switch q.Get("q") {
		case "nothing":
			_, _ = w.Write([]byte(`{"type":"search","query":{"original":"nothing"},"mixed":{}}`))
		case "broken":
			_, _ = w.Write([]byte(`{"type":"search","web":{"results":[`))
		default:
			_, _ = w.Write([]byte(`{"type":"search","query":{"original":"` + q.Get("q") + `"},"web":{"type":"search","results":[
				{"title":"The Go Programming Language","url":"https://go.dev/","description":"Go is an open source programming language.","extra_snippets":["Build simple, secure, scalable systems.","Download Go"]},
				{"title":"Go (game)","url":"https://en.wikipedia.org/wiki/Go_(game)","description":"Go is an abstract strategy board game."},
				{"title":"No description","url":"https://example.org/","description":"","extra_snippets":["only extra"]}]}}`))
		}
	})
}

func TestSearch(t *testing.T) {
	f := &integrationstest.Faults{}
	r, _ := integrationstest.Start(t, brave.Provider, fakeBrave(t, f), nil)
	setup := map[string]any{"brave_api_key": key}
	tests := []struct {
		name  string
		setup map[string]any
		args  map[string]any
		want  any
		kind  fault.Kind
		msg   string
	}{
		{name: "results", setup: setup, args: map[string]any{"query": "golang"}, want: map[string]any{"result": []any{
			map[string]any{"title": "The Go Programming Language", "link": "https://go.dev/", "snippet": "Go is an open source programming language. Build simple, secure, scalable systems. Download Go"},
			map[string]any{"title": "Go (game)", "link": "https://en.wikipedia.org/wiki/Go_(game)", "snippet": "Go is an abstract strategy board game."},
			map[string]any{"title": "No description", "link": "https://example.org/", "snippet": "only extra"},
		}}},
		{name: "no web results", setup: setup, args: map[string]any{"query": "nothing"}, want: map[string]any{"result": []any{}}},
		{name: "malformed JSON", setup: setup, args: map[string]any{"query": "broken"}, kind: fault.Provider, msg: "Brave Search answered with malformed JSON"},
		{name: "invalid token", setup: map[string]any{"brave_api_key": "wrong-token-2"}, args: map[string]any{"query": "golang"}, kind: fault.Provider, msg: "Brave Search refused the subscription token in the setup (brave_api_key)"},
		{name: "no key", args: map[string]any{"query": "golang"}, kind: fault.InvalidInput, msg: "setup.brave_api_key is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), "brave", "", tc.setup, tc.args)
			if tc.kind != "" {
				integrationstest.CheckErr(t, err, tc.kind, tc.msg, tc.setup)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
	cases := append(integrationstest.StandardFaults(
		`{"type":"ErrorResponse","error":{"status":429,"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan."}}`,
		`{"type":"ErrorResponse","error":{"status":503,"code":"SERVICE_UNAVAILABLE"}}`),
		integrationstest.Case{Status: 401, Body: `{"type":"ErrorResponse","error":{"status":401,"code":"UNAUTHORIZED"}}`, Kind: fault.Provider, Msg: "refused the credentials"})
	integrationstest.RunFaults(t, r, f, "brave", "", setup, map[string]any{"query": "golang"}, cases)
}
