package store_test

import (
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// TestDeveloperIsolation makes one of everything as developer A, then tries every method on those
// ids as developer B: each read or write is NotFound (never told apart from missing), each list is
// empty, and A's items are unchanged.
func TestDeveloperIsolation(t *testing.T) {
	e := newEnv(t)
	const a, b = "dev-a", "dev-b"
	agent := must[*store.Agent](t)(e.s.CreateAgent(ctx(), a, store.Agent{Name: "a", Metadata: map[string]any{
		"x-integration-setup": map[string]any{"t": map[string]any{"k": "secret"}},
	}}))
	ao := store.Owner{Kind: store.OwnerAgent, ID: agent.ID}
	tl := must[*tool.Tool](t)(e.s.CreateTool(ctx(), a, ao, intTool("t", map[string]any{"k": "v"})))
	task, _, err := e.s.CreateTask(ctx(), a, agent.ID, store.Task{Name: "t"}, []tool.Tool{fnTool("x")})
	if err != nil {
		t.Fatal(err)
	}
	to := store.Owner{Kind: store.OwnerTask, ID: task.ID}
	user := must[*store.User](t)(e.s.CreateUser(ctx(), a, store.User{Name: "u"}))
	uo := store.Owner{Kind: store.OwnerUser, ID: user.ID}
	sess := must[*store.Session](t)(e.s.CreateSession(ctx(), a, store.Session{AgentID: agent.ID, UserID: user.ID}))
	must[[]store.Message](t)(e.s.AppendMessages(ctx(), a, sess.ID, []store.Message{{Role: "user", Content: "hi"}}))
	doc := must[*store.Doc](t)(e.s.CreateDoc(ctx(), a, uo, store.Doc{Title: "d", Content: "c"}))
	must[*store.Secret](t)(e.s.PutSecret(ctx(), a, "KEY", []byte("v")))
	if err := e.s.SetFlag(ctx(), a, "auto_run_tools_chat", true); err != nil {
		t.Fatal(err)
	}
	x, _, err := e.s.CreateExecution(ctx(), a, store.Execution{ExecutionID: "exec-1", Workflow: "tool_call"})
	if err != nil {
		t.Fatal(err)
	}
	must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), a, store.PendingCall{
		CallID: "call_1", ExecutionID: x.ExecutionID, Tool: "x", TaskToken: "tok", ExpiresAt: e.clock.t.Add(time.Hour),
	}))
	must[*store.IdemRecord](t)(func() (*store.IdemRecord, error) {
		r, _, err := e.s.PutIdempotency(ctx(), a, "k", "v", time.Hour)
		return r, err
	}())
	ref := must[string](t)(e.s.PutPayload(ctx(), a, []byte("payload"), 0))
	before := len(e.scan(t))

	noop := func(any) error { return nil }
	denied := map[string]func() error{
		"GetAgent": func() error { _, err := e.s.GetAgent(ctx(), b, agent.ID); return err },
		"UpdateAgent": func() error {
			_, err := e.s.UpdateAgent(ctx(), b, agent.ID, func(*store.Agent) error { return noop(nil) })
			return err
		},
		"DeleteAgent":   func() error { return e.s.DeleteAgent(ctx(), b, agent.ID) },
		"CreateTool":    func() error { _, err := e.s.CreateTool(ctx(), b, ao, fnTool("y")); return err },
		"GetTool":       func() error { _, err := e.s.GetTool(ctx(), b, ao, tl.ID); return err },
		"ListTools":     func() error { _, err := e.s.ListTools(ctx(), b, ao, store.Page{}); return err },
		"ListTaskTools": func() error { _, err := e.s.ListTools(ctx(), b, to, store.Page{}); return err },
		"UpdateTool": func() error {
			_, err := e.s.UpdateTool(ctx(), b, ao, tl.ID, func(*tool.Tool) error { return nil })
			return err
		},
		"DeleteTool": func() error { return e.s.DeleteTool(ctx(), b, ao, tl.ID) },
		"ToolsFor":   func() error { _, err := e.s.ToolsFor(ctx(), b, agent.ID, task.ID); return err },
		"FindTool":   func() error { _, err := e.s.FindTool(ctx(), b, agent.ID, task.ID, "x"); return err },
		"MergeSources": func() error {
			_, err := e.s.MergeSources(ctx(), b, store.MergeRef{AgentID: agent.ID, SessionID: sess.ID, Tool: "t", ToolID: tl.ID})
			return err
		},
		"CreateTask": func() error { _, _, err := e.s.CreateTask(ctx(), b, agent.ID, store.Task{Name: "t"}, nil); return err },
		"GetTask":    func() error { _, err := e.s.GetTask(ctx(), b, task.ID); return err },
		"ListTasks":  func() error { _, err := e.s.ListTasks(ctx(), b, agent.ID, store.Page{}); return err },
		"UpdateTask": func() error {
			_, err := e.s.UpdateTask(ctx(), b, task.ID, func(*store.Task) error { return nil })
			return err
		},
		"DeleteTask": func() error { return e.s.DeleteTask(ctx(), b, task.ID) },
		"GetUser":    func() error { _, err := e.s.GetUser(ctx(), b, user.ID); return err },
		"UpdateUser": func() error {
			_, err := e.s.UpdateUser(ctx(), b, user.ID, func(*store.User) error { return nil })
			return err
		},
		"DeleteUser":    func() error { return e.s.DeleteUser(ctx(), b, user.ID) },
		"CreateSession": func() error { _, err := e.s.CreateSession(ctx(), b, store.Session{AgentID: agent.ID}); return err },
		"GetSession":    func() error { _, err := e.s.GetSession(ctx(), b, sess.ID); return err },
		"UpdateSession": func() error {
			_, err := e.s.UpdateSession(ctx(), b, sess.ID, func(*store.Session) error { return nil })
			return err
		},
		"DeleteSession": func() error { return e.s.DeleteSession(ctx(), b, sess.ID) },
		"AppendMessages": func() error {
			_, err := e.s.AppendMessages(ctx(), b, sess.ID, []store.Message{{Role: "user"}})
			return err
		},
		"ListMessages": func() error { _, err := e.s.ListMessages(ctx(), b, sess.ID, store.Page{}); return err },
		"CreateDoc":    func() error { _, err := e.s.CreateDoc(ctx(), b, uo, store.Doc{Title: "x"}); return err },
		"GetDoc":       func() error { _, err := e.s.GetDoc(ctx(), b, uo, doc.ID); return err },
		"ListDocs":     func() error { _, err := e.s.ListDocs(ctx(), b, uo, store.Page{}); return err },
		"DeleteDoc":    func() error { return e.s.DeleteDoc(ctx(), b, uo, doc.ID) },
		"OpenSecret":   func() error { _, err := e.s.OpenSecret(ctx(), b, "KEY"); return err },
		"DeleteSecret": func() error { return e.s.DeleteSecret(ctx(), b, "KEY") },
		"GetExecution": func() error { _, err := e.s.GetExecution(ctx(), b, x.ExecutionID); return err },
		"SetExecutionStatus": func() error {
			_, _, err := e.s.SetExecutionStatus(ctx(), b, x.ExecutionID, store.ExecCancelled, nil, nil)
			return err
		},
		"PutPendingCall": func() error {
			_, err := e.s.PutPendingCall(ctx(), b, store.PendingCall{CallID: "call_2", ExecutionID: x.ExecutionID, Tool: "x", TaskToken: "t", ExpiresAt: e.clock.t.Add(time.Hour)})
			return err
		},
		"GetCall": func() error { _, err := e.s.GetCall(ctx(), b, x.ExecutionID, "call_1"); return err },
		"SettleCall": func() error {
			_, err := e.s.SettleCall(ctx(), b, x.ExecutionID, "call_1", store.CallAnswered)
			return err
		},
		"GetIdempotency":    func() error { _, err := e.s.GetIdempotency(ctx(), b, "k"); return err },
		"UpdateIdempotency": func() error { _, err := e.s.UpdateIdempotency(ctx(), b, "k", "x"); return err },
		"GetPayload":        func() error { _, err := e.s.GetPayload(ctx(), b, ref); return err },
	}
	for name, run := range denied {
		t.Run(name, func(t *testing.T) { wantKind(t, run(), fault.NotFound) })
	}

	empty := map[string]func() (int, error){
		"ListAgents":     func() (int, error) { l, err := e.s.ListAgents(ctx(), b, store.Page{}); return lenOf(l), err },
		"ListUsers":      func() (int, error) { l, err := e.s.ListUsers(ctx(), b, store.Page{}); return lenOf(l), err },
		"ListSessions":   func() (int, error) { l, err := e.s.ListSessions(ctx(), b, store.Page{}); return lenOf(l), err },
		"ListSecrets":    func() (int, error) { l, err := e.s.ListSecrets(ctx(), b, store.Page{}); return lenOf(l), err },
		"ListExecutions": func() (int, error) { l, err := e.s.ListExecutions(ctx(), b, store.Page{}); return lenOf(l), err },
		"ExecutionCalls": func() (int, error) { l, err := e.s.ExecutionCalls(ctx(), b, x.ExecutionID); return len(l), err },
		"ListCalls": func() (int, error) {
			l, err := e.s.ListCalls(ctx(), b, store.CallPending, store.Page{})
			return lenOf(l), err
		},
		"Flags": func() (int, error) {
			f, err := e.s.Flags(ctx(), b, map[string]bool{"auto_run_tools_chat": false})
			if f["auto_run_tools_chat"] {
				return 1, err
			}
			return 0, err
		},
	}
	for name, run := range empty {
		t.Run(name, func(t *testing.T) {
			n, err := run()
			if err != nil || n != 0 {
				t.Errorf("developer B sees %d of A's items (err %v)", n, err)
			}
		})
	}

	if after := len(e.scan(t)); after != before {
		t.Errorf("developer B's calls changed the table: %d items, %d before", after, before)
	}
	// A still sees everything.
	if _, err := e.s.GetTool(ctx(), a, ao, tl.ID); err != nil {
		t.Error(err)
	}
	if c, err := e.s.GetCall(ctx(), a, x.ExecutionID, "call_1"); err != nil || c.Status != store.CallPending {
		t.Errorf("A's call: %+v, %v", c, err)
	}
	// The same developer id spelt with a key separator cannot reach into A's keys.
	for _, forged := range []string{"dev-a#AGENT#" + agent.ID, "dev-a%23", "dev-a#"} {
		if _, err := e.s.GetAgent(ctx(), forged, agent.ID); !fault.Is(err, fault.NotFound) {
			t.Errorf("developer %q: %v, want NotFound", forged, err)
		}
	}
}

func lenOf[T any](l *store.List[T]) int {
	if l == nil {
		return 0
	}
	return len(l.Items)
}
