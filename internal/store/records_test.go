package store_test

import (
	"fmt"
	"sync"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/store"
)

// TestConcurrentUpdatesLoseNothing: each writer adds its own metadata key through a
// read-modify-write; the version check makes a writer that lost the race read again, so every
// update that reports success is in the final record.
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	e := newEnv(t)
	a := must[*store.Agent](t)(e.s.CreateAgent(ctx(), "d", store.Agent{Name: "a", Metadata: map[string]any{}}))
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.s.UpdateAgent(ctx(), "d", a.ID, func(x *store.Agent) error {
				if x.Metadata == nil {
					x.Metadata = map[string]any{}
				}
				x.Metadata[fmt.Sprint("k", i)] = int64(i)
				return nil
			})
		}()
	}
	wg.Wait()
	got := must[*store.Agent](t)(e.s.GetAgent(ctx(), "d", a.ID))
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
			if got.Metadata[fmt.Sprint("k", i)] != int64(i) {
				t.Errorf("update %d reported success but is lost: %v", i, got.Metadata)
			}
		case !fault.Is(err, fault.Conflict):
			t.Errorf("update %d: %v", i, err)
		}
	}
	// Each round of the race has a winner, so at least one update lands; the record holds
	// exactly the updates that landed.
	if wins == 0 || len(got.Metadata) != wins {
		t.Errorf("%d updates landed, metadata %v", wins, got.Metadata)
	}
}

func TestUsersDocsSessions(t *testing.T) {
	e := newEnv(t)
	u := must[*store.User](t)(e.s.CreateUser(ctx(), "d", store.User{Name: "u", Metadata: map[string]any{"n": int64(1)}}))
	uo := store.Owner{Kind: store.OwnerUser, ID: u.ID}
	up := must[*store.User](t)(e.s.UpdateUser(ctx(), "d", u.ID, func(x *store.User) error { x.About = "hi"; x.ID = "ignored"; return nil }))
	if up.ID != u.ID || up.About != "hi" || up.Metadata["n"] != int64(1) || !up.CreatedAt.Equal(u.CreatedAt) {
		t.Errorf("updated user %+v", up)
	}
	d := must[*store.Doc](t)(e.s.CreateDoc(ctx(), "d", uo, store.Doc{Title: "t", Content: []any{"a", "b"}}))
	if got := must[*store.Doc](t)(e.s.GetDoc(ctx(), "d", uo, d.ID)); got.Title != "t" || len(got.Content.([]any)) != 2 {
		t.Errorf("doc %+v", got)
	}
	_, err := e.s.CreateDoc(ctx(), "d", store.Owner{Kind: store.OwnerTask, ID: u.ID}, store.Doc{Title: "t"})
	wantKind(t, err, fault.InvalidInput)

	agent := e.agent(t, "d")
	s := must[*store.Session](t)(e.s.CreateSession(ctx(), "d", store.Session{AgentID: agent.ID, Metadata: map[string]any{
		"x-api_call-setup": map[string]any{"api": map[string]any{"headers": map[string]any{"Authorization": "Bearer x"}}},
	}}))
	if s.Metadata["x-api_call-setup"].(map[string]any)["api"].(map[string]any)["headers"] != store.Redacted {
		t.Errorf("session setup answered as %v", s.Metadata)
	}
	// A session's user must exist; its agent cannot change.
	_, err = e.s.UpdateSession(ctx(), "d", s.ID, func(x *store.Session) error { x.UserID = agent.ID; return nil })
	wantKind(t, err, fault.NotFound)
	got := must[*store.Session](t)(e.s.UpdateSession(ctx(), "d", s.ID, func(x *store.Session) error {
		x.UserID, x.AgentID = u.ID, u.ID
		return nil
	}))
	if got.UserID != u.ID || got.AgentID != agent.ID {
		t.Errorf("session %+v", got)
	}
	src := must[*mergeSources](t)(mergeSrc(e, "d", store.MergeRef{AgentID: agent.ID, SessionID: s.ID, Tool: "api"}))
	if fmt.Sprint(src.Scope["x-api_call-setup"]) != "map[headers:map[Authorization:Bearer x]]" {
		t.Errorf("session setup kept as %v", src.Scope)
	}
	if l := must[*store.List[store.Session]](t)(e.s.ListSessions(ctx(), "d", store.Page{})); len(l.Items) != 1 {
		t.Errorf("sessions %+v", l.Items)
	}
	// Deleting the user takes the docs; the session stays with the user id dangling.
	if err := e.s.DeleteUser(ctx(), "d", u.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.s.GetDoc(ctx(), "d", uo, d.ID)
	wantKind(t, err, fault.NotFound)
	if _, err := e.s.GetSession(ctx(), "d", s.ID); err != nil {
		t.Error(err)
	}
}
