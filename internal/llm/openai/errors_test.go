package openai_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/llm/openai"
)

var hi = []llm.Message{{Role: llm.RoleUser, Content: "hi"}}

// Without tools, no tool_choice goes (nor tools), whatever the choice: OpenAI refuses a tool_choice
// without tools.
func TestNoToolChoiceWithoutTools(t *testing.T) {
	for _, mode := range []llm.ToolChoiceMode{llm.ChoiceAuto, llm.ChoiceNone, llm.ChoiceRequired} {
		srv, got := serve(t, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
		if _, err := openai.New("m", openai.Options{BaseURL: srv.URL}).Converse(context.Background(), llm.Request{Messages: hi, ToolChoice: llm.ToolChoice{Mode: mode}}); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"tool_choice", "tools"} {
			if v, ok := (*got)[k]; ok {
				t.Errorf("mode %s: %s = %s sent without tools", mode, k, js(v))
			}
		}
	}
}

// TestErrorsAreTyped: each way an endpoint fails, as a Sinew.* kind with a message naming what to
// check.
func TestErrorsAreTyped(t *testing.T) {
	cases := []struct {
		status int
		want   fault.Kind
		msg    string
	}{
		{401, fault.Provider, "refused the credentials (HTTP 401: msg of 401): check the key in SINEW_OPENAI_API_KEY"},
		{403, fault.Provider, "refused the credentials (HTTP 403"},
		{404, fault.Provider, "check the model name in SINEW_MODEL"},
		{400, fault.InvalidInput, "answered HTTP 400: msg of 400"},
		{408, fault.Transient, "answered HTTP 408"},
		{429, fault.Transient, "answered HTTP 429: msg of 429"},
		{500, fault.Transient, "answered HTTP 500"},
		{502, fault.Transient, "answered HTTP 502"},
		{503, fault.Transient, "answered HTTP 503"},
		{504, fault.Transient, "answered HTTP 504"},
	}
	for _, tc := range cases {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, `{"error":{"message":"msg of `+strconv.Itoa(tc.status)+`","type":"x"}}`)
			}))
			t.Cleanup(srv.Close)
			_, err := openai.New("m", openai.Options{BaseURL: srv.URL, APIKey: "sk-secret-key"}).Converse(context.Background(), llm.Request{Messages: hi})
			if fault.KindOf(err) != tc.want || !strings.Contains(fault.Message(err), tc.msg) {
				t.Fatalf("err = %v (kind %s), want %s with %q", err, fault.KindOf(err), tc.want, tc.msg)
			}
			if strings.Contains(err.Error(), "sk-secret-key") {
				t.Fatalf("the key is in the error: %v", err)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		_, err := openai.New("m", openai.Options{BaseURL: srv.URL}).Converse(context.Background(), llm.Request{Messages: hi})
		if fault.KindOf(err) != fault.Transient || !strings.Contains(fault.Message(err), "could not be reached") || !strings.Contains(fault.Message(err), "SINEW_OPENAI_BASE_URL") {
			t.Fatalf("err = %v (kind %s), want Transient naming SINEW_OPENAI_BASE_URL", err, fault.KindOf(err))
		}
	})
	slow := func(t *testing.T) *httptest.Server {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(func() { close(release); srv.Close() })
		return srv
	}
	t.Run("the caller's deadline", func(t *testing.T) {
		srv := slow(t)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := openai.New("m", openai.Options{BaseURL: srv.URL}).Converse(ctx, llm.Request{Messages: hi})
		if fault.KindOf(err) != fault.Timeout {
			t.Fatalf("err = %v (kind %s), want Timeout", err, fault.KindOf(err))
		}
	})
	t.Run("the HTTP client's time-out", func(t *testing.T) {
		srv := slow(t)
		c := &http.Client{Timeout: 50 * time.Millisecond}
		_, err := openai.New("m", openai.Options{BaseURL: srv.URL, HTTPClient: c}).Converse(context.Background(), llm.Request{Messages: hi})
		if fault.KindOf(err) != fault.Transient || !strings.Contains(fault.Message(err), "did not answer in time") {
			t.Fatalf("err = %v (kind %s), want Transient, not in time", err, fault.KindOf(err))
		}
	})
}
