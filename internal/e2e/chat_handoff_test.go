package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/store"
)

// The budget runs out while the turn's tools run: the chat answers 202 with the execution, and
// agent_loop finishes the turn under the same call ids, so the call the chat stopped waiting for
// runs once, and the model sees every result.
func TestChatToolsOutlastTheBudgetHandOffMidTurn(t *testing.T) {
	h := newHarnessBudget(t, 2*time.Second,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}, {"m2", "get_weather", `{"location": "Slowtown", "mode": "slow"}`}}},
		turn{Text: "Oslo and Slowtown: 21 degrees."},
	)
	code, body := h.chat(map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true})
	id, _ := body["execution_id"].(string)
	if code != http.StatusAccepted || body["status"] != "running" || id == "" {
		t.Fatalf("status %d: %v, want 202 {execution_id, status: running}", code, body)
	}
	out := h.waitExecution(id)
	if out["finish_reason"] != "stop" || out["last_message"].(map[string]any)["content"] != "Oslo and Slowtown: 21 degrees." {
		t.Fatalf("agent_loop output %v", out)
	}
	if h.weather.count("Oslo") != 1 || h.weather.count("Slowtown") != 1 || h.model.Count() != 2 {
		t.Errorf("Oslo ran %d, Slowtown %d (want once each), model asked %d times (want 2)", h.weather.count("Oslo"), h.weather.count("Slowtown"), h.model.Count())
	}
	// agent_loop's model call saw both results, not a timeout.
	got := map[string]string{}
	for _, m := range list(h.model.Request(t, 1)["messages"]) {
		if mm := m.(map[string]any); mm["role"] == "tool" {
			got[mm["tool_call_id"].(string)] = mm["content"].(string)
		}
	}
	if len(got) != 2 || !strings.Contains(got["m1"], "Oslo") || !strings.Contains(got["m2"], "Slowtown") || strings.Contains(got["m2"], "error") {
		t.Errorf("tool messages %v, want both results", got)
	}
	var roles []string
	for _, m := range h.history() {
		roles = append(roles, m.Role)
	}
	if r := strings.Join(roles, ","); r != "user,assistant,tool,tool,assistant" {
		t.Errorf("history %s", r)
	}
	x, err := h.store.GetExecution(h.ctx, h.dev, id)
	if err != nil || x.Status != store.ExecSucceeded || x.SessionID != h.session || x.Workflow != "agent_loop" {
		t.Errorf("execution record %+v %v", x, err)
	}
}

// While agent_loop continues a session, a chat in it is refused (409, naming the execution), and
// nothing is stored or asked; once the execution ends, the same request (same Idempotency-Key) runs.
func TestChatRefusedWhileItsHandOffRuns(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Bergen", "mode": "block"}`}}},
		turn{Text: "Bergen: 21 degrees."},
		turn{Text: "You're welcome."},
	)
	code, body := h.chat(map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true, "async": true})
	id, _ := body["execution_id"].(string)
	if code != http.StatusAccepted || id == "" {
		t.Fatalf("status %d: %v, want 202", code, body)
	}
	thanks := map[string]any{"messages": []any{user("thanks")}}
	code, body = h.chat(thanks, "Idempotency-Key", "k-thanks")
	e, _ := body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if code != http.StatusConflict || !strings.Contains(msg, id) || !strings.Contains(msg, "agent_loop") {
		t.Fatalf("status %d: %v, want 409 naming execution %s", code, body, id)
	}
	for _, m := range h.history() {
		if m.Content == "thanks" {
			t.Errorf("the refused chat's message is in the history")
		}
	}
	close(h.weather.release)
	if out := h.waitExecution(id); out["finish_reason"] != "stop" {
		t.Fatalf("agent_loop output %v", out)
	}
	code, body = h.chat(thanks, "Idempotency-Key", "k-thanks")
	if fr, msg := choice(t, body); code != http.StatusOK || fr != "stop" || msg["content"] != "You're welcome." {
		t.Fatalf("after the execution ended: %d %v", code, body)
	}
	if h.model.Count() != 3 {
		t.Errorf("model asked %d times, want 3", h.model.Count())
	}
}

// Outputs over 32 KiB travel as references; the model gets the values, a long one cut with a
// marker naming the stored value, and tool_results answer the values (under the HTTP API's 1 MiB
// inline limit).
func TestChatReadsStoredOutputsBackForTheModel(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{
			{"m1", "get_weather", `{"location": "Oslo", "mode": "big", "bytes": 40000}`},
			{"m2", "get_weather", `{"location": "Rome", "mode": "big", "bytes": 300000}`}}},
		turn{Text: "Long reports."},
	)
	code, body := h.chat(map[string]any{"messages": []any{user("reports?")}, "auto_run_tools": true})
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, body)
	}
	for _, r := range list(body["tool_results"]) {
		rm := r.(map[string]any)
		o, _ := rm["output"].(map[string]any)
		if o["sinew:ref"] != nil || !strings.Contains(jsonText(t, o), "END") {
			t.Fatalf("tool result %.200v, want its output's value inline", rm)
		}
	}
	got := map[string]string{}
	for _, m := range list(h.model.Request(t, 1)["messages"]) {
		if mm := m.(map[string]any); mm["role"] == "tool" {
			got[mm["tool_call_id"].(string)] = mm["content"].(string)
		}
	}
	if c := got["m1"]; !strings.Contains(c, `"report":"BEGIN`) || !strings.Contains(c, `END"`) || strings.Contains(c, "sinew:ref") {
		t.Errorf("m1 reached the model as %.120q..., want the whole value", c)
	}
	c := got["m2"]
	if !strings.Contains(c, "BEGIN") || strings.Contains(c, "END") || !strings.Contains(c, "[sinew: output truncated: the first 131072 of ") {
		t.Errorf("m2 reached the model as %d bytes ending %q, want the first 128 KiB and a marker", len(c), c[max(0, len(c)-200):])
	}
	var ref string
	if i := strings.LastIndex(c, "the whole output is the stored value "); i >= 0 {
		ref, _, _ = strings.Cut(c[i+len("the whole output is the stored value "):], " ")
	}
	if v, err := h.store.LoadValue(h.ctx, h.dev, map[string]any{store.RefKey: ref, "bytes": int64(1)}); ref == "" ||
		!strings.HasSuffix(c, "(GET /payloads/"+ref+")]") || err != nil || !strings.Contains(jsonText(t, v), "END") {
		t.Errorf("the marker does not name the stored value: %q", c[max(0, len(c)-200):])
	}
	// The history keeps what the model saw.
	for _, m := range h.history() {
		if m.Role == "tool" && m.ToolCallID == "m2" && m.Content != c {
			t.Errorf("history keeps m2 as %d bytes, the model saw %d", len(m.Content.(string)), len(c))
		}
	}
}

// The budget runs out while a tool runs and agent_loop cannot be started: the chat fails with
// Step Functions' error, the cut-off call is answered in the history with what happened (so the
// session is not stuck on a call nobody can answer), and the next chat goes on from there.
func TestChatCutShortAndHandOffFails(t *testing.T) {
	h := newHarnessBudget(t, 2*time.Second,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}, {"m2", "get_weather", `{"location": "Slowtown", "mode": "slow"}`}}},
		turn{Text: "Slowtown did not answer in time."},
	)
	h.sfn.fail = &sfntypes.ExecutionLimitExceeded{Message: awsString("too many executions")}
	code, body := h.chat(map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true})
	if code != http.StatusServiceUnavailable || errType(body) != "Sinew.Transient" {
		t.Fatalf("status %d: %v, want 503: Step Functions' limit, try again", code, body)
	}
	var got []string
	for _, m := range h.history() {
		s := m.Role
		if m.Role == "tool" {
			s += ":" + m.ToolCallID
			if m.ToolCallID == "m2" && !strings.Contains(m.Content.(string), "handing it over to agent_loop failed") {
				t.Errorf("m2 answered as %q", m.Content)
			}
		}
		got = append(got, s)
	}
	if r := strings.Join(got, ","); r != "user,assistant,tool:m1,tool:m2" {
		t.Fatalf("history %s", r)
	}
	h.sfn.fail = nil
	code, body = h.chat(map[string]any{"messages": []any{user("and now?")}})
	if fr, _ := choice(t, body); code != http.StatusOK || fr != "stop" {
		t.Fatalf("the next chat: %d %v", code, body)
	}
}

func awsString(s string) *string { return &s }

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Two chats in one session at once: the second is refused (409) while the first answers, so the
// two turns cannot interleave in the history; once the first has answered the session takes the
// next one.
func TestChatOneTurnAtATime(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Lima", "mode": "block"}`}}},
		turn{Text: "Lima: 21 degrees."},
		turn{Text: "Noted."},
	)
	first := make(chan int, 1)
	go func() {
		code, _ := h.chat(map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true})
		first <- code
	}()
	deadline := time.Now().Add(time.Minute)
	for h.weather.count("Lima") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first chat never ran its tool")
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := len(h.history())
	code, body := h.chat(map[string]any{"messages": []any{user("and now?")}})
	e, _ := body["error"].(map[string]any)
	if msg, _ := e["message"].(string); code != http.StatusConflict || !strings.Contains(msg, "answering another chat request") {
		t.Fatalf("a second chat while the first runs: %d %v, want 409", code, body)
	}
	if len(h.history()) != before {
		t.Error("the refused chat changed the history")
	}
	close(h.weather.release)
	if code := <-first; code != http.StatusOK {
		t.Fatalf("the first chat: %d", code)
	}
	code, body = h.chat(map[string]any{"messages": []any{user("and now?")}})
	if fr, msg := choice(t, body); code != http.StatusOK || fr != "stop" || msg["content"] != "Noted." {
		t.Fatalf("the next chat: %d %v", code, body)
	}
}
