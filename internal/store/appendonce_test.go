package store_test

import (
	"testing"

	"sinew/internal/fault"
	"sinew/internal/store"
)

func TestAppendMessagesOnce(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, "d")
	sess := must[*store.Session](t)(e.s.CreateSession(ctx(), "d", store.Session{AgentID: agent.ID}))
	batch := []store.Message{{Role: "assistant", Content: "hi"}, {Role: "tool", ToolCallID: "m1", Content: "21"}}
	count := func() int {
		t.Helper()
		l := must[*store.List[store.Message]](t)(e.s.ListMessages(ctx(), "d", sess.ID, store.Page{Limit: 100}))
		return len(l.Items)
	}
	cases := []struct {
		name, key string
		appended  bool
		total     int
	}{
		{"first", "agent_loop/x#0", true, 2},
		{"the same key again", "agent_loop/x#0", false, 2},
		{"another key", "agent_loop/x#1", true, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, err := e.s.AppendMessagesOnce(ctx(), "d", sess.ID, c.key, batch)
			if err != nil || ok != c.appended || count() != c.total {
				t.Fatalf("appended %v (want %v), err %v, %d messages (want %d)", ok, c.appended, err, count(), c.total)
			}
		})
	}
	// The markers are not messages, and another developer cannot append to the session.
	_, err := e.s.AppendMessagesOnce(ctx(), "other", sess.ID, "k", batch)
	wantKind(t, err, fault.NotFound)
	_, err = e.s.AppendMessagesOnce(ctx(), "d", sess.ID, "k", make([]store.Message, store.MaxAppendOnce+1))
	wantKind(t, err, fault.InvalidInput)
	_, err = e.s.AppendMessagesOnce(ctx(), "d", sess.ID, "", batch)
	wantKind(t, err, fault.InvalidInput)
	must[struct{}](t)(struct{}{}, e.s.DeleteSession(ctx(), "d", sess.ID))
	_, err = e.s.AppendMessagesOnce(ctx(), "d", sess.ID, "agent_loop/y#0", batch)
	wantKind(t, err, fault.NotFound)
}
