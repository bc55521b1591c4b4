package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// strictOpenAI is an OpenAI-compatible chat completions server (as llama.cpp's and Ollama's are) that
// checks the wire format of every request, as OpenAI documents it: the key as a bearer token,
// known fields only, messages of the four roles, each tool message answering a call of the
// assistant message before it, function tools with object schemas, and tool_choice only with tools.
// It answers the turns in order.
type strictOpenAI struct {
	*httptest.Server
	key, model string
	mu         sync.Mutex
	turns      []map[string]any // each an assistant message
	requests   []map[string]any
	problems   []string
}

func newStrictOpenAI(t *testing.T, key, model string, turns ...map[string]any) *strictOpenAI {
	s := &strictOpenAI{key: key, model: model, turns: turns}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *strictOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var req map[string]any
	err := json.Unmarshal(raw, &req)
	s.mu.Lock()
	defer s.mu.Unlock()
	problems := s.check(r, req, err)
	s.problems = append(s.problems, problems...)
	s.requests = append(s.requests, req)
	if len(problems) > 0 || len(s.turns) == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": strings.Join(append(problems, "no turn left"), "; "), "type": "invalid_request_error"}})
		return
	}
	msg := s.turns[0]
	s.turns = s.turns[1:]
	finish := "stop"
	if msg["tool_calls"] != nil {
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-local", "object": "chat.completion", "created": 1700000000, "model": s.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
	})
}

var requestFields = []string{"model", "messages", "tools", "tool_choice", "temperature", "max_tokens", "top_p", "stop", "seed", "frequency_penalty", "presence_penalty"}

func (s *strictOpenAI) check(r *http.Request, req map[string]any, decodeErr error) []string {
	var out []string
	bad := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		bad("request %s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+s.key {
		bad("Authorization %q, want the key as a bearer token", got)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || decodeErr != nil {
		bad("the body is not JSON (%v)", decodeErr)
		return out
	}
	for k := range req {
		if !slices.Contains(requestFields, k) {
			bad("unknown field %q", k)
		}
	}
	if req["model"] != s.model {
		bad("model %v, want %s", req["model"], s.model)
	}
	tools, hasTools := req["tools"].([]any)
	for i, x := range tools {
		tl, _ := x.(map[string]any)
		fn, _ := tl["function"].(map[string]any)
		params, _ := fn["parameters"].(map[string]any)
		if tl["type"] != "function" || fn["name"] == "" || params["type"] != "object" {
			bad("tools[%d] = %v, want {type: function, function: {name, parameters: an object schema}}", i, x)
		}
	}
	if _, ok := req["tool_choice"]; ok && !hasTools {
		bad("tool_choice without tools")
	}
	return append(out, checkMessages(req["messages"])...)
}

// checkMessages checks the messages' roles and that each tool message answers a call of the
// assistant message before it, once.
func checkMessages(v any) []string {
	var out []string
	msgs, _ := v.([]any)
	open := map[string]bool{}
	for i, x := range msgs {
		m, _ := x.(map[string]any)
		switch m["role"] {
		case "system", "user":
			if _, ok := m["content"].(string); !ok {
				out = append(out, fmt.Sprintf("messages[%d].content is not a string", i))
			}
		case "assistant":
			open = map[string]bool{}
			calls, _ := m["tool_calls"].([]any)
			for j, c := range calls {
				call, _ := c.(map[string]any)
				fn, _ := call["function"].(map[string]any)
				args, _ := fn["arguments"].(string)
				var obj map[string]any
				if call["type"] != "function" || call["id"] == "" || json.Unmarshal([]byte(args), &obj) != nil {
					out = append(out, fmt.Sprintf("messages[%d].tool_calls[%d] = %v, want {id, type: function, function: {name, arguments: a JSON object as text}}", i, j, c))
				}
				id, _ := call["id"].(string)
				open[id] = true
			}
		case "tool":
			id, _ := m["tool_call_id"].(string)
			if _, ok := m["content"].(string); !ok || !open[id] {
				out = append(out, fmt.Sprintf("messages[%d] = %v: a tool message needs string content and the id of a call it answers", i, m))
			}
			delete(open, id)
		default:
			out = append(out, fmt.Sprintf("messages[%d].role %v", i, m["role"]))
		}
	}
	return out
}

// TestLocalChatThroughAnOpenAICompatibleServer: local mode, pointed at an OpenAI-compatible server by
// SINEW_MODEL=openai:<model> with SINEW_OPENAI_BASE_URL and the key in SINEW_OPENAI_API_KEY, chats
// with an agent that calls a tool: the server gets the tool, the call and its result in OpenAI's
// wire format.
func TestLocalChatThroughAnOpenAICompatibleServer(t *testing.T) {
	const key, model = "sk-local-test-key", "llama3.2"
	srv := newStrictOpenAI(t, key, model,
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": "call_1", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"said":"hello"}`}}}},
		map[string]any{"role": "assistant", "content": "The echo answered hello."},
	)
	p := startLocal(t, t.TempDir(), []string{"SINEW_MODEL=openai:" + model, "SINEW_OPENAI_BASE_URL=" + srv.URL + "/v1", "SINEW_OPENAI_API_KEY=" + key})
	a := p.apiFor(t, "dev-own-model")
	agent := a.must(t, "POST", "/agents", map[string]any{"name": "own-model", "instructions": "Use the echo tool."}, 201)["id"].(string)
	a.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "echo", "type": "integration", "description": "Echo the arguments",
		"integration": map[string]any{"provider": "dummy"}}, 201)
	session := a.must(t, "POST", "/sessions", map[string]any{"agent_id": agent}, 201)["id"].(string)

	chat := a.must(t, "POST", "/sessions/"+session+"/chat", map[string]any{"auto_run_tools": true,
		"messages": []any{map[string]any{"role": "user", "content": "Say hello through the echo."}}}, 200)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.problems) > 0 || len(srv.requests) != 2 {
		t.Fatalf("the server got %d requests, with these problems: %v", len(srv.requests), srv.problems)
	}
	if tools, _ := srv.requests[0]["tools"].([]any); len(tools) != 1 || !strings.Contains(fmt.Sprint(tools[0]), "name:echo") {
		t.Errorf("the first request's tools = %v, want the echo tool", srv.requests[0]["tools"])
	}
	msgs, _ := srv.requests[1]["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "tool" || last["tool_call_id"] != "call_1" || !strings.Contains(fmt.Sprint(last["content"]), "hello") {
		t.Errorf("the second request ends with %v, want the echo's result answering call_1", last)
	}
	cs, _ := chat["choices"].([]any)
	if len(cs) != 1 || !strings.Contains(fmt.Sprint(cs[0]), "The echo answered hello.") {
		t.Errorf("the chat answered %v", chat)
	}
	if strings.Contains(p.Stderr.String(), key) {
		t.Error("the key is in local mode's log")
	}
}

// TestLocalChatWithoutAModelSaysWhatToSet: local mode with no model set runs the default, Bedrock's,
// which it cannot reach (here a closed loopback port stands for AWS out of reach): the chat answers
// 503 saying so and naming the settings that choose another model.
func TestLocalChatWithoutAModelSaysWhatToSet(t *testing.T) {
	p := startLocal(t, t.TempDir(), []string{"SINEW_MODEL=", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://127.0.0.1:1"})
	a := p.apiFor(t, "dev-no-model")
	agent := a.must(t, "POST", "/agents", map[string]any{"name": "no-model"}, 201)["id"].(string)
	session := a.must(t, "POST", "/sessions", map[string]any{"agent_id": agent}, 201)["id"].(string)
	code, body, err := a.do(t.Context(), "POST", "/sessions/"+session+"/chat", map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	e, _ := body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(msg, "Bedrock could not be reached") ||
		!strings.Contains(msg, "SINEW_MODEL=openai:<model> with SINEW_OPENAI_BASE_URL") {
		t.Fatalf("chat = %d %v (%v), want 503 saying what is wrong and which setting fixes it", code, body, err)
	}
	t.Logf("the answer: %s", msg)
}
