package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// A session's turn is claimed by one chat at a time; a claim that lapsed is taken; an update of
// the session keeps the claim; each step is one request.
func TestClaimSessionTurn(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, "d")
	sess := must[*store.Session](t)(e.s.CreateSession(ctx(), "d", store.Session{AgentID: agent.ID, Metadata: map[string]any{"k": "v"}}))
	claim := func(tok, key string) (*store.SessionTurn, string, error) {
		return e.s.ClaimSessionTurn(ctx(), "d", sess.ID, store.TurnClaim{Token: tok, TTL: time.Minute, IdemKey: key})
	}
	steps := []struct {
		name   string
		do     func() (*store.SessionTurn, string, error)
		kind   fault.Kind // "" for success
		holder string
	}{
		{"first claim", func() (*store.SessionTurn, string, error) { return claim("a", "chat#k1") }, "", ""},
		{"while held", func() (*store.SessionTurn, string, error) { return claim("b", "") }, fault.Conflict, "chat#k1"},
		{"still held after the session's update", func() (*store.SessionTurn, string, error) {
			must[*store.Session](t)(e.s.UpdateSession(ctx(), "d", sess.ID, func(s *store.Session) error { s.Situation = "new"; return nil }))
			return claim("b", "")
		}, fault.Conflict, "chat#k1"},
		{"once lapsed", func() (*store.SessionTurn, string, error) { e.clock.advance(2 * time.Minute); return claim("b", "") }, "", ""},
		{"released", func() (*store.SessionTurn, string, error) {
			if err := e.s.ReleaseSessionTurn(ctx(), "d", sess.ID, "b", false); err != nil {
				t.Fatal(err)
			}
			return claim("c", "")
		}, "", ""},
		{"another developer's", func() (*store.SessionTurn, string, error) {
			return e.s.ClaimSessionTurn(ctx(), "other", sess.ID, store.TurnClaim{Token: "x", TTL: time.Minute})
		}, fault.NotFound, ""},
		{"a missing session", func() (*store.SessionTurn, string, error) {
			return e.s.ClaimSessionTurn(ctx(), "d", "0190f6a2-0000-7000-8000-000000000000", store.TurnClaim{Token: "x", TTL: time.Minute})
		}, fault.NotFound, ""},
	}
	for _, s := range steps {
		e.n.Reset()
		got, holder, err := s.do()
		if s.kind == "" && (err != nil || got.Session.ID != sess.ID || got.Session.Metadata["k"] != "v") {
			t.Fatalf("%s: %+v %v, want the session", s.name, got, err)
		}
		if s.kind != "" && (!fault.Is(err, s.kind) || holder != s.holder) {
			t.Fatalf("%s: %v held by %q, want %s held by %q", s.name, err, holder, s.kind, s.holder)
		}
		if n := e.n.Ops()["UpdateItem"]; s.name == steps[0].name && (n != 1 || e.n.Total() != 1) {
			t.Errorf("%s: %v requests, want one UpdateItem", s.name, e.n.Ops())
		}
	}
	if got := must[*store.Session](t)(e.s.GetSession(ctx(), "d", sess.ID)); got.Situation != "new" {
		t.Errorf("the session's update was lost: %+v", got)
	}
}

// A turn's write appends its messages in order (over one transaction's limit in several), and
// with the last changes the session's chat attributes under the claim, the records and the count
// of calls; a write under a claim that no longer holds changes nothing.
func TestWriteTurn(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, "d")
	sess := must[*store.Session](t)(e.s.CreateSession(ctx(), "d", store.Session{AgentID: agent.ID}))
	if _, _, err := e.s.PutIdempotency(ctx(), "d", "mark", "old", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.s.ClaimSessionTurn(ctx(), "d", sess.ID, store.TurnClaim{Token: "a", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	open, none := "turn:1", ""
	now := e.clock.now()
	msgs := func(n int) []store.Message {
		out := make([]store.Message, n)
		for i := range out {
			out[i] = store.Message{Role: "user", Content: fmt.Sprint(i)}
		}
		return out
	}
	writes := []struct {
		name     string
		w        store.TurnWrite
		err      error
		total    int    // messages in the history after
		open     string // the mark a later claim finds
		txs      int64
		released bool
	}{
		{"a step", store.TurnWrite{Messages: msgs(2), Token: "a", Open: &open,
			Idem:  []*store.IdemRecord{{Key: "rec", Value: "running", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}},
			Calls: &store.TurnCalls{Turn: "t1", N: 3, TTL: time.Hour}}, nil, 2, open, 1, false},
		{"under another's claim", store.TurnWrite{Messages: msgs(1), Token: "b", Open: &none}, store.ErrTurnLost, 2, open, 1, false},
		{"a result, without the claim", store.TurnWrite{Messages: msgs(1)}, nil, 3, open, 1, false},
		{"the last, over one transaction", store.TurnWrite{Messages: msgs(150), Token: "a", Open: &none, Release: true, Drop: []string{"mark"},
			Idem: []*store.IdemRecord{{Key: "rec", Value: "answer", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}}}, nil, 153, "", 2, true},
	}
	for _, w := range writes {
		e.n.Reset()
		err := e.s.WriteTurn(ctx(), "d", sess.ID, w.w)
		if !errors.Is(err, w.err) {
			t.Fatalf("%s: %v, want %v", w.name, err, w.err)
		}
		if n := e.n.Ops()["TransactWriteItems"]; n != w.txs {
			t.Errorf("%s: %d transactions, want %d", w.name, n, w.txs)
		}
		hist := must[[]store.Message](t)(e.s.History(ctx(), "d", sess.ID))
		if len(hist) != w.total {
			t.Fatalf("%s: %d messages, want %d", w.name, len(hist), w.total)
		}
		if w.released {
			st, _, err := e.s.ClaimSessionTurn(ctx(), "d", sess.ID, store.TurnClaim{Token: "z", TTL: time.Minute})
			if err != nil || st.Open != w.open {
				t.Fatalf("%s: the claim after: %+v %v, want it free with mark %q", w.name, st, err, w.open)
			}
		}
	}
	hist := must[[]store.Message](t)(e.s.History(ctx(), "d", sess.ID))
	for i, m := range hist[3:] {
		if m.Content != fmt.Sprint(i) {
			t.Fatalf("history[%d] = %v, want the batches in order", i+3, m.Content)
		}
	}
	if rec := must[*store.IdemRecord](t)(e.s.GetIdempotency(ctx(), "d", "rec")); rec.Value != "answer" {
		t.Errorf("record %v, want the last write's", rec.Value)
	}
	if _, err := e.s.GetIdempotency(ctx(), "d", "mark"); !fault.Is(err, fault.NotFound) {
		t.Errorf("the dropped record: %v, want NotFound", err)
	}
	if n := must[int](t)(e.s.TakeCalls(ctx(), "d", "t1", 0, time.Hour)); n != 3 {
		t.Errorf("the turn's count is %d, want 3", n)
	}
}

// What a turn reads by key is one BatchGetItem; the agent's tools and the history one Query each.
func TestReadTurn(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, "d")
	for _, name := range []string{"b_tool", "a_tool"} {
		must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", agent, fnTool(name)))
	}
	if err := e.s.SetFlag(ctx(), "d", "on", true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.s.PutIdempotency(ctx(), "d", "rec", "v", time.Hour); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		keys  store.TurnKeys
		kind  fault.Kind
		flags int
		idem  int
	}{
		{"everything", store.TurnKeys{AgentID: agent.ID, Flags: []string{"on", "unset"}, Idem: []string{"rec", "none"}}, "", 1, 1},
		{"the agent alone", store.TurnKeys{AgentID: agent.ID}, "", 0, 0},
		{"a missing agent", store.TurnKeys{AgentID: "0190f6a2-0000-7000-8000-000000000000"}, fault.NotFound, 0, 0},
	}
	for _, c := range cases {
		e.n.Reset()
		got, err := e.s.ReadTurn(ctx(), "d", c.keys)
		if c.kind != "" {
			wantKind(t, err, c.kind)
			continue
		}
		if err != nil || got.Agent.ID != agent.ID || len(got.Flags) != c.flags || len(got.Idem) != c.idem || e.n.Total() != 1 {
			t.Fatalf("%s: %+v %v (%v requests), want the agent, %d flags, %d records in one request", c.name, got, err, e.n.Ops(), c.flags, c.idem)
		}
	}
	e.n.Reset()
	tools := must[[]tool.Tool](t)(e.s.AgentTools(ctx(), "d", agent.ID))
	if len(tools) != 2 || tools[0].Name != "b_tool" || e.n.Total() != 1 {
		t.Errorf("tools %v in %v, want both in the order they were made, in one Query", tools, e.n.Ops())
	}
}

// ReplaceIdempotency is UpdateIdempotency without its read: one request, the expiry kept.
func TestReplaceIdempotency(t *testing.T) {
	e := newEnv(t)
	held, _, err := e.s.PutIdempotency(ctx(), "d", "k", "running", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	e.n.Reset()
	got := must[*store.IdemRecord](t)(e.s.ReplaceIdempotency(ctx(), "d", "k", held, "done"))
	if got.Value != "done" || !got.ExpiresAt.Equal(held.ExpiresAt) || e.n.Total() != 1 {
		t.Errorf("%+v in %v, want done, the expiry kept, in one request", got, e.n.Ops())
	}
	if v := must[*store.IdemRecord](t)(e.s.GetIdempotency(ctx(), "d", "k")).Value; v != "done" {
		t.Errorf("stored %v", v)
	}
	e.clock.advance(2 * time.Hour)
	_, err = e.s.ReplaceIdempotency(ctx(), "d", "k", held, "late")
	wantKind(t, err, fault.NotFound)
}
