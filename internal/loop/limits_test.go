package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/loop"
)

// budget is a CallBudget of limit calls, as the chat's shared count gives.
type budget struct {
	mu          sync.Mutex
	limit, used int
	err         error
}

func (b *budget) Take(_ context.Context, n int) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	granted := min(n, max(b.limit-b.used, 0))
	b.used += n
	return granted, nil
}

func (b *budget) Limit() int { return b.limit }

// TestCallLimits: one reply's calls past MaxCallsPerReply, and the calls past what the turn's
// budget grants, are answered to the model as Sinew.TooLarge errors and never run; an unknown
// tool's call counts for neither.
func TestCallLimits(t *testing.T) {
	const asked = 40
	tests := []struct {
		name       string
		perReply   int
		budget     *budget
		wantRun    int
		wantReply  int // refused past the per-reply limit
		wantBudget int // refused past the turn's budget
	}{
		{"the default per-reply limit", 0, nil, loop.DefaultMaxCallsPerReply, asked - loop.DefaultMaxCallsPerReply, 0},
		{"a configured limit", 5, nil, 5, asked - 5, 0},
		{"the turn's budget is tighter", 10, &budget{limit: 3}, 3, asked - 10, 7},
		{"the turn's budget is spent", 10, &budget{limit: 3, used: 3}, 0, asked - 10, 10},
		{"both loose", 100, &budget{limit: 100}, asked, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := []map[string]any{toolCall("tc_unknown", "teleport", `{}`)}
			for i := range asked {
				calls = append(calls, toolCall(fmt.Sprintf("tc_%d", i), "weather", `{"city":"Paris"}`))
			}
			srv := newOAServer(t,
				reply(completion("", "tool_calls", calls...)),
				func(t *testing.T, req map[string]any) (int, any) {
					msgs := toolMessages(req)
					if len(msgs) != asked+1 {
						t.Errorf("%d tool messages, want every call answered (%d)", len(msgs), asked+1)
					}
					reply, turn := 0, 0
					for id, m := range msgs {
						var e map[string]string
						_ = json.Unmarshal([]byte(m), &e)
						switch {
						case strings.Contains(e["error"], "per model reply") && e["type"] == string(fault.TooLarge):
							reply++
						case strings.Contains(e["error"], "per chat turn") && e["type"] == string(fault.TooLarge):
							turn++
						case id == "tc_unknown" || !strings.Contains(m, "error"):
						default:
							t.Errorf("%s: unexpected message %q", id, m)
						}
					}
					if reply != tt.wantReply || turn != tt.wantBudget {
						t.Errorf("refused past the reply's limit %d, past the turn's %d; want %d and %d", reply, turn, tt.wantReply, tt.wantBudget)
					}
					return 200, completion("Done.", "stop")
				})
			rec := &recorder{}
			st, err := newLoop(t, srv, rec, func(c *loop.Config) {
				c.MaxCallsPerReply = tt.perReply
				if tt.budget != nil {
					c.Budget = tt.budget
				}
			}).Run(context.Background(), loop.NewState(userMessages("weather, many times")))
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.calls) != tt.wantRun || len(st.Results) != tt.wantRun {
				t.Errorf("ran %d calls (%d results), want %d", len(rec.calls), len(st.Results), tt.wantRun)
			}
		})
	}
}

// TestBudgetErrorFailsTheStep: a budget that cannot be read fails the step and leaves the state as
// it was, like a model error, so the caller may retry it.
func TestBudgetErrorFailsTheStep(t *testing.T) {
	srv := newOAServer(t, reply(completion("", "tool_calls", toolCall("tc_1", "weather", `{"city":"Paris"}`))))
	rec := &recorder{}
	lp := newLoop(t, srv, rec, func(c *loop.Config) { c.Budget = &budget{limit: 10, err: errors.New("table unreachable")} })
	st := loop.NewState(userMessages("weather"))
	before := mustJSON(st)
	if err := lp.Step(context.Background(), st); err == nil || !strings.Contains(err.Error(), "table unreachable") {
		t.Fatalf("Step = %v, want the budget's error", err)
	}
	if after := mustJSON(st); after != before || len(rec.calls) != 0 {
		t.Errorf("state changed (%s -> %s) or calls ran (%d)", before, after, len(rec.calls))
	}
}
