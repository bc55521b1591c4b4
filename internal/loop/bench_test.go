package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/tool"
)

// instantModel answers at once with a fixed message: the benchmark measures the loop, not a model.
type instantModel struct{ res llm.Response }

func (m instantModel) Converse(context.Context, llm.Request) (llm.Response, error) { return m.res, nil }

// history is a conversation of n earlier exchanges, each with one tool call, as a loop carries it.
func history(n int) []llm.Message {
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "You are a helpful assistant with tools."}}
	for i := range n {
		id := fmt.Sprintf("tc_%d", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleUser, Content: "What is the weather in Paris today, and should I take an umbrella?"},
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "weather", Arguments: `{"city":"Paris","units":"metric"}`}}},
			llm.Message{Role: llm.RoleTool, ToolCallID: id, Name: "weather", Content: `{"city":"Paris","temp":18.5,"sky":"light rain","wind":{"speed":4.1,"deg":220}}`},
			llm.Message{Role: llm.RoleAssistant, Content: "It is 18.5 °C with light rain in Paris: take an umbrella."},
		)
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: "And in Oslo and Rome?"})
}

// BenchmarkStep is one loop iteration (prompt, plan, run the turn's calls concurrently, feed the
// results) with a model and a runner that return at once: the loop's own overhead. The
// MessagesJSON benchmark beside it is the floor: encoding and decoding the same messages once,
// which any model adapter does at least.
func BenchmarkStep(b *testing.B) {
	for _, calls := range []int{0, 1, 4, 16} {
		b.Run(fmt.Sprintf("calls=%d", calls), func(b *testing.B) {
			msg := llm.Message{Role: llm.RoleAssistant, Content: "Done."}
			finish := llm.FinishStop
			for i := range calls {
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: fmt.Sprintf("n_%d", i), Name: "weather", Arguments: `{"city":"Oslo","units":"metric"}`})
				finish = llm.FinishToolCalls
			}
			model := instantModel{llm.Response{Message: msg, FinishReason: finish, Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}, Model: "bench"}}
			runner := loop.RunnerFunc(func(_ context.Context, c *tool.Call, _ *tool.Tool) tool.Result {
				return tool.ResultOf(c, map[string]any{"city": "Oslo", "temp": 9.5, "sky": "clear"})
			})
			l, err := loop.New(loop.Config{Model: model, Runner: runner, Tools: toolset(b), AutoRun: true})
			if err != nil {
				b.Fatal(err)
			}
			base := history(10)
			b.ReportAllocs()
			for b.Loop() {
				st := loop.NewState(append(make([]llm.Message, 0, len(base)+1+calls), base...))
				if err := l.Step(context.Background(), st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMessagesJSON(b *testing.B) {
	msgs := history(10)
	b.ReportAllocs()
	for b.Loop() {
		raw, err := json.Marshal(msgs)
		if err != nil {
			b.Fatal(err)
		}
		var back []llm.Message
		if err := json.Unmarshal(raw, &back); err != nil {
			b.Fatal(err)
		}
	}
}
