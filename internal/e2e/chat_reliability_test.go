package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/chat"
	"sinew/internal/dispatch"
	"sinew/internal/executions"
	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/llm"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// heldSFN never answers StartExecution: the process "dies" there, its goroutine never going on,
// as under kill -9 at that moment. reached is closed when a start arrives.
type heldSFN struct {
	reached chan struct{}
	never   chan struct{}
}

func (h *heldSFN) StartExecution(ctx context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	close(h.reached)
	<-h.never
	return nil, context.Canceled
}

// restarted is the chat service of a process started after a crash, later by after: its
// store's clock (and so every lease and claim) is past the dead process's.
func (h *harness) restarted(after time.Duration) (*chat.Service, *store.Store) {
	now := func() time.Time { return time.Now().Add(after) }
	st := store.New(h.db, h.table, h.sealer, store.WithClock(now))
	d := h.deps
	d.Store, d.Now = st, now
	d.Starter = &agentloop.Starter{Store: st, SFN: h.sfn, ARN: agentLoopARN}
	d.Liveness = &workflow.Liveness{Store: st, SFN: h.sfn, ARNs: map[string]string{"agent_loop": agentLoopARN}, Now: now}
	return chat.New(d), st
}

func userReq(text string, async bool) *chat.Request {
	return &chat.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}, Async: async}
}

// The chat dies as it hands off, before agent_loop has started: after the restart the session
// takes the next chat (no 409 naming an execution that never started), the lost request's
// message is not left unanswered in the history (a retry does not duplicate it), and no record
// shows an execution running that does not exist.
func TestChatDiesBeforeItsHandOffStarts(t *testing.T) {
	h := newHarness(t, turn{Text: "Hello again."})
	held := &heldSFN{reached: make(chan struct{}), never: make(chan struct{})}
	t.Cleanup(func() { close(held.never) })
	d := h.deps
	d.Starter = &agentloop.Starter{Store: h.store, SFN: held, ARN: agentLoopARN}
	dead := chat.New(d)
	go func() {
		_, _ = dead.Chat(h.ctx, chat.Caller{DeveloperID: h.dev}, h.session, userReq("hello", true), "")
	}()
	select {
	case <-held.reached:
	case <-time.After(time.Minute):
		t.Fatal("the hand-off never reached StartExecution")
	}

	svc, st := h.restarted(10 * time.Minute)
	out, err := svc.Chat(h.ctx, chat.Caller{DeveloperID: h.dev}, h.session, userReq("hello", false), "")
	if err != nil || out.Status != http.StatusOK {
		t.Fatalf("the chat after the restart: %+v %v, want 200", out, err)
	}
	var got []string
	for _, m := range h.history() {
		got = append(got, m.Role+":"+jsonText(t, m.Content))
	}
	if r := strings.Join(got, ","); r != `user:"hello",assistant:"Hello again."` {
		t.Errorf("history %s, want the one answered hello", r)
	}
	l, err := st.ListExecutions(h.ctx, h.dev, store.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range l.Items {
		if !x.Status.Final() {
			t.Errorf("execution %s is recorded %s, but it never started", x.ExecutionID, x.Status)
		}
	}
}

// A record left running for an execution that never started (as an older sinew, or a lost
// clean-up, left them) is settled once Step Functions says the execution does not exist: the
// session it marks takes the next chat, and GET /executions/{id} answers it failed. A record whose
// execution did start is left alone.
func TestDeadHandOffRecordIsSettled(t *testing.T) {
	h := newHarness(t, turn{Text: "Here."})
	ghost := "0190f6a2-dead-7000-8000-000000000001"
	if _, _, err := h.store.CreateExecution(h.ctx, h.dev, store.Execution{ExecutionID: ghost, Workflow: "agent_loop", AgentID: h.agentID, SessionID: h.session}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.store.PutIdempotency(h.ctx, h.dev, "chat-handoff#"+h.session, map[string]any{"execution_id": ghost}, time.Hour); err != nil {
		t.Fatal(err)
	}
	// Within the grace the record may be a start under way: the session stays busy.
	code, body := h.chat(map[string]any{"messages": []any{user("anyone?")}})
	if code != http.StatusConflict {
		t.Fatalf("within the grace: %d %v, want 409", code, body)
	}
	svc, st := h.restarted(10 * time.Minute)
	out, err := svc.Chat(h.ctx, chat.Caller{DeveloperID: h.dev}, h.session, userReq("anyone?", false), "")
	if err != nil || out.Status != http.StatusOK {
		t.Fatalf("the chat once the record is past the grace: %+v %v, want 200", out, err)
	}
	x, err := st.GetExecution(h.ctx, h.dev, ghost)
	if err != nil || x.Status != store.ExecFailed || !strings.Contains(jsonText(t, x.Error), "never started") {
		t.Errorf("the dead record: %+v %v, want failed, saying it never started", x, err)
	}

	// GET /executions settles them too.
	other := "0190f6a2-dead-7000-8000-000000000002"
	if _, _, err := h.store.CreateExecution(h.ctx, h.dev, store.Execution{ExecutionID: other, Workflow: "agent_loop", AgentID: h.agentID}); err != nil {
		t.Fatal(err)
	}
	rt := httpapi.New(httpapi.Options{})
	executions.Register(rt, executions.Deps{Workflow: &workflow.Service{Store: st}, Liveness: &workflow.Liveness{Store: st, SFN: h.sfn,
		ARNs: map[string]string{"agent_loop": agentLoopARN}, Now: func() time.Time { return time.Now().Add(10 * time.Minute) }}})
	srv := httptest.NewServer(httpapi.HTTPHandler(rt.ServeEvent, httpapi.HMACClaims(h.key)))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/executions", nil)
	req.Header.Set("Authorization", "Bearer "+h.token(h.dev))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Items []store.Execution `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /executions: %d %v", resp.StatusCode, err)
	}
	for _, x := range page.Items {
		if x.ExecutionID == other && x.Status != store.ExecFailed {
			t.Errorf("GET /executions lists the never-started %s as %s, want failed", other, x.Status)
		}
	}
	if len(page.Items) != 2 {
		t.Errorf("GET /executions lists %d executions, want 2", len(page.Items))
	}
}

// holdingInvoker passes invocations on to iv, but holds forever (the process "dies" there) any
// whose payload contains hold, before it reaches its executor.
type holdingInvoker struct {
	iv      *invoker
	hold    string
	reached chan struct{}
	never   chan struct{}
}

func (h *holdingInvoker) Invoke(ctx context.Context, fn string, payload []byte) ([]byte, *messages.InvokeResponse_Error, error) {
	if strings.Contains(string(payload), h.hold) {
		close(h.reached)
		<-h.never
		return nil, nil, context.Canceled
	}
	return h.iv.Invoke(ctx, fn, payload)
}

// The chat dies mid-turn: the model asked for A (done) and B (still on its way to its executor).
// A repeat under the same Idempotency-Key takes the turn over once the first try's lease lapses
// (not 409 for 24 h), goes on from the saved model turn, and reaches A's executor under the same
// call id, which answers A's recorded result: A's effect happens once, B's once, and the history
// holds the turn once, whole.
func TestChatDiesMidTurnRepeatTakesOver(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}, {"m2", "get_weather", `{"location": "Rome"}`}}},
		turn{Text: "Oslo and Rome: 21 degrees."},
	)
	held := &holdingInvoker{iv: h.iv, hold: "Rome", reached: make(chan struct{}), never: make(chan struct{})}
	t.Cleanup(func() { close(held.never) })
	d := h.deps
	d.Dispatcher = &dispatch.Dispatcher{Invoker: held, Functions: map[tool.Type]string{tool.TypeIntegration: "sinew-integration"}, Backoff: time.Millisecond}
	dead := chat.New(d)
	auto := true
	req := func() *chat.Request {
		r := userReq("weather?", false)
		r.AutoRunTools = &auto
		return r
	}
	go func() { _, _ = dead.Chat(h.ctx, chat.Caller{DeveloperID: h.dev}, h.session, req(), "k-weather") }()
	select {
	case <-held.reached:
	case <-time.After(time.Minute):
		t.Fatal("B never left for its executor")
	}
	for deadline := time.Now().Add(time.Minute); h.weather.count("Oslo") == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("A never ran")
		}
	}
	time.Sleep(200 * time.Millisecond) // A's result recorded by its executor

	svc, _ := h.restarted(10 * time.Minute)
	out, err := svc.Chat(h.ctx, chat.Caller{DeveloperID: h.dev}, h.session, req(), "k-weather")
	if err != nil || out.Status != http.StatusOK || out.Chat.Choices[0].Message.Content != "Oslo and Rome: 21 degrees." {
		t.Fatalf("the repeat after the restart: %+v %v, want 200 with the answer", out, err)
	}
	if a, b := h.weather.count("Oslo"), h.weather.count("Rome"); a != 1 || b != 1 {
		t.Errorf("A ran %d times, B %d, want once each", a, b)
	}
	var got []string
	for _, m := range h.history() {
		got = append(got, m.Role)
	}
	if r := strings.Join(got, ","); r != "user,assistant,tool,tool,assistant" {
		t.Errorf("history %s, want the turn once, whole", r)
	}
}

// Sizes are met before anything runs, or stored so that a turn that ran is saved: a user message
// too large to keep is 413 before the model is asked; 35 long tool results of one turn are saved
// (over one transaction's 4 MB, in several); and an answer over a record's 400 KB under an
// Idempotency-Key is answered, and answered again to the repeat.
func TestChatSizesBeforeSideEffects(t *testing.T) {
	var calls [][3]string
	for i := range 35 {
		calls = append(calls, [3]string{fmt.Sprintf("m%d", i), "get_weather", fmt.Sprintf(`{"location": "L%d", "mode": "big", "bytes": 200000}`, i)})
	}
	h := newHarness(t, turn{Calls: calls}, turn{Text: "Long reports."})
	code, body := h.chat(map[string]any{"messages": []any{user(strings.Repeat("x", 500_000))}, "auto_run_tools": true})
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(jsonText(t, body), "history keeps messages of at most") {
		t.Fatalf("a 500 KB message: %d %.300v, want 413 naming the limit", code, body)
	}
	if h.model.Count() != 0 || len(h.history()) != 0 {
		t.Fatalf("the refused message reached the model (%d) or the history (%d)", h.model.Count(), len(h.history()))
	}

	d := h.deps
	d.MaxCallsPerReply = 64
	svc := chat.New(d)
	auto := true
	req := userReq("reports?", false)
	req.AutoRunTools = &auto
	out, err := svc.Chat(h.ctx, chat.Caller{DeveloperID: h.dev}, h.session, req, "k-big")
	if err != nil || out.Status != http.StatusOK {
		t.Fatalf("35 long results: %v %v, want 200", out, err)
	}
	n, cursor := 0, ""
	for {
		l, err := h.store.ListMessages(h.ctx, h.dev, h.session, store.Page{Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		n += len(l.Items)
		if l.NextCursor == nil || *l.NextCursor == "" {
			break
		}
		cursor = *l.NextCursor
	}
	if n != 38 {
		t.Errorf("history has %d messages, want 38 (user, assistant, 35 tool, assistant)", n)
	}
	again, err := svc.Chat(h.ctx, chat.Caller{DeveloperID: h.dev}, h.session, req, "k-big")
	if err != nil || again.Chat == nil || again.Chat.ID != out.Chat.ID || len(again.Chat.ToolResults) != 35 {
		t.Fatalf("the repeat: %v, want the first answer again", err)
	}
	if h.model.Count() != 2 {
		t.Errorf("the model was asked %d times, want 2", h.model.Count())
	}
}

// A turn an earlier sinew left open (its open-turn record apart from the session, its call
// unanswered in the history) is closed by the next chat as the session's own mark is: the call
// answered as interrupted, the record gone with the turn's write.
func TestChatClosesAnEarlierSinewsOpenTurn(t *testing.T) {
	h := newHarness(t, turn{Text: "It was interrupted."})
	calls := []any{map[string]any{"id": "m1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"location": "Oslo"}`}}}
	if _, err := h.store.AppendMessages(h.ctx, h.dev, h.session, []store.Message{{Role: "user", Content: "weather?"}, {Role: "assistant", ToolCalls: calls}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.store.PutIdempotency(h.ctx, h.dev, "chat-open#"+h.session, map[string]any{"turn": "turn:old"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	code, body := h.chat(map[string]any{"messages": []any{user("and?")}})
	if code != http.StatusOK {
		t.Fatalf("the next chat: %d %v, want 200", code, body)
	}
	var got []string
	for _, m := range h.history() {
		s := m.Role
		if m.Role == "tool" && strings.Contains(jsonText(t, m.Content), "interrupted") {
			s += ":interrupted"
		}
		got = append(got, s)
	}
	if r := strings.Join(got, ","); r != "user,assistant,tool:interrupted,user,assistant" {
		t.Errorf("history %s", r)
	}
	if _, err := h.store.GetIdempotency(h.ctx, h.dev, "chat-open#"+h.session); !fault.Is(err, fault.NotFound) {
		t.Errorf("the earlier open-turn record: %v, want it gone", err)
	}
}
