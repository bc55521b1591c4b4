package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/llm/openai"
)

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// serve answers one request with body and hands the request JSON back.
func serve(t *testing.T, body string) (*httptest.Server, *map[string]any) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Errorf("request is not JSON: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func TestRequestShape(t *testing.T) {
	srv, got := serve(t, `{"id":"x","object":"chat.completion","created":1,"model":"served-model","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c9","type":"function","function":{"name":"f","arguments":"{}"}}]}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	temp, top, maxTok, seed := 0.1, 0.9, int64(64), int64(3)
	m := openai.New("configured-model", openai.Options{BaseURL: srv.URL})
	res, err := m.Converse(context.Background(), llm.Request{
		Model: "override-model",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "sys"},
			{Role: llm.RoleUser, Content: "hi"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}}},
			{Role: llm.RoleTool, ToolCallID: "c1", Name: "f", Content: `{"ok":true}`},
		},
		Tools:      []llm.Function{{Name: "f", Description: "F", Parameters: map[string]any{"type": "object"}}, {Name: "g"}},
		ToolChoice: llm.ToolChoice{Mode: llm.ChoiceNamed, Name: "f"},
		Settings:   llm.Settings{Temperature: &temp, TopP: &top, MaxTokens: &maxTok, Seed: &seed, Stop: []string{"END"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := *got
	checks := map[string]string{
		"model":       `"override-model"`,
		"messages":    `[{"content":"sys","role":"system"},{"content":"hi","role":"user"},{"role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"c1","type":"function"}]},{"content":"{\"ok\":true}","role":"tool","tool_call_id":"c1"}]`,
		"tools":       `[{"function":{"description":"F","name":"f","parameters":{"type":"object"}},"type":"function"},{"function":{"name":"g","parameters":{"properties":{},"type":"object"}},"type":"function"}]`,
		"tool_choice": `{"function":{"name":"f"},"type":"function"}`,
		"temperature": `0.1`, "top_p": `0.9`, "max_tokens": `64`, "seed": `3`, "stop": `["END"]`,
	}
	for k, want := range checks {
		if g := js(req[k]); g != want {
			t.Errorf("%s = %s\nwant %s", k, g, want)
		}
	}
	// A reply with calls finished for them, whatever the server said; the served model is named.
	if res.FinishReason != llm.FinishToolCalls || res.Model != "served-model" || res.Usage.TotalTokens != 5 || len(res.Message.ToolCalls) != 1 {
		t.Errorf("res = %+v", res)
	}
}

func TestToolChoiceNone(t *testing.T) {
	srv, got := serve(t, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"length","message":{"role":"assistant","content":"trunc"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	res, err := openai.New("m", openai.Options{BaseURL: srv.URL}).Converse(context.Background(), llm.Request{
		Messages:   []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
		Tools:      []llm.Function{{Name: "f"}},
		ToolChoice: llm.ToolChoice{Mode: llm.ChoiceNone},
	})
	if err != nil {
		t.Fatal(err)
	}
	if js((*got)["tool_choice"]) != `"none"` || res.FinishReason != llm.FinishLength || res.Message.Content != "trunc" {
		t.Errorf("tool_choice %s, res %+v", js((*got)["tool_choice"]), res)
	}
}

// TestErrors: each status of a refusal becomes its fault kind with the endpoint's own message, and
// the configured key is the Authorization header (none when the endpoint takes none).
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name, key, wantAuth string
		status              int
		kind                fault.Kind
		msg                 string
	}{
		{"refused key", "sk-test", "Bearer sk-test", 401, fault.Provider, "check the key in SINEW_OPENAI_API_KEY (or the secret SINEW_OPENAI_KEY_SECRET names)"},
		{"throttled", "", "", 429, fault.Transient, "slow down"},
		{"server error", "", "", 503, fault.Transient, "slow down"},
		{"bad request", "k", "Bearer k", 400, fault.InvalidInput, "slow down"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var auth string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				auth = r.Header.Get("Authorization")
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"x"}}`)
			}))
			defer srv.Close()
			_, err := openai.New("m", openai.Options{BaseURL: srv.URL + "/v1/", APIKey: c.key}).Converse(context.Background(),
				llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			if fault.KindOf(err) != c.kind || err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err = %v (%s), want %s containing %q", err, fault.KindOf(err), c.kind, c.msg)
			}
			if auth != c.wantAuth {
				t.Errorf("Authorization %q, want %q", auth, c.wantAuth)
			}
		})
	}
}

// TestUnreachable: an endpoint that refuses the connection is Transient.
func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := openai.New("m", openai.Options{BaseURL: url}).Converse(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if fault.KindOf(err) != fault.Transient {
		t.Errorf("err = %v (%s), want Transient", err, fault.KindOf(err))
	}
}
