package httpapi

import (
	"context"
	"net/http"
	"testing"
)

// TestDocument: routes another function serves are listed in the document, with their schemas,
// but not served; a route the router serves itself keeps its own operation.
func TestDocument(t *testing.T) {
	ok := func(context.Context, *Request) (*Response, error) { return OK(map[string]string{}), nil }
	other := New(Options{})
	other.Schema("Chat", map[string]any{"type": "object"})
	other.Handle(Route{Method: http.MethodPost, Path: "/sessions/{id}/chat", Handler: ok,
		Op: Operation{ID: "chat", Responses: map[int]Resp{200: {Description: "x", Schema: Ref("Chat")}}}})
	other.Handle(Route{Method: http.MethodGet, Path: "/things", Handler: ok, Op: Operation{ID: "otherThings"}})
	rt := New(Options{})
	rt.Handle(Route{Method: http.MethodGet, Path: "/things", Handler: ok, Op: Operation{ID: "listThings"}})
	rt.Document(other)

	doc := served(t, rt)
	op := func(path, method string) map[string]any {
		item, _ := doc["paths"].(map[string]any)[path].(map[string]any)
		o, _ := item[method].(map[string]any)
		return o
	}
	tests := []struct{ path, method, wantID string }{
		{"/sessions/{id}/chat", "post", "chat"},
		{"/things", "get", "listThings"},
		{"/openapi.json", "get", "getOpenAPI"},
	}
	for _, tt := range tests {
		if got := op(tt.path, tt.method)["operationId"]; got != tt.wantID {
			t.Errorf("%s %s: operationId %v, want %s", tt.method, tt.path, got, tt.wantID)
		}
	}
	if _, ok := doc["components"].(map[string]any)["schemas"].(map[string]any)["Chat"]; !ok {
		t.Error("the documented route's schema is not in components.schemas")
	}
	for _, r := range rt.Routes() {
		if r.Path == "/sessions/{id}/chat" {
			t.Error("a documented route is served")
		}
	}
	ev := baseEvent(t)
	withRequest("POST", "/sessions/s1/chat", "", "{}")(&ev)
	if resp, _ := rt.ServeEvent(context.Background(), ev); resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /sessions/s1/chat: %d, want 404 (documented, not served)", resp.StatusCode)
	}
}
