package e2e

import (
	"fmt"
	"math"
	"testing"

	"sinew/internal/config"
	"sinew/internal/loop"
)

// historyLimit is Step Functions' bound on a Standard execution's history events: an execution
// that reaches it fails. https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html
const historyLimit = 25000

// loopHistory runs one agent_loop turn of replies, each reply asking for calls tool calls, and
// gives the execution's history length.
func loopHistory(t *testing.T, replies, calls int) int {
	t.Helper()
	var turns []turn
	for r := range replies {
		var cs [][3]string
		for c := range calls {
			cs = append(cs, [3]string{fmt.Sprintf("m%d-%d", r, c), "get_weather", `{"location": "Oslo"}`})
		}
		turns = append(turns, turn{Calls: cs})
	}
	turns = append(turns, turn{Text: "done"})
	h := newHarness(t, turns...)
	x := h.run(fmt.Sprintf("loop-history-%d-%d", replies, calls), h.input([]any{user("go")}, map[string]any{"max_iterations": replies + 1}))
	if out := h.wait(x); out["finish_reason"] != "stop" {
		t.Fatalf("%d replies of %d calls: output %v", replies, calls, out)
	}
	return len(x.History())
}

// TestAgentLoopHistoryFitsTheCallBounds: at the largest call bounds a deployment may set (every
// iteration a model reply, every call of the turn's bound made), an agent_loop execution stays
// well under Step Functions' history limit. The cost of a reply and of a call are measured here
// from the engine's history, so a change to agent_loop's states that makes them dearer fails
// this test instead of failing long turns in production.
func TestAgentLoopHistoryFitsTheCallBounds(t *testing.T) {
	base := loopHistory(t, 1, 1)
	perReply := float64(loopHistory(t, 4, 1)-base) / 3 // a reply with its one call
	perCall := float64(loopHistory(t, 1, 7)-base) / 6  // one more call in the same reply
	worst := float64(base) + perReply*float64(loop.MaxIterations-1) + perCall*float64(config.MaxCallsPerTurnLimit-loop.MaxIterations)
	t.Logf("agent_loop history: %d events for one reply of one call, %.1f per further reply, %.1f per further call; at %d iterations and %d calls: %.0f of %d",
		base, perReply, perCall, loop.MaxIterations, config.MaxCallsPerTurnLimit, worst, historyLimit)
	if perCall <= 0 || perReply <= 0 {
		t.Fatalf("a reply costs %.1f events and a call %.1f: the measurement is broken", perReply, perCall)
	}
	if margin := 0.8 * historyLimit; worst > margin {
		t.Errorf("at the largest bounds an agent_loop turn makes about %.0f history events, over %.0f (80%% of Step Functions' %d): lower config.MaxCallsPerTurnLimit to at most %d",
			worst, margin, historyLimit, int(math.Floor((margin-float64(base)-perReply*float64(loop.MaxIterations-1))/perCall))+loop.MaxIterations)
	}
}
