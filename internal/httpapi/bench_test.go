package httpapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
)

// benchRouter has as many routes as the finished API (about 60), so matching is measured at size.
func benchRouter() *Router {
	rt := New(Options{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	h := func(_ context.Context, r *Request) (*Response, error) {
		return OK(map[string]string{"id": r.Param("id")}), nil
	}
	for i := range 20 {
		base := fmt.Sprintf("/r%d", i)
		rt.Handle(Route{Method: "GET", Path: base, Handler: h})
		rt.Handle(Route{Method: "GET", Path: base + "/{id}", Handler: h})
		rt.Handle(Route{Method: "GET", Path: base + "/{id}/sub/{sub_id}", Handler: h})
	}
	rt.Handle(Route{Method: "POST", Path: "/agents", Handler: func(_ context.Context, r *Request) (*Response, error) {
		var in agentIn
		if err := r.Decode(&in); err != nil {
			return nil, err
		}
		return JSON(201, in), nil
	}})
	return rt
}

func BenchmarkServeEventGet(b *testing.B) {
	rt := benchRouter()
	ev := baseEvent(b)
	withRequest("GET", "/r19/abc/sub/def", "", "")(&ev)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if resp, _ := rt.ServeEvent(ctx, ev); resp.StatusCode != 200 {
			b.Fatal(resp.StatusCode)
		}
	}
}

func BenchmarkServeEventPostJSON(b *testing.B) {
	rt := benchRouter()
	ev := baseEvent(b)
	body := `{"name":"agent","metadata":{"x-integration-setup":{"weather":{"api_key":"k"}},"n":[1,2,3],"deep":{"a":{"b":{"c":1.5}}}}}`
	withRequest("POST", "/agents", "", body)(&ev)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if resp, _ := rt.ServeEvent(ctx, ev); resp.StatusCode != 201 {
			b.Fatal(resp.StatusCode, resp.Body)
		}
	}
}

func BenchmarkOpenAPI(b *testing.B) {
	rt := benchRouter()
	b.ReportAllocs()
	for b.Loop() {
		_ = rt.OpenAPI()
	}
}
