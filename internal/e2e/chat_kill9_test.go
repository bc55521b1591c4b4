package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sinew/internal/testenv/ddblocal"
)

// The chat path killed with kill -9 (the local-mode process, DynamoDB Local dying with it) and
// started again over the same directory.

// ownDynamoDB has local mode start its own DynamoDB Local over its directory (not the tests'
// shared one), which dies with it on kill -9 and comes back with it over the same data.
const ownDynamoDB = ddblocal.EnvEndpoint + "="

// crash kills local mode with kill -9 (unless it is dead already) and waits until it and its
// DynamoDB Local are gone.
func crash(t testing.TB, p *local) {
	t.Helper()
	ddb := p.Endpoints["dynamodb"]
	if err := syscall.Kill(p.Cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatal(err)
	}
	<-p.Done()
	hc := &http.Client{Timeout: time.Second}
	gone := waitFor(time.Minute, func() bool {
		resp, err := hc.Get(ddb)
		if err == nil {
			resp.Body.Close()
		}
		return err != nil
	})
	if !gone {
		t.Fatalf("local mode's DynamoDB Local (%s) still answers after kill -9 of local mode", ddb)
	}
}

// chatModel is an OpenAI-compatible chat completions server whose answer is a function of the
// request's messages (so a turn taken over after a crash is answered as the first try was).
type chatModel struct {
	*httptest.Server
	reply func(msgs []map[string]any) map[string]any
}

func newChatModel(t testing.TB, reply func(msgs []map[string]any) map[string]any) *chatModel {
	m := &chatModel{reply: reply}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []map[string]any `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"not a chat completion request"}}`, http.StatusBadRequest)
			return
		}
		if probs := checkMessages(toAny(req.Messages)); len(probs) > 0 {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": strings.Join(probs, "; ")}})
			return
		}
		msg := m.reply(req.Messages)
		finish := "stop"
		if msg["tool_calls"] != nil {
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-kill9", "object": "chat.completion", "created": 1700000000, "model": "stand-in",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
	}))
	t.Cleanup(func() { m.CloseClientConnections(); m.Close() })
	return m
}

func toAny(msgs []map[string]any) []any {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = m
	}
	return out
}

// env is local mode's environment for this model.
func (m *chatModel) env() []string {
	return []string{"SINEW_MODEL=openai:stand-in", "SINEW_OPENAI_BASE_URL=" + m.URL + "/v1", "SINEW_OPENAI_API_KEY=sk-kill9"}
}

// answered are the model call ids the tool messages of msgs answer.
func answered(msgs []map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, m := range msgs {
		if m["role"] == "tool" {
			id, _ := m["tool_call_id"].(string)
			out[id] = true
		}
	}
	return out
}

func toolCall(id, name string) map[string]any {
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": "{}"}}
}

// sideEffects is the api_call target: /fast answers at once, /slow holds its first request until
// the client goes away (the crash) and answers the later ones at once. Each request is a side
// effect, counted with the Idempotency-Key it carries (the sinew call id).
type sideEffects struct {
	*httptest.Server
	mu   sync.Mutex
	keys map[string][]string // by path
	hit  map[string]chan struct{}
}

func newSideEffects(t testing.TB) *sideEffects {
	s := &sideEffects{keys: map[string][]string{}, hit: map[string]chan struct{}{"/fast": make(chan struct{}), "/slow": make(chan struct{})}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.keys[r.URL.Path] = append(s.keys[r.URL.Path], r.Header.Get("Idempotency-Key"))
		n := len(s.keys[r.URL.Path])
		if ch := s.hit[r.URL.Path]; n == 1 && ch != nil {
			close(ch)
		}
		s.mu.Unlock()
		if r.URL.Path == "/slow" && n == 1 {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"tool": strings.TrimPrefix(r.URL.Path, "/"), "n": n})
	}))
	t.Cleanup(func() { s.CloseClientConnections(); s.Close() })
	return s
}

func (s *sideEffects) requests(path string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.keys[path]...)
}

func (s *sideEffects) addr() string { return strings.TrimPrefix(s.URL, "http://") }

// history is a session's messages, oldest first.
func (a *api) history(t testing.TB, session string) []map[string]any {
	return a.all(t, "/sessions/"+session+"/history")
}

// all is every item of a listing route, page after page.
func (a *api) all(t testing.TB, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		q := path + "?limit=100"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		page := a.must(t, "GET", q, nil, 200)
		items, _ := page["items"].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			out = append(out, m)
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			return out
		}
		cursor = next
	}
}

// shape is a history as "role[:what]" items: a tool message by the call it answers, an
// assistant message by its calls (or its text).
func shape(msgs []map[string]any) []string {
	var out []string
	for _, m := range msgs {
		s := fmt.Sprint(m["role"])
		switch {
		case m["role"] == "tool":
			s += ":" + fmt.Sprint(m["tool_call_id"])
		case m["tool_calls"] != nil:
			calls, _ := m["tool_calls"].([]any)
			var ids []string
			for _, c := range calls {
				cm, _ := c.(map[string]any)
				ids = append(ids, fmt.Sprint(cm["id"]))
			}
			s += ":calls(" + strings.Join(ids, ",") + ")"
		default:
			s += ":" + fmt.Sprint(m["content"])
		}
		out = append(out, s)
	}
	return out
}

// The model calls tool A (fast) and B (slow), both api_calls whose requests are counted, in one
// reply (parallel) or in two successive replies; local mode is killed with kill -9 while B's
// request is at the server, and started again. A's step is in the history (saved as it
// completed); a repeat with the same Idempotency-Key is refused while the dead try's lease lasts
// and then takes the turn over (not a 409 for the key's 24 h), without running A again (A's
// call id derives from the session, the key and the model's call id, and its result is saved),
// B runs again at most once, under the same call id, and the turn ends saved.
func TestChatKill9MidTurn(t *testing.T) {
	for _, parallel := range []bool{true, false} {
		name := map[bool]string{true: "one reply calls A and B", false: "A then B in two replies"}[parallel]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			chatKill9MidTurn(t, parallel)
		})
	}
}

func midTurnModel(parallel bool) func([]map[string]any) map[string]any {
	return func(msgs []map[string]any) map[string]any {
		done := answered(msgs)
		switch {
		case done["mA"] && done["mB"]:
			return map[string]any{"role": "assistant", "content": "A and B are done."}
		case parallel:
			return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{toolCall("mA", "fast"), toolCall("mB", "slow")}}
		case done["mA"]:
			return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{toolCall("mB", "slow")}}
		default:
			return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{toolCall("mA", "fast")}}
		}
	}
}

func chatKill9MidTurn(t *testing.T, parallel bool) {
	model := newChatModel(t, midTurnModel(parallel))
	fx := newSideEffects(t)
	dir := t.TempDir()
	// The budget outlasts the time to the crash; the dead try's lease is the budget and 30 s.
	env := append(model.env(), ownDynamoDB, "SINEW_APICALL_ALLOW="+fx.addr(), "SINEW_CHAT_BUDGET_S=15")
	p := startLocal(t, dir, env)
	a := p.apiFor(t, "dev-kill9-turn")
	agent := a.must(t, "POST", "/agents", map[string]any{"name": "kill9-turn"}, 201)["id"].(string)
	for _, tl := range []string{"fast", "slow"} {
		a.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": tl, "type": "api_call", "description": "Call " + tl,
			"api_call": map[string]any{"method": "POST", "url": fx.URL + "/" + tl}}, 201)
	}
	session := a.must(t, "POST", "/sessions", map[string]any{"agent_id": agent}, 201)["id"].(string)
	req := map[string]any{"auto_run_tools": true, "messages": []any{map[string]any{"role": "user", "content": "Run A and B."}}}
	const key = "turn-key-1"
	go func() {
		_, _, _ = a.do(context.Background(), "POST", "/sessions/"+session+"/chat", req, "Idempotency-Key", key)
	}()

	waitClosed(t, fx.hit["/fast"], "A's request")
	waitClosed(t, fx.hit["/slow"], "B's request")
	// A has answered; give the chat the time to save its result while B runs (the bound only
	// guards against a hang: the crash comes when A's answer is in the history, or then).
	savedBefore := waitFor(10*time.Second, func() bool { return answered(a.history(t, session))["mA"] })
	crash(t, p)
	t.Logf("A's result in the history before the crash: %v", savedBefore)

	p = startLocal(t, dir, env)
	a = p.apiFor(t, "dev-kill9-turn")
	if got := shape(a.history(t, session)); !answered(a.history(t, session))["mA"] {
		t.Errorf("after the restart the history is %v: A's result, which completed before the crash, is not saved", got)
	}
	body, conflicts := repeatUntilTakenOver(t, a, session, req, key)
	t.Logf("the repeat was refused %d times while the dead try's lease lasted", conflicts)

	want := []string{"user:Run A and B.", "assistant:calls(mA,mB)", "tool:mA", "tool:mB", "assistant:A and B are done."}
	if !parallel {
		want = []string{"user:Run A and B.", "assistant:calls(mA)", "tool:mA", "assistant:calls(mB)", "tool:mB", "assistant:A and B are done."}
	}
	if got := shape(a.history(t, session)); strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("history after the repeat:\n  %s\nwant\n  %s", strings.Join(got, " | "), strings.Join(want, " | "))
	}
	if cs, _ := body["choices"].([]any); len(cs) != 1 || !strings.Contains(fmt.Sprint(cs[0]), "A and B are done.") {
		t.Errorf("the repeat answered %v", body)
	}
	if got := fx.requests("/fast"); len(got) != 1 {
		t.Errorf("A's server got %d requests (%v), want 1: A ran again after the crash", len(got), got)
	}
	slow := fx.requests("/slow")
	if len(slow) < 1 || len(slow) > 2 || (len(slow) == 2 && slow[0] != slow[1]) {
		t.Errorf("B's server got the requests %v, want the one cut by the crash and at most one more under the same call id", slow)
	}
}

// repeatUntilTakenOver repeats the chat under key until it is answered: a 409 while the dead
// try's lease lasts, then 200. Anything else fails.
func repeatUntilTakenOver(t *testing.T, a *api, session string, req map[string]any, key string) (map[string]any, int) {
	t.Helper()
	conflicts := 0
	deadline := time.Now().Add(3 * time.Minute) // only guards against a hang: the lease is under a minute
	for {
		code, body, err := a.do(context.Background(), "POST", "/sessions/"+session+"/chat", req, "Idempotency-Key", key)
		switch {
		case err == nil && code == http.StatusOK:
			return body, conflicts
		case err == nil && code == http.StatusConflict && strings.Contains(fmt.Sprint(body), "Idempotency-Key is still running"):
			conflicts++
		default:
			t.Fatalf("the repeat under the same Idempotency-Key = %d %v (%v), want 409 while the lease lasts, then 200", code, body, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the repeat was still refused after %d tries: the dead try's lease never lapsed (%v)", conflicts, body)
		}
		time.Sleep(time.Second)
	}
}

func waitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(2 * time.Minute): // only guards against a hang
		t.Fatalf("%s never came", what)
	}
}

// waitFor polls cond until it holds or limit passes, and says whether it held.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
