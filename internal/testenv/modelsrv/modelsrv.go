// Package modelsrv is a scripted OpenAI-compatible chat completions endpoint on loopback, for the
// tests that drive the model-tool loop through the real OpenAI adapter.
//
// It answers the scripted turns in order and keeps every request it got.
package modelsrv

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Turn is one scripted model answer: Text, or tool calls ({id, name, arguments}).
type Turn struct {
	Text  string
	Calls [][3]string
}

// Server answers POST <URL>/v1/chat/completions with the next turn.
type Server struct {
	URL string // the base URL; the adapter's is URL + "/v1"

	mu       sync.Mutex
	turns    []Turn
	loop     []Turn
	requests []map[string]any
}

// New starts a server answering turns, closed when t ends.
func New(t testing.TB, turns ...Turn) *Server {
	m := &Server{turns: turns}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

// Script replaces the turns still to come.
func (m *Server) Script(turns ...Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turns = turns
}

// Loop sets turns played again whenever the script runs out (benchmarks).
func (m *Server) Loop(turns ...Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loop = turns
}

// Request is the ith request the server got; it fails t when there are fewer.
func (m *Server) Request(t testing.TB, i int) map[string]any {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if i >= len(m.requests) {
		t.Fatalf("the model got %d requests, want at least %d", len(m.requests), i+1)
	}
	return m.requests[i]
}

// Count is how many requests the server got.
func (m *Server) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

func (m *Server) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(b, &req)
	m.mu.Lock()
	m.requests = append(m.requests, req)
	if len(m.turns) == 0 && m.loop != nil {
		m.turns = append(m.turns, m.loop...)
	}
	if len(m.turns) == 0 {
		m.mu.Unlock()
		http.Error(w, `{"error":{"message":"the script has no more turns","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	tr := m.turns[0]
	m.turns = m.turns[1:]
	m.mu.Unlock()
	msg := map[string]any{"role": "assistant", "content": tr.Text}
	finish := "stop"
	if len(tr.Calls) > 0 {
		var tcs []any
		for _, c := range tr.Calls {
			tcs = append(tcs, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
		}
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": tcs}
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": time.Now().Unix(), "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}
