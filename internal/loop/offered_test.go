package loop_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/loop"
)

// TestToolsNotOfferedNeverRun: a model that calls a tool the reply did not offer (tool_choice none
// offers none; a named choice only that tool) gets an error result, and the tool never runs.
func TestToolsNotOfferedNeverRun(t *testing.T) {
	cases := []struct {
		name   string
		choice llm.ToolChoice
		calls  []map[string]any
		ran    []string // the tools that run
		denied []string // the model call ids answered as not offered
	}{
		{"none", llm.ToolChoice{Mode: llm.ChoiceNone},
			[]map[string]any{toolCall("tc_1", "weather", `{"location":"Paris"}`)}, nil, []string{"tc_1"}},
		{"named", llm.ToolChoice{Mode: llm.ChoiceNamed, Name: "weather"},
			[]map[string]any{toolCall("tc_1", "weather", `{"location":"Paris"}`), toolCall("tc_2", "status", `{}`)}, []string{"weather"}, []string{"tc_2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newOAServer(t,
				reply(completion("", "tool_calls", tc.calls...)),
				func(t *testing.T, req map[string]any) (int, any) {
					got := toolMessages(req)
					for _, id := range tc.denied {
						var e map[string]string
						if err := json.Unmarshal([]byte(got[id]), &e); err != nil || e["type"] != string(fault.Forbidden) || !strings.Contains(e["error"], "not offered") {
							t.Errorf("call %s answered %q, want a not-offered error", id, got[id])
						}
					}
					return 200, completion("Done.", "stop")
				},
			)
			rec := &recorder{}
			_, err := newLoop(t, srv, rec, func(c *loop.Config) { c.ToolChoice = tc.choice }).Run(context.Background(), loop.NewState(userMessages("Weather?")))
			if err != nil {
				t.Fatal(err)
			}
			var ran []string
			for i := range rec.calls {
				c := &rec.calls[i]
				ran = append(ran, c.Name())
			}
			if strings.Join(ran, ",") != strings.Join(tc.ran, ",") {
				t.Errorf("ran %v, want %v", ran, tc.ran)
			}
		})
	}
}
