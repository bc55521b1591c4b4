package apicall_test

import (
	"io"
	"net/http"
	"testing"

	"sinew/internal/apicall"
)

// BenchmarkRoundTrip measures one api_call to a loopback server (merge, request building, the
// guarded dial on reused connections, reading, JSON parsing, base64) beside the bare net/http round
// trip to the same server as the baseline.
//
//	go test -run '^$' -bench RoundTrip -benchmem ./internal/apicall/
func BenchmarkRoundTrip(b *testing.B) {
	const answer = `{"id": 42, "name": "sinew", "tags": ["a", "b", "c"], "ok": true}`
	e := newEnv(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))

	b.Run("nethttp", func(b *testing.B) {
		client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 8}}
		url := e.srv.URL + "/items/42?verbose=true"
		for b.Loop() {
			resp, err := client.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})

	b.Run("apicall", func(b *testing.B) {
		def := e.def("GET", "/items/{id}")
		in := apicall.Input{Call: map[string]any{"path": map[string]any{"id": int64(42)}, "params": map[string]any{"verbose": true}}}
		ctx := b.Context()
		for b.Loop() {
			res, err := e.ex.Execute(ctx, def, in)
			if err != nil {
				b.Fatal(err)
			}
			if res.StatusCode != 200 || res.JSON == nil {
				b.Fatalf("unexpected result %+v", res)
			}
		}
	})
}
