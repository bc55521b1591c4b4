package bedrock_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/llm/bedrock"
	"sinew/internal/loop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/tool"
)

const modelID = "us.anthropic.claude-haiku-4-5-20251001-v1:0"

// turn answers one Converse request: the request JSON the SDK sent → status, headers and body.
type turn func(t *testing.T, req map[string]any) (int, http.Header, any)

// converseServer speaks the Converse wire format (restJson1: POST /model/{modelId}/converse) on
// 127.0.0.1, playing turns in order.
type converseServer struct {
	*httptest.Server
	mu    sync.Mutex
	turns []turn
	n     int
}

func newServer(t *testing.T, turns ...turn) *converseServer {
	s := &converseServer{turns: turns}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want := "/model/" + modelID + "/converse"
		if r.Method != http.MethodPost || r.URL.Path != want {
			t.Errorf("request %s %s, want POST %s", r.Method, r.URL.Path, want)
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDTEST/") {
			t.Errorf("request is not SigV4-signed: %q", r.Header.Get("Authorization"))
		}
		raw, _ := io.ReadAll(r.Body)
		var req map[string]any
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Errorf("body is not JSON: %v: %s", err, raw)
		}
		s.mu.Lock()
		n := s.n
		s.n++
		s.mu.Unlock()
		if n >= len(s.turns) {
			t.Errorf("request %d past the %d turns", n, len(s.turns))
			w.WriteHeader(500)
			return
		}
		status, h, body := s.turns[n](t, req)
		for k, v := range h {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func newModel(s *converseServer) *bedrock.Model {
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "SECRET", "")}
	return bedrock.New(cfg, modelID, func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(s.URL) })
}

func answer(stop string, content ...any) map[string]any {
	return map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop,
		"usage":      map[string]any{"inputTokens": 20, "outputTokens": 8, "totalTokens": 28},
		"metrics":    map[string]any{"latencyMs": 5},
	}
}

func text(s string) map[string]any { return map[string]any{"text": s} }

func toolUse(id, name string, input any) map[string]any {
	return map[string]any{"toolUse": map[string]any{"toolUseId": id, "name": name, "input": input}}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var citySchema = map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}

func TestLoopOverConverse(t *testing.T) {
	srv := newServer(t,
		func(t *testing.T, req map[string]any) (int, http.Header, any) {
			if got := js(req["system"]); got != `[{"text":"Be brief."}]` {
				t.Errorf("system = %s", got)
			}
			if got := js(req["messages"]); got != `[{"content":[{"text":"Weather in Paris and Oslo?"}],"role":"user"}]` {
				t.Errorf("messages = %s", got)
			}
			tc := req["toolConfig"].(map[string]any)
			spec := tc["tools"].([]any)[0].(map[string]any)["toolSpec"].(map[string]any)
			if spec["name"] != "weather" || spec["description"] != "Weather by city" || js(spec["inputSchema"]) != js(map[string]any{"json": citySchema}) {
				t.Errorf("toolSpec = %s", js(spec))
			}
			if js(tc["toolChoice"]) != `{"any":{}}` {
				t.Errorf("toolChoice = %s, want any (required, on the first call)", js(tc["toolChoice"]))
			}
			if js(req["inferenceConfig"]) != `{"maxTokens":256,"temperature":0.5}` {
				t.Errorf("inferenceConfig = %s", js(req["inferenceConfig"]))
			}
			return 200, nil, answer("tool_use", text("Let me look."),
				toolUse("tu_1", "weather", map[string]any{"city": "Paris"}),
				toolUse("tu_2", "weather", map[string]any{"city": "Oslo"}))
		},
		func(t *testing.T, req map[string]any) (int, http.Header, any) {
			msgs := req["messages"].([]any)
			if len(msgs) != 3 {
				t.Fatalf("messages = %s", js(msgs))
			}
			want := `{"content":[{"text":"Let me look."},{"toolUse":{"input":{"city":"Paris"},"name":"weather","toolUseId":"tu_1"}},{"toolUse":{"input":{"city":"Oslo"},"name":"weather","toolUseId":"tu_2"}}],"role":"assistant"}`
			if got := js(msgs[1]); got != want {
				t.Errorf("assistant message = %s\nwant %s", got, want)
			}
			// Both results go back in one user message, each answering its toolUseId.
			want = `{"content":[{"toolResult":{"content":[{"text":"{\"city\":\"Paris\",\"sky\":\"sunny\"}"}],"toolUseId":"tu_1"}},{"toolResult":{"content":[{"text":"{\"city\":\"Oslo\",\"sky\":\"sunny\"}"}],"toolUseId":"tu_2"}}],"role":"user"}`
			if got := js(msgs[2]); got != want {
				t.Errorf("tool results = %s\nwant %s", got, want)
			}
			if _, ok := req["toolConfig"].(map[string]any)["toolChoice"]; ok {
				t.Errorf("a forced choice must not hold after the first call: %s", js(req["toolConfig"]))
			}
			return 200, nil, answer("end_turn", text("Sunny in both."))
		},
	)
	f := &toolfmt.Formatter{}
	fs, err := f.FormatAll([]*tool.Tool{{Name: "weather", Type: tool.TypeFunction, Description: "Weather by city", Function: &tool.FunctionDef{Parameters: citySchema}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	temp, maxTok := 0.5, int64(256)
	l, err := loop.New(loop.Config{
		Model: newModel(srv), Tools: fs, AutoRun: true, RunFunctions: true,
		ToolChoice: llm.ToolChoice{Mode: llm.ChoiceRequired},
		Settings:   llm.Settings{Temperature: &temp, MaxTokens: &maxTok},
		Runner: loop.RunnerFunc(func(_ context.Context, c *tool.Call, _ *tool.Tool) tool.Result {
			return tool.ResultOf(c, map[string]any{"city": c.Arguments()["city"], "sky": "sunny"})
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.Run(context.Background(), loop.NewState([]llm.Message{
		{Role: llm.RoleSystem, Content: "Be brief."}, {Role: llm.RoleUser, Content: "Weather in Paris and Oslo?"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if st.FinishReason != llm.FinishStop || st.Iterations != 2 || st.Last().Content != "Sunny in both." {
		t.Errorf("finish %q iterations %d last %+v", st.FinishReason, st.Iterations, st.Last())
	}
	if st.Usage != (llm.Usage{PromptTokens: 40, CompletionTokens: 16, TotalTokens: 56}) {
		t.Errorf("usage = %+v", st.Usage)
	}
	if st.Model != modelID {
		t.Errorf("model = %q", st.Model)
	}
}

func TestFinishReasons(t *testing.T) {
	cases := []struct {
		stop string
		want llm.FinishReason
	}{
		{"end_turn", llm.FinishStop},
		{"stop_sequence", llm.FinishStop},
		{"max_tokens", llm.FinishLength},
		{"model_context_window_exceeded", llm.FinishLength},
		{"guardrail_intervened", llm.FinishContentFilter},
		{"content_filtered", llm.FinishContentFilter},
	}
	for _, tc := range cases {
		t.Run(tc.stop, func(t *testing.T) {
			srv := newServer(t, func(*testing.T, map[string]any) (int, http.Header, any) {
				return 200, nil, answer(tc.stop, text("x"))
			})
			res, err := newModel(srv).Converse(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if res.FinishReason != tc.want {
				t.Errorf("finish = %q, want %q", res.FinishReason, tc.want)
			}
		})
	}
}

func TestErrorsAreTyped(t *testing.T) {
	// Bedrock's own messages for a bare id of a profile-only model and for an ended model.
	const (
		onDemand = "Invocation of model ID anthropic.claude-haiku-4-5-20251001-v1:0 with on-demand throughput isn't supported. Retry your request with the ID or ARN of an inference profile that contains this model."
		ended    = "This model version has reached the end of its life. Please refer to the AWS documentation for more details."
	)
	cases := []struct {
		name   string
		status int
		code   string
		msg    string // Bedrock's message; "msg of <code>" when empty
		want   fault.Kind
		hint   string // what the message adds for the operator
	}{
		{"throttling", 429, "ThrottlingException", "", fault.Transient, ""},
		{"unavailable", 503, "ServiceUnavailableException", "", fault.Transient, ""},
		{"internal", 500, "InternalServerException", "", fault.Transient, ""},
		{"model not ready", 429, "ModelNotReadyException", "", fault.Transient, ""},
		{"unknown 502", 502, "SomethingNew", "", fault.Transient, ""},
		{"access denied", 403, "AccessDeniedException", "", fault.Provider, "aws-marketplace:Subscribe"},
		{"validation", 400, "ValidationException", "", fault.InvalidInput, ""},
		{"model id without its profile", 400, "ValidationException", onDemand, fault.InvalidInput, "geography's prefix, us., eu."},
		{"no such model", 404, "ResourceNotFoundException", "", fault.Provider, ""},
		{"ended model", 404, "ResourceNotFoundException", ended, fault.Provider, "Choose a current one (SINEW_MODEL=bedrock:<id>)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := tc.msg
			if msg == "" {
				msg = "msg of " + tc.code
			}
			srv := newServer(t, func(*testing.T, map[string]any) (int, http.Header, any) {
				return tc.status, http.Header{"X-Amzn-Errortype": {tc.code}}, map[string]any{"message": msg}
			})
			_, err := newModel(srv).Converse(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			if fault.KindOf(err) != tc.want {
				t.Fatalf("kind = %s (%v), want %s", fault.KindOf(err), err, tc.want)
			}
			if !strings.Contains(fault.Message(err), msg) || !strings.Contains(fault.Message(err), tc.hint) {
				t.Errorf("message %q should carry Bedrock's and %q", fault.Message(err), tc.hint)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		srv := newServer(t)
		srv.Close()
		_, err := newModel(srv).Converse(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		// What is wrong and which settings choose another model (local mode has no Bedrock).
		msg := fault.Message(err)
		if fault.KindOf(err) != fault.Transient || !strings.Contains(msg, "Bedrock could not be reached (") || !strings.Contains(msg, "connection refused") ||
			!strings.Contains(msg, "SINEW_MODEL=openai:<model> with SINEW_OPENAI_BASE_URL") || !strings.Contains(msg, "scripted:<file>") {
			t.Fatalf("err = %v (kind %s), want Transient saying what is wrong and which setting fixes it", err, fault.KindOf(err))
		}
	})
	t.Run("credentials refused", func(t *testing.T) {
		srv := newServer(t, func(*testing.T, map[string]any) (int, http.Header, any) {
			return 403, http.Header{"X-Amzn-Errortype": {"UnrecognizedClientException"}}, map[string]any{"message": "The security token included in the request is invalid."}
		})
		_, err := newModel(srv).Converse(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		if msg := fault.Message(err); fault.KindOf(err) != fault.Provider || !strings.Contains(msg, "refused the AWS credentials") || !strings.Contains(msg, "SINEW_MODEL=openai:<model>") {
			t.Fatalf("err = %v (kind %s), want Provider naming the credentials and the settings", err, fault.KindOf(err))
		}
	})
}

func TestBadConversationsAreRefusedBeforeSending(t *testing.T) {
	cases := []struct {
		name  string
		msgs  []llm.Message
		field string
	}{
		{"assistant first", []llm.Message{{Role: llm.RoleAssistant, Content: "hi"}}, "messages"},
		{"empty user", []llm.Message{{Role: llm.RoleUser}}, "messages[0].content"},
		{"bad role", []llm.Message{{Role: "robot", Content: "x"}}, "messages[0].role"},
		{"bad arguments", []llm.Message{{Role: llm.RoleUser, Content: "x"}, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Arguments: "[1]"}}}}, "messages[1].tool_calls[0].function.arguments"},
	}
	srv := newServer(t) // any request fails the test
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newModel(srv).Converse(context.Background(), llm.Request{Messages: tc.msgs})
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field {
				t.Errorf("err = %v (field %q), want InvalidInput on %s", err, fault.FieldOf(err), tc.field)
			}
		})
	}
}

// history is a conversation whose last turn called weather twice: one call failed.
var history = []llm.Message{
	{Role: llm.RoleUser, Content: "Weather in Paris and Oslo?"},
	{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "tu_1", Name: "weather", Arguments: `{"city":"Paris"}`}, {ID: "tu_2", Name: "weather", Arguments: `{"city":"Oslo"}`}}},
	{Role: llm.RoleTool, ToolCallID: "tu_1", Name: "weather", Content: `{"sky":"sunny"}`},
	{Role: llm.RoleTool, ToolCallID: "tu_2", Name: "weather", Content: `{"error":"the API at x.test answered 503","type":"Sinew.Transient"}`},
}

func TestToolChoiceBranches(t *testing.T) {
	weather := []llm.Function{{Name: "weather", Description: "Weather by city", Parameters: citySchema}}
	cases := []struct {
		name   string
		msgs   []llm.Message
		choice llm.ToolChoice
		check  func(t *testing.T, req map[string]any)
	}{
		{"none, no tool blocks in the history: no tools declared", history[:1], llm.ToolChoice{Mode: llm.ChoiceNone},
			func(t *testing.T, req map[string]any) {
				if _, ok := req["toolConfig"]; ok {
					t.Errorf("toolConfig sent with none: %s", js(req["toolConfig"]))
				}
			}},
		{"none, tool blocks in the history: no tools declared, the history as text", history, llm.ToolChoice{Mode: llm.ChoiceNone},
			func(t *testing.T, req map[string]any) {
				if _, ok := req["toolConfig"]; ok {
					t.Errorf("toolConfig sent with none: %s", js(req["toolConfig"]))
				}
				got := js(req["messages"])
				if strings.Contains(got, "toolUse") || strings.Contains(got, "toolResult") {
					t.Errorf("tool blocks sent without a toolConfig: %s", got)
				}
				for _, want := range []string{`[called the tool weather (call tu_1) with {\"city\":\"Paris\"}]`, `[the result of call tu_2: {\"error\"`} {
					if !strings.Contains(got, want) {
						t.Errorf("messages %s lack %s", got, want)
					}
				}
			}},
		{"named: that tool forced", history[:1], llm.ToolChoice{Mode: llm.ChoiceNamed, Name: "weather"},
			func(t *testing.T, req map[string]any) {
				tc, _ := req["toolConfig"].(map[string]any)
				if js(tc["toolChoice"]) != `{"tool":{"name":"weather"}}` || len(tc["tools"].([]any)) != 1 {
					t.Errorf("toolConfig = %s, want the weather tool forced", js(tc))
				}
			}},
		{"auto with tool blocks: a failed result has status error, a good one none", history, llm.ToolChoice{Mode: llm.ChoiceAuto},
			func(t *testing.T, req map[string]any) {
				tc, _ := req["toolConfig"].(map[string]any)
				if _, forced := tc["toolChoice"]; forced || len(tc["tools"].([]any)) != 1 {
					t.Errorf("toolConfig = %s, want the tool with auto", js(tc))
				}
				results := req["messages"].([]any)[2].(map[string]any)["content"].([]any)
				ok, failed := results[0].(map[string]any)["toolResult"].(map[string]any), results[1].(map[string]any)["toolResult"].(map[string]any)
				if _, has := ok["status"]; has || failed["status"] != "error" {
					t.Errorf("results = %s, want status error on tu_2 only", js(results))
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(t *testing.T, req map[string]any) (int, http.Header, any) {
				tc.check(t, req)
				return 200, nil, answer("end_turn", text("ok"))
			})
			if _, err := newModel(srv).Converse(context.Background(), llm.Request{Messages: tc.msgs, Tools: weather, ToolChoice: tc.choice}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
