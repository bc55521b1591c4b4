package llm_test

import (
	"encoding/json"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
)

func TestMessageJSON(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want llm.Message
		out  string
	}{
		{
			name: "assistant with tool calls",
			in:   `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`,
			want: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}}},
			out:  `{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`,
		},
		{
			name: "content parts",
			in:   `{"role":"user","content":[{"type":"text","text":"Hello, "},{"type":"text","text":"world"}]}`,
			want: llm.Message{Role: llm.RoleUser, Content: "Hello, world"},
			out:  `{"role":"user","content":"Hello, world"}`,
		},
		{
			name: "tool message",
			in:   `{"role":"tool","tool_call_id":"c1","name":"f","content":"42"}`,
			want: llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Name: "f", Content: "42"},
			out:  `{"role":"tool","content":"42","tool_call_id":"c1","name":"f"}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m llm.Message
			if err := json.Unmarshal([]byte(tc.in), &m); err != nil {
				t.Fatal(err)
			}
			if got, want := mustJSON(m), mustJSON(tc.want); got != want {
				t.Errorf("decoded %s, want %s", got, want)
			}
			if got := mustJSON(m); got != tc.out {
				t.Errorf("encoded %s, want %s", got, tc.out)
			}
		})
	}
	for _, bad := range []string{
		`{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}`,
		`{"role":"user","content":42}`,
		`{"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{}}]}`,
	} {
		var m llm.Message
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestParseSettings(t *testing.T) {
	v, err := jsonv.DecodeString(`{"temperature":0.2,"max_tokens":100,"top_p":1,"stop":"END","seed":7,"frequency_penalty":null}`)
	if err != nil {
		t.Fatal(err)
	}
	s, err := llm.ParseSettings("settings", v.(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(s); got != `{"temperature":0.2,"max_tokens":100,"top_p":1,"stop":["END"],"seed":7}` {
		t.Errorf("settings = %s", got)
	}
	cases := []struct {
		in    string
		field string
	}{
		{`{"temperature":3}`, "settings.temperature"},
		{`{"temperature":"hot"}`, "settings.temperature"},
		{`{"max_tokens":1.5}`, "settings.max_tokens"},
		{`{"max_tokens":0}`, "settings.max_tokens"},
		{`{"stop":["a",1]}`, "settings.stop[1]"},
		{`{"stop":["a","b","c","d","e"]}`, "settings.stop"},
		{`{"top_k":5}`, "settings.top_k"},
	}
	for _, tc := range cases {
		v, _ := jsonv.DecodeString(tc.in)
		_, err := llm.ParseSettings("settings", v.(map[string]any))
		if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field {
			t.Errorf("%s: err = %v (field %q), want InvalidInput on %s", tc.in, err, fault.FieldOf(err), tc.field)
		}
	}
}

func TestParseToolChoice(t *testing.T) {
	cases := []struct {
		in   string
		want llm.ToolChoice
	}{
		{`null`, llm.ToolChoice{Mode: llm.ChoiceAuto}},
		{`"auto"`, llm.ToolChoice{Mode: llm.ChoiceAuto}},
		{`"none"`, llm.ToolChoice{Mode: llm.ChoiceNone}},
		{`"required"`, llm.ToolChoice{Mode: llm.ChoiceRequired}},
		{`{"function":{"name":"f"}}`, llm.ToolChoice{Mode: llm.ChoiceNamed, Name: "f"}},
		{`{"type":"function","function":{"name":"g"}}`, llm.ToolChoice{Mode: llm.ChoiceNamed, Name: "g"}},
	}
	for _, tc := range cases {
		v, _ := jsonv.DecodeString(tc.in)
		got, err := llm.ParseToolChoice("tool_choice", v)
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`"sometimes"`, `{"function":{}}`, `{"type":"custom","function":{"name":"f"}}`, `3`} {
		v, _ := jsonv.DecodeString(bad)
		if _, err := llm.ParseToolChoice("tool_choice", v); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("%s: err = %v, want InvalidInput", bad, err)
		}
	}
}

func TestFinish(t *testing.T) {
	withCalls := llm.Message{ToolCalls: []llm.ToolCall{{ID: "a", Name: "f"}}}
	cases := []struct {
		msg      llm.Message
		reported llm.FinishReason
		want     llm.FinishReason
	}{
		{withCalls, llm.FinishStop, llm.FinishToolCalls}, // Ollama and others say stop with calls
		{withCalls, llm.FinishLength, llm.FinishLength},
		{llm.Message{}, llm.FinishToolCalls, llm.FinishStop},
		{llm.Message{}, llm.FinishContentFilter, llm.FinishContentFilter},
	}
	for _, tc := range cases {
		if got := llm.Finish(tc.msg, tc.reported); got != tc.want {
			t.Errorf("Finish(%d calls, %s) = %s, want %s", len(tc.msg.ToolCalls), tc.reported, got, tc.want)
		}
	}
}

func TestIsErrorResult(t *testing.T) {
	for content, want := range map[string]bool{
		`{"error":"Tool 'x' not found"}`:                     true,
		`{"error":"HTTP 503","type":"Sinew.Transient"}`:      true,
		`{"error":"x","type":"Sinew.Timeout","extra":1}`:     false, // an output that happens to hold error
		`{"error":{"code":1}}`:                               false,
		`{"status_code":200,"json":{"error":"in the body"}}`: false,
		`"error"`:  false,
		`not json`: false,
		``:         false,
	} {
		if got := llm.IsErrorResult(content); got != want {
			t.Errorf("IsErrorResult(%s) = %v, want %v", content, got, want)
		}
	}
}
