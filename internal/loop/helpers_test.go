package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/llm"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/tool"
)

// oaTurn answers one chat completions request: it checks the request sinew sent and gives the
// completion to answer with, or a status and error body.
type oaTurn func(t *testing.T, req map[string]any) (status int, body any)

// oaServer is a local OpenAI-compatible endpoint that plays turns in order and fails the test on
// a request past them.
type oaServer struct {
	*httptest.Server
	mu    sync.Mutex
	turns []oaTurn
	reqs  []map[string]any
	auth  []string
}

func newOAServer(t *testing.T, turns ...oaTurn) *oaServer {
	t.Helper()
	s := &oaServer{turns: turns}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			http.Error(w, "not found", 404)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var req map[string]any
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Errorf("request body is not JSON: %v", err)
		}
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, req)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if n >= len(s.turns) {
			t.Errorf("request %d past the %d scripted turns", n, len(s.turns))
			http.Error(w, "no more turns", 500)
			return
		}
		status, body := s.turns[n](t, req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *oaServer) requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.reqs...)
}

// completion builds a chat completion answer.
func completion(content string, finish string, calls ...map[string]any) map[string]any {
	msg := map[string]any{"role": "assistant", "content": content}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg, "logprobs": nil}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	}
}

func toolCall(id, name, args string) map[string]any {
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
}

// reply is a turn that answers body without checks.
func reply(body map[string]any) oaTurn {
	return func(*testing.T, map[string]any) (int, any) { return 200, body }
}

// messagesOf gives the request's messages.
func messagesOf(req map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range req["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

// toolMessages maps tool_call_id to content for the request's tool messages.
func toolMessages(req map[string]any) map[string]string {
	out := map[string]string{}
	for _, m := range messagesOf(req) {
		if m["role"] == "tool" {
			out[m["tool_call_id"].(string)] = m["content"].(string)
		}
	}
	return out
}

// recorder is a Runner that records its calls and answers from a func; it can hold every call
// until a number of them run at once, to prove they run concurrently.
type recorder struct {
	mu       sync.Mutex
	calls    []tool.Call
	answer   func(c *tool.Call) tool.Result
	inFlight atomic.Int32
	peak     atomic.Int32
	barrier  chan struct{} // closed when `wait` calls are in flight
	wait     int32
}

func (r *recorder) Run(ctx context.Context, c *tool.Call, def *tool.Tool) tool.Result {
	r.mu.Lock()
	r.calls = append(r.calls, *c)
	r.mu.Unlock()
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	for {
		p := r.peak.Load()
		if n <= p || r.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if r.barrier != nil {
		if n == r.wait {
			close(r.barrier)
		}
		select {
		case <-r.barrier:
		case <-time.After(5 * time.Second):
			return tool.ErrorResult(c, string(fault.Timeout), "the other calls never started")
		}
	}
	if r.answer != nil {
		return r.answer(c)
	}
	return tool.ResultOf(c, map[string]any{"echo": c.Arguments()})
}

// registry holds the dummy provider, for integration tools.
type fakeIntegrations map[string]integrations.Function

func (f fakeIntegrations) ToolSchema(provider, method, name string) (integrations.Function, error) {
	fn, ok := f[provider+"."+method]
	if !ok {
		return integrations.Function{}, fault.New(fault.NotFound, "integration %s %s not found", provider, method)
	}
	fn.Name = name
	return fn, nil
}

var weatherSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"city": map[string]any{"type": "string"}, "units": map[string]any{"type": "string"}},
	"required":   []any{"city"},
}

// toolset is a formatted toolset of every type but system.
func toolset(t testing.TB) []toolfmt.Formatted {
	t.Helper()
	f := &toolfmt.Formatter{Integrations: fakeIntegrations{"weather.get": {Description: "Get the weather", Parameters: weatherSchema}}}
	tools := []*tool.Tool{
		{Name: "weather", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "weather", Method: "get"}},
		{Name: "status", Type: tool.TypeAPICall, Description: "Service status", APICall: &tool.APICallDef{Method: "GET", URL: "https://status.example.com/"}},
		{Name: "ask_user", Type: tool.TypeFunction, Description: "Ask the user", Function: &tool.FunctionDef{Parameters: map[string]any{
			"type": "object", "properties": map[string]any{"question": map[string]any{"type": "string"}}, "required": []any{"question"},
		}}},
	}
	fs, err := f.FormatAll(tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func userMessages(text string) []llm.Message {
	return []llm.Message{{Role: llm.RoleSystem, Content: "You are helpful."}, {Role: llm.RoleUser, Content: text}}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return string(b)
}
