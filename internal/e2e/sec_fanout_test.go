package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// fanOutScript: the first reply asks for four nested chats and api_calls (first calls in all), the
// next two for 32 api_calls each, the last answers. Which turn plays is the number of assistant
// messages in the request, so nested chats in fresh sessions play it from the start.
func fanOutScript(first int) map[string]any {
	chat := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "go"}}, "auto_run_tools": true}
	var calls []map[string]any
	for i := 1; i <= 4; i++ {
		calls = append(calls, scriptCall(fmt.Sprintf("s%d", i), fmt.Sprintf("sub_%d", i), chat))
	}
	for i := 5; i <= first; i++ {
		calls = append(calls, scriptCall(fmt.Sprintf("h%d", i), "hit", nil))
	}
	more := func(turn int) []map[string]any {
		var out []map[string]any
		for i := 1; i <= 32; i++ {
			out = append(out, scriptCall(fmt.Sprintf("t%d_%d", turn, i), "hit", nil))
		}
		return out
	}
	return map[string]any{"turns": []any{reply("", calls...), reply("", more(1)...), reply("", more(2)...), reply("done")}}
}

// toolMessages lists the tool messages of a session's history.
func (a *api) toolMessages(t *testing.T, session string) []string {
	t.Helper()
	var out []string
	cursor := ""
	for {
		q := "?limit=100"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		page := a.must(t, "GET", "/sessions/"+session+"/history"+q, nil, 200)
		items, _ := page["items"].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			if m["role"] == "tool" {
				out = append(out, fmt.Sprint(m["content"]))
			}
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			return out
		}
		cursor = next
	}
}

func countContaining(list []string, s string) int {
	n := 0
	for _, x := range list {
		if strings.Contains(x, s) {
			n++
		}
	}
	return n
}

func hitTool(srv *recorder) map[string]any {
	return map[string]any{"name": "hit", "type": "api_call", "api_call": map[string]any{"method": "GET", "url": srv.URL + "/hit"}}
}

// chatTurn sends one chat turn and answers its body; a turn handed to agent_loop (202, the machine
// is slow) is waited for, and its execution record answered instead.
func (a *api) chatTurn(t *testing.T, session string, maxIter int) map[string]any {
	t.Helper()
	code, body, err := a.do(context.Background(), "POST", "/sessions/"+session+"/chat", map[string]any{"auto_run_tools": true,
		"max_iterations": maxIter, "messages": []any{map[string]any{"role": "user", "content": "go"}}})
	if err == nil && code == 202 {
		id, _ := body["execution_id"].(string)
		eventually(t, "agent_loop "+id+" to end", func() bool {
			body = a.must(t, "GET", "/executions/"+id, nil, 200)
			return body["status"] != "running"
		})
		return body
	}
	if err != nil || code != 200 {
		t.Fatalf("chat in %s = %d %v (%v), want 200", session, code, body, err)
	}
	return body
}

// eventually polls cond until it holds; the bound only guards against a hang.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestToolCallsPerReply: one model reply asking for 1,500 calls runs SINEW_MAX_CALLS_PER_REPLY
// (32) of them; the rest are answered to the model as errors and never run.
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -count=1 -run TestToolCallsPerReply ./internal/e2e/
func TestToolCallsPerReply(t *testing.T) {
	one := newRecorder(t, nil)
	p := startScripted(t, fanOutScript(1500))
	a := p.apiFor(t, "dev-fanout")
	session := a.sessionOf(t, a.agentWith(t, hitTool(one)))
	out := a.chatTurn(t, session, 1)
	if n := one.got(""); n != 32 {
		t.Errorf("one reply of 1,500 calls ran %d api_calls, want 32", n)
	}
	if r, _ := out["tool_results"].([]any); len(r) != 32 {
		t.Errorf("tool_results has %d results, want 32 (%.300s)", len(r), fmt.Sprint(out))
	}
	msgs := a.toolMessages(t, session)
	if len(msgs) != 1500 || countContaining(msgs, "per model reply") != 1500-4-32 {
		t.Errorf("%d tool messages, %d refusing past the limit; want 1500 and %d", len(msgs), countContaining(msgs, "per model reply"), 1500-4-32)
	}
}

// agentWith makes an agent with tools and answers its id.
func (a *api) agentWith(t *testing.T, tools ...map[string]any) string {
	t.Helper()
	agent := a.must(t, "POST", "/agents", map[string]any{"name": "fan-out"}, 201)["id"].(string)
	for _, tl := range tools {
		a.must(t, "POST", "/agents/"+agent+"/tools", tl, 201)
	}
	return agent
}

// sessionOf makes a session of agent and answers its id.
func (a *api) sessionOf(t *testing.T, agent string) string {
	t.Helper()
	return a.must(t, "POST", "/sessions", map[string]any{"agent_id": agent}, 201)["id"].(string)
}

// TestToolCallsPerTurnShared: a turn whose first reply starts four nested chats (session.chat
// through system tools) runs at most SINEW_MAX_CALLS_PER_TURN (128) calls across itself and them.
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -count=1 -run TestToolCallsPerTurnShared ./internal/e2e/
func TestToolCallsPerTurnShared(t *testing.T) {
	nested := newRecorder(t, nil)
	p := startScripted(t, fanOutScript(32))
	a := p.apiFor(t, "dev-fanout-nested")
	child := a.agentWith(t, hitTool(nested))
	tools := []map[string]any{hitTool(nested)}
	for i := 1; i <= 4; i++ {
		tools = append(tools, map[string]any{"name": fmt.Sprintf("sub_%d", i), "type": "system",
			"system": map[string]any{"resource": "session", "operation": "chat", "resource_id": a.sessionOf(t, child)}})
	}
	session := a.sessionOf(t, a.agentWith(t, tools...))
	a.chatTurn(t, session, 10)
	// 32 calls of the parent's first reply (4 nested chats, 28 api_calls), then the 96 left of the
	// turn's 128 go to the nested chats' api_calls (28 asked by each).
	if n := nested.got(""); n != 128-4 {
		t.Errorf("the turn and its nested chats ran %d api_calls, want %d", n, 128-4)
	}
	if msgs := a.toolMessages(t, session); countContaining(msgs, "per chat turn") != 64 {
		t.Errorf("the parent's later replies: %d calls refused for the turn's budget, want 64", countContaining(msgs, "per chat turn"))
	}
}
