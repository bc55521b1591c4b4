package loop_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/tool"
)

// A turn whose model call ran: the model asked for weather in Paris and Oslo and for the user.
func plannedTurn(t *testing.T, mod func(*loop.Config)) (*loop.Loop, *loop.State, []*tool.Call) {
	t.Helper()
	srv := newOAServer(t, reply(completion("", "tool_calls",
		toolCall("tc_paris", "weather", `{"city":"Paris"}`),
		toolCall("tc_oslo", "weather", `{"city":"Oslo"}`),
		toolCall("tc_ask", "ask_user", `{"question":"which day?"}`),
		toolCall("tc_nope", "nope", `{}`))))
	l := newLoop(t, srv, nil, mod)
	st := loop.NewState(userMessages("weather?"))
	if err := l.Prompt(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	calls, _ := l.ToRun(st)
	return l, st, calls
}

// refs is a Resolve over an in-memory store of values by reference.
type refs map[string]any

func (r refs) resolve(_ context.Context, v any) (any, error) {
	m := v.(map[string]any)
	out, ok := r[m["sinew:ref"].(string)]
	if !ok {
		return nil, fault.New(fault.Transient, "the store is busy")
	}
	return out, nil
}

func ref(id string, n int) map[string]any { return map[string]any{"sinew:ref": id, "bytes": int64(n)} }

func TestOutputsByReferenceReachTheModelAsValues(t *testing.T) {
	big := strings.Repeat("é", loop.MaxToolContent) // 2 bytes a rune: twice the bound
	store := refs{"r-small": map[string]any{"forecast": "sunny", "pad": strings.Repeat("x", 40<<10)}, "r-big": big}
	cases := []struct {
		name    string
		output  any
		resolve bool
		check   func(t *testing.T, content string)
	}{
		{"a stored value is read back", ref("r-small", 41000), true, func(t *testing.T, c string) {
			if !strings.Contains(c, `"forecast":"sunny"`) || strings.Contains(c, "sinew:ref") {
				t.Errorf("content %.80q..., want the stored value", c)
			}
		}},
		{"a long one is cut with a marker naming it", ref("r-big", len(big)+2), true, func(t *testing.T, c string) {
			if len(c) > loop.MaxToolContent+200 || !strings.HasPrefix(c, "éé") {
				t.Errorf("content of %d bytes, want at most the bound and the marker", len(c))
			}
			want := "[sinew: output truncated: the first 131072 of 262144 bytes; the whole output is the stored value r-big (GET /payloads/r-big)]"
			if !strings.HasSuffix(c, want) {
				t.Errorf("content ends %q, want the marker %q", c[len(c)-150:], want)
			}
		}},
		{"without a resolver the reference is shown", ref("r-small", 41000), false, func(t *testing.T, c string) {
			if !strings.Contains(c, `"sinew:ref":"r-small"`) {
				t.Errorf("content %q", c)
			}
		}},
		{"an inline value over the bound is cut too", strings.Repeat("a", loop.MaxToolContent+10), true, func(t *testing.T, c string) {
			if !strings.HasSuffix(c, "[sinew: output truncated: the first 131072 of 131082 bytes]") {
				t.Errorf("content ends %q", c[len(c)-80:])
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, st, calls := plannedTurn(t, func(cfg *loop.Config) {
				cfg.RunFunctions = true
				if c.resolve {
					cfg.Resolve = store.resolve
				}
			})
			var results []tool.Result
			for _, call := range calls {
				results = append(results, tool.ResultOf(call, c.output))
			}
			if err := l.Feed(context.Background(), st, results); err != nil {
				t.Fatal(err)
			}
			for _, m := range st.Messages {
				if m.Role == llm.RoleTool && m.ToolCallID == "tc_paris" {
					c.check(t, m.Content)
				}
			}
			// The results keep the output as it travels (the reference), for the caller.
			if got := st.Results[0].Output; !sameJSON(got, c.output) {
				t.Errorf("result output %.80v, want it as given", got)
			}
		})
	}
}

func sameJSON(a, b any) bool { return mustJSON(a) == mustJSON(b) }

func TestFeedLeavesTheStateWhenAnOutputCannotBeRead(t *testing.T) {
	l, st, calls := plannedTurn(t, func(c *loop.Config) { c.RunFunctions = true; c.Resolve = refs{}.resolve })
	before := len(st.Messages)
	var results []tool.Result
	for _, call := range calls {
		results = append(results, tool.ResultOf(call, ref("r-gone", 40000)))
	}
	err := l.Feed(context.Background(), st, results)
	if !fault.Is(err, fault.Transient) || len(st.Messages) != before || len(st.Turn) != 4 {
		t.Fatalf("err %v, %d messages (want %d), turn %d: want a Transient error and the state as it was", err, len(st.Messages), before, len(st.Turn))
	}
}

// The chat's budget runs out while the turn's tools run: what finished is fed, the rest is kept
// for agent_loop, which adopts it under the same call ids and finishes the turn.
func TestFeedPartialThenAdopt(t *testing.T) {
	l, st, calls := plannedTurn(t, nil) // the chat: function calls pending
	if len(calls) != 2 {
		t.Fatalf("%d calls to run, want the two weather calls", len(calls))
	}
	paris, oslo := calls[0], calls[1]
	if err := l.FeedPartial(context.Background(), st, []tool.Result{tool.ResultOf(paris, "sunny")}); err != nil {
		t.Fatal(err)
	}
	answered := map[string]string{}
	for _, m := range st.Messages {
		if m.Role == llm.RoleTool {
			answered[m.ToolCallID] = m.Content
		}
	}
	if len(answered) != 2 || answered["tc_paris"] != "sunny" || !strings.Contains(answered["tc_nope"], "not found") {
		t.Fatalf("tool messages %v, want Paris's result and the unknown tool's error", answered)
	}
	if st.Done || len(st.Turn) != 2 || st.Turn[0].ModelCallID != "tc_oslo" || st.Turn[1].ModelCallID != "tc_ask" {
		t.Fatalf("done %v, turn %+v: want Oslo and the pending question kept", st.Done, st.Turn)
	}
	if got := loop.Unanswered(st.Messages); strings.Join(got, ",") != "tc_oslo,tc_ask" {
		t.Fatalf("unanswered %v", got)
	}
	var handed []tool.Call
	for _, p := range st.Turn {
		handed = append(handed, *p.Call)
	}

	// agent_loop: a fresh state over the same messages (as stored), function calls run.
	srv := newOAServer(t, func(t *testing.T, req map[string]any) (int, any) {
		got := toolMessages(req)
		if got["tc_paris"] != "sunny" || got["tc_oslo"] != "rainy" || got["tc_ask"] != "Tuesday" {
			t.Errorf("tool messages %v", got)
		}
		return 200, completion("Tuesday: sunny in Paris, rainy in Oslo.", "stop")
	})
	al := newLoop(t, srv, nil, func(c *loop.Config) { c.RunFunctions = true; c.MaxIterations = 3 })
	next := loop.NewState(append([]llm.Message(nil), st.Messages...))
	if err := al.Adopt(next, handed); err != nil {
		t.Fatal(err)
	}
	run, _ := al.ToRun(next)
	if len(run) != 2 || run[0].ID != oslo.ID || next.Iterations != 1 {
		t.Fatalf("to run %v (want Oslo under %s, then the question), iterations %d", run, oslo.ID, next.Iterations)
	}
	results := []tool.Result{tool.ResultOf(run[0], "rainy"), tool.ResultOf(run[1], "Tuesday")}
	if err := al.Feed(context.Background(), next, results); err != nil {
		t.Fatal(err)
	}
	if err := al.Step(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	if !next.Done || next.FinishReason != llm.FinishStop || next.Iterations != 2 {
		t.Errorf("done %v finish %q iterations %d", next.Done, next.FinishReason, next.Iterations)
	}
}

func TestAdoptRefusesATurnThatDoesNotFit(t *testing.T) {
	l, st, calls := plannedTurn(t, nil)
	if err := l.FeedPartial(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	oslo := *calls[1]
	ask := *st.Turn[2].Call
	paris := *calls[0]
	stranger := tool.NewCall(&tool.Tool{Name: "weather", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "weather"}}, tool.NewCallID(), map[string]any{})
	stranger.ModelCallID = "tc_other"
	cases := []struct {
		name  string
		calls []tool.Call
		field string
	}{
		{"a call left out", []tool.Call{oslo, ask}, "turn"},
		{"a call the message did not ask for", []tool.Call{paris, oslo, ask, stranger}, "turn[3].model_call_id"},
		{"a broken envelope", []tool.Call{{ID: "x", ModelCallID: "tc_paris"}}, "turn[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			al := newLoop(t, newOAServer(t), nil, func(c *loop.Config) { c.RunFunctions = true })
			next := loop.NewState(append([]llm.Message(nil), st.Messages...))
			err := al.Adopt(next, c.calls)
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != fault.InvalidInput || (c.field != "turn[0]" && fault.FieldOf(err) != c.field) {
				t.Fatalf("err %v (field %q), want InvalidInput on %s", err, fault.FieldOf(err), c.field)
			}
			if len(next.Turn) != 0 || next.Iterations != 0 {
				t.Errorf("a refused turn changed the state")
			}
		})
	}
	// A tool that is gone by the time agent_loop runs becomes the error the model sees.
	al := newLoop(t, newOAServer(t), nil, func(c *loop.Config) { c.RunFunctions = true; c.Tools = c.Tools[1:] })
	next := loop.NewState(append([]llm.Message(nil), st.Messages...))
	if err := al.Adopt(next, []tool.Call{paris, oslo, ask}); err != nil {
		t.Fatal(err)
	}
	if run, _ := al.ToRun(next); len(run) != 1 || run[0].ID != ask.ID {
		t.Fatalf("to run %v, want only the question", run)
	}
	if err := al.Feed(context.Background(), next, []tool.Result{tool.ResultOf(&ask, "x")}); err != nil {
		t.Fatal(err)
	}
	if got := toolContent(next.Messages, "tc_oslo"); !strings.Contains(got, "Tool 'weather' not found") {
		t.Errorf("Oslo's message %q, want the tool not found", got)
	}
}

func toolContent(msgs []llm.Message, id string) string {
	for _, m := range msgs {
		if m.Role == llm.RoleTool && m.ToolCallID == id {
			return m.Content
		}
	}
	return ""
}
