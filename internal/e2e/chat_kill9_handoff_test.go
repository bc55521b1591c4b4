package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// handoffCrashSize is how many async chats (and as many tool calls) are under way at the crash:
// SINEW_SOAK=1 runs the full size.
func handoffCrashSize() int {
	if os.Getenv("SINEW_SOAK") == "1" {
		return 150
	}
	return 12
}

// lostRequest is a request sent before the crash: its key, and what it was answered (0 when the
// crash cut it off).
type lostRequest struct {
	i       int
	path    string
	body    map[string]any
	key     string
	code    int
	answer  map[string]any
	started string // the execution_id of a 202
}

// Many async chats, on sessions whose history is over 32 KB, hand off to agent_loop while as many
// POST /tool-calls run; local mode is killed with kill -9 as the first answers arrive, and started
// again over the same directory. Every request the crash cut off is repeated under its
// Idempotency-Key. Then: no execution record stays running for an execution that does not exist
// (GET /executions), every session takes the next chat (no 409 naming an execution that is not
// there), each chat's user message is in its session's history once and answered, and each tool
// call's request reached its server at most twice (the crash's at-least-once edge), under one
// call id. A repeat of a chat whose hand-off had started answers that execution, and does not hand
// the turn off again.
func TestChatKill9DuringHandOff(t *testing.T) {
	n := handoffCrashSize()
	model := newChatModel(t, func(msgs []map[string]any) map[string]any {
		last, _ := msgs[len(msgs)-1]["content"].(string)
		return map[string]any{"role": "assistant", "content": "answer to " + last[:min(len(last), 12)]}
	})
	fx := newSideEffects(t)
	dir := t.TempDir()
	env := append(model.env(), ownDynamoDB, "SINEW_APICALL_ALLOW="+fx.addr(), "SINEW_CHAT_BUDGET_S=5")
	p := startLocal(t, dir, env)
	const dev = "dev-kill9-handoff"
	a := p.apiFor(t, dev)
	agent := a.must(t, "POST", "/agents", map[string]any{"name": "kill9-handoff"}, 201)["id"].(string)
	a.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "fast", "type": "api_call", "description": "Call fast",
		"api_call": map[string]any{"method": "POST", "url": fx.URL + "/fast"}}, 201)
	sessions := bigSessions(t, a, agent, n)

	var reqs []*lostRequest
	for i, s := range sessions {
		reqs = append(reqs, &lostRequest{i: i, path: "/sessions/" + s + "/chat", key: fmt.Sprintf("chat-%d", i),
			body: map[string]any{"async": true, "messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("q-%d please", i)}}}})
		reqs = append(reqs, &lostRequest{i: i, path: "/tool-calls", key: fmt.Sprintf("tc-%d", i),
			body: map[string]any{"agent_id": agent, "task_id": nil, "session_id": nil, "tool": "fast", "arguments": map[string]any{}}})
	}
	pid := p.Cmd.Process.Pid
	sendAllCrashAtFirstAnswer(t, a, reqs, func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	crash(t, p) // waits for the process, and its DynamoDB Local, to be gone
	if t.Failed() {
		t.Logf("local mode's errors before the crash:\n%s", p.logLines("level=ERROR"))
	}
	lost := lostCount(reqs)

	p = startLocal(t, dir, env)
	a = p.apiFor(t, dev)
	c := p.sfnClient()
	for _, r := range reqs {
		if r.code == 0 {
			repeatLost(t, a, c, r)
		}
	}
	settled := waitAllFinal(t, a, c)
	handoffs := map[string]int{}
	for _, x := range executions(t, a) {
		if x["workflow"] == "agent_loop" {
			handoffs[fmt.Sprint(x["session_id"])]++
		}
	}
	t.Logf("%d of %d requests were cut off by the crash; %d records of executions that never started were settled", lost, len(reqs), settled)

	for i, s := range sessions {
		if handoffs[s] != 1 {
			t.Errorf("session %s was handed to agent_loop %d times, want once (its one async chat)", s, handoffs[s])
		}
		nextChat(t, a, c, s)
		checkAnsweredOnce(t, a, s, fmt.Sprintf("q-%d please", i))
	}
	for path, keys := range map[string][]string{"/fast": fx.requests("/fast")} {
		per := map[string]int{}
		for _, k := range keys {
			per[k]++
		}
		for k, c := range per {
			if c > 2 {
				t.Errorf("%s got %d requests for call %s, want at most 2 (the one the crash cut off, and its rerun)", path, c, k)
			}
		}
		if len(per) > n {
			t.Errorf("%s got requests for %d call ids, want at most %d (one per tool call)", path, len(per), n)
		}
	}
}

// bigSessions makes n sessions of agent, each with over 32 KB of history.
func bigSessions(t *testing.T, a *api, agent string, n int) []string {
	t.Helper()
	big := strings.Repeat("history ", 5<<10)
	out := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	errs := make(chan error, n)
	for i := range out {
		out[i] = a.must(t, "POST", "/sessions", map[string]any{"agent_id": agent}, 201)["id"].(string)
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			code, body, err := a.do(context.Background(), "POST", "/sessions/"+out[i]+"/chat", map[string]any{"messages": []any{map[string]any{"role": "user", "content": big}}})
			if err != nil || code != http.StatusOK {
				errs <- fmt.Errorf("the history-making chat = %d %v (%v)", code, body, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

// sendAllCrashAtFirstAnswer sends every request at once and kills local mode (kill) the moment
// the first chats' answers have arrived (one chat in eight, so that many hand-offs are under
// way); each
// request records what it was answered, if anything.
func sendAllCrashAtFirstAnswer(t *testing.T, a *api, reqs []*lostRequest, kill func()) {
	var once sync.Once
	var answers atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, r := range reqs {
		wg.Go(func() {
			<-start
			code, body, err := a.do(context.Background(), "POST", r.path, r.body, "Idempotency-Key", r.key, "Prefer", "respond-async")
			if err == nil {
				if strings.HasSuffix(r.path, "/chat") && int(answers.Add(1)) >= max(1, len(reqs)/16) {
					once.Do(kill)
				}
				r.code, r.answer = code, body
				r.started, _ = body["execution_id"].(string)
			}
		})
	}
	close(start)
	wg.Wait()
	overloaded := 0
	for _, r := range reqs {
		switch {
		case r.code >= 500:
			// The function ran out of time before it answered (at the soak's size, on a small
			// machine): a client repeats it under its key, as one the crash cut off.
			overloaded++
			r.code = 0
		case r.code != 0 && r.code != http.StatusAccepted:
			t.Errorf("POST %s (%s) before the crash = %d %v, want 202", r.path, r.key, r.code, r.answer)
		}
	}
	if overloaded > 0 {
		t.Logf("%d requests were answered 5xx before the crash (the function's time ran out under the load); they are repeated", overloaded)
	}
}

func lostCount(reqs []*lostRequest) int {
	n := 0
	for _, r := range reqs {
		if r.code == 0 {
			n++
		}
	}
	return n
}

var namedExecution = regexp.MustCompile(`agent_loop execution ([0-9a-f-]{36})`)

// repeatLost repeats a request the crash cut off under its Idempotency-Key until it is
// answered 202: a 409 while the dead try's lease lasts, or while the execution it names runs
// (which must exist).
func repeatLost(t *testing.T, a *api, c *sfn.Client, r *lostRequest) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute) // only guards against a hang
	for {
		code, body, err := a.do(context.Background(), "POST", r.path, r.body, "Idempotency-Key", r.key, "Prefer", "respond-async")
		if err == nil && code == http.StatusAccepted {
			r.code, r.started = code, fmt.Sprint(body["execution_id"])
			return
		}
		if err != nil || code != http.StatusConflict {
			t.Fatalf("the repeat of POST %s (%s) = %d %v (%v), want 202, or 409 while the first try's lease lasts", r.path, r.key, code, body, err)
		}
		if m := namedExecution.FindStringSubmatch(fmt.Sprint(body)); m != nil && !executionExists(t, c, "agent_loop", m[1]) {
			t.Fatalf("the repeat of POST %s (%s) = 409 naming execution %s, which does not exist: %v", r.path, r.key, m[1], body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the repeat of POST %s (%s) is still refused: %v", r.path, r.key, body)
		}
		time.Sleep(time.Second)
	}
}

func executionExists(t testing.TB, c *sfn.Client, workflow, name string) bool {
	t.Helper()
	arn := fmt.Sprintf("arn:aws:states:us-east-1:000000000000:execution:%s:%s", workflow, name)
	_, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	var nf *types.ExecutionDoesNotExist
	if errors.As(err, &nf) {
		return false
	}
	if err != nil {
		t.Fatalf("DescribeExecution %s: %v", arn, err)
	}
	return true
}

// executions lists the developer's execution records (GET /executions, every page).
func executions(t testing.TB, a *api) []map[string]any { return a.all(t, "/executions") }

// waitAllFinal waits until GET /executions shows no record running, checking on the way that a
// running record's execution exists once the record is past the grace in which its start may be
// under way, and at the end that a succeeded record's execution succeeded and a record settled as
// never started has none. It answers how many were settled.
func waitAllFinal(t *testing.T, a *api, c *sfn.Client) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute) // only guards against a hang
	var xs []map[string]any
	for {
		xs = executions(t, a)
		running := 0
		for _, x := range xs {
			if x["status"] == "running" || x["status"] == "awaiting_input" || x["status"] == "queued" {
				running++
			}
		}
		if running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d execution records are still running: %v", running, xs)
		}
		time.Sleep(time.Second)
	}
	settled, per := 0, map[string]int{}
	for _, x := range xs {
		per[fmt.Sprint(x["workflow"])]++
		wf, id := fmt.Sprint(x["workflow"]), fmt.Sprint(x["execution_id"])
		exists := executionExists(t, c, wf, id)
		switch {
		case strings.Contains(fmt.Sprint(x["error"]), "never started"):
			settled++
			if exists {
				t.Errorf("%s %s is settled as never started, but its execution exists", wf, id)
			}
		case !exists:
			t.Errorf("%s %s is recorded %s, but its execution does not exist", wf, id, x["status"])
		case x["status"] != "succeeded":
			t.Errorf("%s %s ended %s: %v", wf, id, x["status"], x["error"])
		}
	}
	t.Logf("execution records: %v", per)
	return settled
}

// nextChat chats once more in session: 200, after 409s only while a dead chat's claim on the
// session's turn lasts (never naming an execution).
func nextChat(t *testing.T, a *api, c *sfn.Client, session string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // only guards against a hang
	for {
		code, body, err := a.do(context.Background(), "POST", "/sessions/"+session+"/chat",
			map[string]any{"messages": []any{map[string]any{"role": "user", "content": "next"}}})
		if err == nil && code == http.StatusOK {
			return
		}
		if err != nil || code != http.StatusConflict || !strings.Contains(fmt.Sprint(body), "is answering another chat request") {
			t.Fatalf("the next chat in session %s = %d %v (%v), want 200 (every execution has ended)", session, code, body, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s still refuses the next chat: %v", session, body)
		}
		time.Sleep(time.Second)
	}
}

// checkAnsweredOnce checks that session's history holds the user message text once, answered
// by the assistant message after it.
func checkAnsweredOnce(t *testing.T, a *api, session, text string) {
	t.Helper()
	h := a.history(t, session)
	var at []int
	for i, m := range h {
		if m["role"] == "user" && m["content"] == text {
			at = append(at, i)
		}
	}
	if len(at) != 1 {
		t.Errorf("session %s holds %q %d times, want once: %v", session, text, len(at), shortShape(h))
		return
	}
	if i := at[0]; i+1 >= len(h) || h[i+1]["role"] != "assistant" || !strings.HasPrefix(fmt.Sprint(h[i+1]["content"]), "answer to ") {
		t.Errorf("session %s leaves %q unanswered: %v", session, text, shortShape(h))
	}
}

// shortShape is shape with long texts cut.
func shortShape(h []map[string]any) []string {
	out := shape(h)
	for i, s := range out {
		if len(s) > 40 {
			out[i] = s[:40] + "…"
		}
	}
	return out
}
