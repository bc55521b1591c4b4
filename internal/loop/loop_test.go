package loop_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/llm/openai"
	"sinew/internal/loop"
	"sinew/internal/tool"
)

func newLoop(t *testing.T, srv *oaServer, r loop.Runner, mod func(*loop.Config)) *loop.Loop {
	t.Helper()
	cfg := loop.Config{
		Model:   openai.New("test-model", openai.Options{BaseURL: srv.URL + "/v1", APIKey: "sk-test"}),
		Runner:  r,
		Tools:   toolset(t),
		AutoRun: true,
	}
	if mod != nil {
		mod(&cfg)
	}
	l, err := loop.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestMultiTurnWithParallelCalls(t *testing.T) {
	srv := newOAServer(t,
		func(t *testing.T, req map[string]any) (int, any) {
			// The tools go out by their own names, with their schemas.
			var names []string
			for _, x := range req["tools"].([]any) {
				fn := x.(map[string]any)["function"].(map[string]any)
				names = append(names, fn["name"].(string))
				if fn["name"] == "weather" {
					if got := mustJSON(fn["parameters"]); got != mustJSON(weatherSchema) {
						t.Errorf("weather parameters = %s", got)
					}
				}
			}
			if want := []string{"weather", "status", "ask_user"}; !slices.Equal(names, want) {
				t.Errorf("tools = %v, want %v", names, want)
			}
			if len(messagesOf(req)) != 2 {
				t.Errorf("first request has %d messages, want 2", len(messagesOf(req)))
			}
			return 200, completion("", "tool_calls",
				toolCall("tc_paris", "weather", `{"city":"Paris"}`),
				toolCall("tc_oslo", "weather", `{"city":"Oslo"}`),
				toolCall("tc_status", "status", ``))
		},
		func(t *testing.T, req map[string]any) (int, any) {
			msgs := messagesOf(req)
			asst := msgs[2]
			if asst["role"] != "assistant" || len(asst["tool_calls"].([]any)) != 3 {
				t.Errorf("the assistant's tool calls are not sent back: %v", asst)
			}
			got := toolMessages(req)
			want := map[string]string{
				"tc_paris":  `{"echo":{"city":"Paris"}}`,
				"tc_oslo":   `{"echo":{"city":"Oslo"}}`,
				"tc_status": `{"echo":{}}`,
			}
			if mustJSON(got) != mustJSON(want) {
				t.Errorf("tool messages = %v, want %v", got, want)
			}
			return 200, completion("Checking again.", "tool_calls", toolCall("tc_again", "weather", `{"city":"Rome"}`))
		},
		func(t *testing.T, req map[string]any) (int, any) {
			if got := toolMessages(req)["tc_again"]; got != `{"echo":{"city":"Rome"}}` {
				t.Errorf("second turn's result = %q", got)
			}
			return 200, completion("Sunny everywhere.", "stop")
		},
	)
	rec := &recorder{barrier: make(chan struct{}), wait: 3}
	l := newLoop(t, srv, rec, nil)
	st, err := l.Run(context.Background(), loop.NewState(userMessages("Weather in Paris and Oslo?")))
	if err != nil {
		t.Fatal(err)
	}
	if st.FinishReason != llm.FinishStop || !st.Done || st.Iterations != 3 {
		t.Errorf("finish %q done %v iterations %d", st.FinishReason, st.Done, st.Iterations)
	}
	if st.Usage != (llm.Usage{PromptTokens: 30, CompletionTokens: 15, TotalTokens: 45}) {
		t.Errorf("usage = %+v, want the sum of three calls", st.Usage)
	}
	if rec.peak.Load() < 3 {
		t.Errorf("at most %d calls ran at once; the turn's three calls must run concurrently", rec.peak.Load())
	}
	if st.Last().Content != "Sunny everywhere." {
		t.Errorf("last message = %+v", st.Last())
	}
	if len(st.Results) != 4 {
		t.Fatalf("results = %d, want 4", len(st.Results))
	}
	models := map[string]bool{}
	for _, c := range rec.calls {
		if !tool.ValidCallID(c.ID) || c.ModelCallID == "" || c.ModelCallID == c.ID {
			t.Errorf("envelope %+v: want a sinew id and the model's id apart", c)
		}
		models[c.ModelCallID] = true
	}
	if len(models) != 4 {
		t.Errorf("model call ids = %v", models)
	}
	for _, r := range st.Results {
		if !tool.ValidCallID(r.ID) || r.Error != nil {
			t.Errorf("result %+v", r)
		}
	}
	if auth := srv.auth[0]; auth != "Bearer sk-test" {
		t.Errorf("Authorization = %q", auth)
	}
}

func TestUnknownToolAndBadArgumentsAreFedBack(t *testing.T) {
	srv := newOAServer(t,
		reply(completion("", "tool_calls",
			toolCall("tc_x", "teleport", `{"to":"Mars"}`),
			toolCall("tc_bad", "weather", `{"city": "Paris"`),
			toolCall("tc_list", "weather", `["Paris"]`))),
		func(t *testing.T, req map[string]any) (int, any) {
			got := toolMessages(req)
			if got["tc_x"] != `{"error":"Tool 'teleport' not found"}` {
				t.Errorf("unknown tool message = %q", got["tc_x"])
			}
			for _, id := range []string{"tc_bad", "tc_list"} {
				var e map[string]string
				if err := json.Unmarshal([]byte(got[id]), &e); err != nil || e["type"] != string(fault.InvalidInput) || !strings.Contains(e["error"], "weather") {
					t.Errorf("bad arguments message %s = %q", id, got[id])
				}
			}
			return 200, completion("Sorry.", "stop")
		},
	)
	rec := &recorder{}
	st, err := newLoop(t, srv, rec, nil).Run(context.Background(), loop.NewState(userMessages("Go to Mars")))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 0 || len(st.Results) != 0 {
		t.Errorf("nothing should run: calls %d results %d", len(rec.calls), len(st.Results))
	}
	if st.FinishReason != llm.FinishStop {
		t.Errorf("finish = %q", st.FinishReason)
	}
}

func TestExecutorErrorIsAResultTheModelSees(t *testing.T) {
	srv := newOAServer(t,
		reply(completion("", "tool_calls", toolCall("tc_1", "status", `{}`))),
		func(t *testing.T, req map[string]any) (int, any) {
			want := `{"error":"status answered HTTP 503","type":"Sinew.Transient"}`
			if got := toolMessages(req)["tc_1"]; got != want {
				t.Errorf("tool message = %q, want %q", got, want)
			}
			return 200, completion("The status page is down.", "stop")
		},
	)
	rec := &recorder{answer: func(c *tool.Call) tool.Result {
		return tool.ErrorResult(c, string(fault.Transient), "status answered HTTP 503")
	}}
	st, err := newLoop(t, srv, rec, nil).Run(context.Background(), loop.NewState(userMessages("Is it up?")))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Results) != 1 || st.Results[0].Error == nil || st.Results[0].Name != "status" {
		t.Errorf("results = %+v", st.Results)
	}
}

func TestIterationCap(t *testing.T) {
	always := reply(completion("", "tool_calls", toolCall("tc", "weather", `{"city":"Paris"}`)))
	srv := newOAServer(t, always, always)
	rec := &recorder{}
	st, err := newLoop(t, srv, rec, func(c *loop.Config) { c.MaxIterations = 2 }).Run(context.Background(), loop.NewState(userMessages("loop")))
	if err != nil {
		t.Fatal(err)
	}
	if st.FinishReason != loop.FinishIterationCap || st.Iterations != 2 || len(srv.requests()) != 2 {
		t.Errorf("finish %q iterations %d requests %d", st.FinishReason, st.Iterations, len(srv.requests()))
	}
	if len(rec.calls) != 2 {
		t.Errorf("the last turn's calls run too: %d runs, want 2", len(rec.calls))
	}
	if ids := loop.Unanswered(st.Messages); len(ids) != 0 {
		t.Errorf("the conversation is left with unanswered calls %v", ids)
	}
}

func TestAutoRunFalseReturnsCallsUnexecuted(t *testing.T) {
	srv := newOAServer(t, func(t *testing.T, req map[string]any) (int, any) {
		if len(req["tools"].([]any)) != 3 {
			t.Errorf("the tools are still shown: %v", req["tools"])
		}
		return 200, completion("", "tool_calls",
			toolCall("tc_w", "weather", `{"city":"Paris"}`),
			toolCall("tc_q", "ask_user", `{"question":"Which day?"}`))
	})
	rec := &recorder{}
	st, err := newLoop(t, srv, rec, func(c *loop.Config) { c.AutoRun = false }).Run(context.Background(), loop.NewState(userMessages("weather?")))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 0 {
		t.Errorf("%d calls ran with auto_run_tools false", len(rec.calls))
	}
	if st.FinishReason != llm.FinishToolCalls || len(st.Pending) != 2 || len(st.Results) != 0 {
		t.Fatalf("finish %q pending %+v results %+v", st.FinishReason, st.Pending, st.Results)
	}
	p := st.Pending[0]
	if p.ModelCallID != "tc_w" || p.Tool != "weather" || p.Type != tool.TypeIntegration || !tool.ValidCallID(p.CallID) || mustJSON(p.Arguments) != `{"city":"Paris"}` {
		t.Errorf("pending[0] = %+v", p)
	}
	if len(st.Last().ToolCalls) != 2 {
		t.Errorf("the assistant message keeps its calls: %+v", st.Last())
	}
}

func TestFunctionCallsArePendingAndResume(t *testing.T) {
	srv := newOAServer(t,
		reply(completion("", "tool_calls",
			toolCall("tc_w", "weather", `{"city":"Paris"}`),
			toolCall("tc_q", "ask_user", `{"question":"Which day?"}`))),
		func(t *testing.T, req map[string]any) (int, any) {
			got := toolMessages(req)
			if got["tc_w"] != `{"echo":{"city":"Paris"}}` || got["tc_q"] != "Tuesday" {
				t.Errorf("resumed request's tool messages = %v", got)
			}
			return 200, completion("Tuesday in Paris: sunny.", "stop")
		},
	)
	rec := &recorder{}
	l := newLoop(t, srv, rec, nil)
	st, err := l.Run(context.Background(), loop.NewState(userMessages("weather?")))
	if err != nil {
		t.Fatal(err)
	}
	if st.FinishReason != llm.FinishToolCalls || len(st.Pending) != 1 || st.Pending[0].Tool != "ask_user" || st.Pending[0].Type != tool.TypeFunction {
		t.Fatalf("finish %q pending %+v", st.FinishReason, st.Pending)
	}
	if len(rec.calls) != 1 || rec.calls[0].Type != tool.TypeIntegration {
		t.Errorf("the integration call runs, the function call does not: %+v", rec.calls)
	}

	// The caller's next request must answer the pending call.
	next := loop.NewState(st.Messages)
	err = l.Step(context.Background(), next)
	if !fault.Is(err, fault.Unprocessable) || len(srv.requests()) != 1 {
		t.Fatalf("an unanswered call: err %v, requests %d", err, len(srv.requests()))
	}
	next.Messages = append(next.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: st.Pending[0].ModelCallID, Content: "Tuesday"})
	if _, err := l.Run(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	if next.FinishReason != llm.FinishStop || next.Iterations != 1 || next.Last().Content != "Tuesday in Paris: sunny." {
		t.Errorf("resumed loop: finish %q iterations %d last %+v", next.FinishReason, next.Iterations, next.Last())
	}
}

func TestModelErrorsAreTyped(t *testing.T) {
	cases := []struct {
		name   string
		status int
		want   fault.Kind
	}{
		{"throttled", http.StatusTooManyRequests, fault.Transient},
		{"server error", http.StatusBadGateway, fault.Transient},
		{"bad key", http.StatusUnauthorized, fault.Provider},
		{"unknown model", http.StatusNotFound, fault.Provider},
		{"context too long", http.StatusBadRequest, fault.InvalidInput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newOAServer(t, func(*testing.T, map[string]any) (int, any) {
				return tc.status, map[string]any{"error": map[string]any{"message": "nope: " + tc.name, "type": "x", "code": nil, "param": nil}}
			})
			st := loop.NewState(userMessages("hi"))
			err := newLoop(t, srv, &recorder{}, nil).Step(context.Background(), st)
			if fault.KindOf(err) != tc.want {
				t.Fatalf("kind = %s (%v), want %s", fault.KindOf(err), err, tc.want)
			}
			if !strings.Contains(fault.Message(err), "nope: "+tc.name) {
				t.Errorf("message %q should carry the endpoint's", fault.Message(err))
			}
			if st.Iterations != 0 || len(st.Messages) != 2 {
				t.Errorf("a failed step changed the state: %+v", st)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		srv := newOAServer(t)
		srv.Close()
		err := newLoop(t, srv, &recorder{}, nil).Step(context.Background(), loop.NewState(userMessages("hi")))
		if fault.KindOf(err) != fault.Transient {
			t.Fatalf("kind = %s (%v), want Transient", fault.KindOf(err), err)
		}
	})
}

// agent_loop runs one iteration per Lambda invocation: Prompt in one, the Map runs the calls,
// Feed in the next, with the state travelling as JSON in between.
func TestStateTravelsAsJSONBetweenInvocations(t *testing.T) {
	srv := newOAServer(t,
		reply(completion("", "tool_calls", toolCall("tc_w", "weather", `{"city":"Paris"}`), toolCall("tc_q", "ask_user", `{"question":"?"}`))),
		func(t *testing.T, req map[string]any) (int, any) {
			if got := toolMessages(req); got["tc_w"] != `{"ok":1}` || got["tc_q"] != `{"answer":"yes"}` {
				t.Errorf("tool messages = %v", got)
			}
			return 200, completion("done", "stop")
		},
	)
	mk := func() *loop.Loop {
		return newLoop(t, srv, nil, func(c *loop.Config) { c.RunFunctions = true })
	}
	st := loop.NewState(userMessages("go"))
	if err := mk().Prompt(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back loop.State
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	l2 := mk()
	calls, defs := l2.ToRun(&back)
	if len(calls) != 2 || defs[1].Type != tool.TypeFunction {
		t.Fatalf("to run: %d calls", len(calls))
	}
	results := []tool.Result{tool.ResultOf(calls[1], map[string]any{"answer": "yes"}), tool.ResultOf(calls[0], map[string]any{"ok": 1})}
	if err := l2.Feed(context.Background(), &back, results); err != nil {
		t.Fatal(err)
	}
	if back.Done {
		t.Fatal("the loop is not done after feeding results")
	}
	if err := mk().Step(context.Background(), &back); err != nil {
		t.Fatal(err)
	}
	if !back.Done || back.FinishReason != llm.FinishStop || len(back.Results) != 2 {
		t.Errorf("done %v finish %q results %d", back.Done, back.FinishReason, len(back.Results))
	}
	if err := mk().Feed(context.Background(), &back, []tool.Result{{ID: "call_unplanned"}}); !fault.Is(err, fault.Internal) {
		t.Errorf("a result for an unplanned call: %v", err)
	}
}

func TestConfigChecks(t *testing.T) {
	srv := newOAServer(t)
	model := openai.New("m", openai.Options{BaseURL: srv.URL})
	cases := []struct {
		name  string
		cfg   loop.Config
		field string
	}{
		{"cap too large", loop.Config{Model: model, MaxIterations: 1000}, "max_iterations"},
		{"negative cap", loop.Config{Model: model, MaxIterations: -1}, "max_iterations"},
		{"named choice not a tool", loop.Config{Model: model, Tools: toolset(t), ToolChoice: llm.ToolChoice{Mode: llm.ChoiceNamed, Name: "nope"}}, "tool_choice.function.name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loop.New(tc.cfg)
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field {
				t.Errorf("err = %v (field %q), want InvalidInput on %s", err, fault.FieldOf(err), tc.field)
			}
		})
	}
}
