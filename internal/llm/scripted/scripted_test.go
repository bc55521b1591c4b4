package scripted_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/llm"
	"sinew/internal/llm/scripted"
	"sinew/internal/loop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/tool"
)

// eventsDir is the repository's events/models, found from this file.
func eventsDir(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "events", "models")
}

type dummyOnly struct{}

func (dummyOnly) ToolSchema(provider, method, name string) (integrations.Function, error) {
	return integrations.Function{Name: name, Description: "echo", Parameters: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}, nil
}

// The demo script plays a whole chat: one turn with an integration call and a function call (which
// the loop hands back), the caller's answer, and the final reply.
func TestDemoScriptPlaysThroughTheLoop(t *testing.T) {
	m, err := scripted.Load(filepath.Join(eventsDir(t), "echo_demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := (&toolfmt.Formatter{Integrations: dummyOnly{}}).FormatAll([]*tool.Tool{
		{Name: "echo", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "dummy"}},
		{Name: "ask_user", Type: tool.TypeFunction, Function: &tool.FunctionDef{}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	l, err := loop.New(loop.Config{Model: m, Tools: fs, AutoRun: true, Runner: loop.RunnerFunc(func(_ context.Context, c *tool.Call, def *tool.Tool) tool.Result {
		ran = append(ran, def.Name)
		return tool.ResultOf(c, c.Arguments())
	})})
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.Run(context.Background(), loop.NewState([]llm.Message{{Role: llm.RoleUser, Content: "Please echo hello"}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pending) != 1 || st.Pending[0].Tool != "ask_user" || len(ran) != 1 || ran[0] != "echo" {
		t.Fatalf("pending %+v ran %v", st.Pending, ran)
	}
	if !st.Scripted || st.Model != scripted.Name {
		t.Errorf("replies must be marked scripted: model %q scripted %v", st.Model, st.Scripted)
	}
	st.Messages = append(st.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: st.Pending[0].ModelCallID, Content: "yes"})
	next := loop.NewState(st.Messages)
	if _, err := l.Run(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	if next.FinishReason != llm.FinishStop || !strings.Contains(next.Last().Content, "hello hello") {
		t.Errorf("finish %q last %+v", next.FinishReason, next.Last())
	}
	if next.Usage != (llm.Usage{PromptTokens: 80, CompletionTokens: 14, TotalTokens: 94}) {
		t.Errorf("usage = %+v", next.Usage)
	}
}

func TestScriptChecks(t *testing.T) {
	user := []llm.Message{{Role: llm.RoleUser, Content: "hello there"}}
	cases := []struct {
		name   string
		script string
		msgs   []llm.Message
		kind   fault.Kind
		msg    string
	}{
		{"expectation not met", `{"turns":[{"expect":{"contains":"weather"},"reply":{"content":"x"}}]}`, user, fault.Provider, `turn 0: expected the last message to contain "weather"`},
		{"tool not offered", `{"turns":[{"expect":{"tools":["weather"]},"reply":{"content":"x"}}]}`, user, fault.Provider, `expected tool "weather" to be offered`},
		{"past the script", `{"turns":[{"reply":{"content":"x"}}]}`, append(user, llm.Message{Role: llm.RoleAssistant, Content: "x"}, llm.Message{Role: llm.RoleUser, Content: "more"}), fault.Provider, "only 1 turns"},
		{"scripted error", `{"turns":[{"error":{"type":"Sinew.Transient","message":"throttled"}}]}`, user, fault.Transient, "throttled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := scripted.Parse([]byte(tc.script))
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Converse(context.Background(), llm.Request{Messages: tc.msgs})
			if fault.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v (%s), want %s containing %q", err, fault.KindOf(err), tc.kind, tc.msg)
			}
		})
	}
}

func TestBadScriptsAreRefused(t *testing.T) {
	for _, s := range []string{
		`{"turns":[]}`,
		`{"turns":[{"reply":{"content":"x"},"error":{"type":"Sinew.Provider"}}]}`,
		`{"turns":[{"reply":{"content":"x","tool_calls":[{"name":"f"}]}}]}`,
		`{"turns":[{"expect":{"containz":"x"},"reply":{"content":"x"}}]}`,
	} {
		if _, err := scripted.Parse([]byte(s)); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("%s: err = %v, want InvalidInput", s, err)
		}
	}
}

func TestBrokenArgumentsArePlayedAsText(t *testing.T) {
	m, err := scripted.Parse([]byte(`{"turns":[{"reply":{"content":"","tool_calls":[{"id":"a","name":"f","arguments":"{\"x\":"}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Converse(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.ToolCalls[0].Arguments != `{"x":` || res.FinishReason != llm.FinishToolCalls {
		t.Errorf("res = %+v", res)
	}
}
