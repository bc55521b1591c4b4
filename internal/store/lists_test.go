package store_test

import (
	"testing"

	"sinew/internal/fault"
	"sinew/internal/store"
)

func TestPagination(t *testing.T) {
	e := newEnv(t)
	const total = 45
	made := map[string]bool{}
	for range total {
		a := must[*store.Agent](t)(e.s.CreateAgent(ctx(), "d", store.Agent{Name: "a"}))
		made[a.ID] = true
	}
	must[*store.Agent](t)(e.s.CreateAgent(ctx(), "someone-else", store.Agent{Name: "x"}))

	tests := []struct {
		limit int
		pages []int
	}{
		{0, []int{20, 20, 5}}, // the default
		{20, []int{20, 20, 5}},
		{15, []int{15, 15, 15}}, // an exact fit ends without a cursor to an empty page
		{100, []int{45}},
		{1, nil},
	}
	for _, tc := range tests {
		seen := map[string]bool{}
		var sizes []int
		cursor, last := "", ""
		for {
			p := must[*store.List[store.Agent]](t)(e.s.ListAgents(ctx(), "d", store.Page{Limit: tc.limit, Cursor: cursor}))
			sizes = append(sizes, len(p.Items))
			for _, a := range p.Items {
				if seen[a.ID] || !made[a.ID] {
					t.Fatalf("limit %d: agent %s repeated or not the developer's", tc.limit, a.ID)
				}
				if last != "" && a.ID > last {
					t.Fatalf("limit %d: %s after %s: not newest first", tc.limit, a.ID, last)
				}
				seen[a.ID], last = true, a.ID
			}
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		if len(seen) != total {
			t.Errorf("limit %d: saw %d agents, want %d", tc.limit, len(seen), total)
		}
		if tc.pages != nil && len(sizes) != len(tc.pages) {
			t.Errorf("limit %d: pages %v, want %v", tc.limit, sizes, tc.pages)
		}
		for i := range tc.pages {
			if i < len(sizes) && sizes[i] != tc.pages[i] {
				t.Errorf("limit %d: pages %v, want %v", tc.limit, sizes, tc.pages)
				break
			}
		}
	}
}

func TestPageRefusals(t *testing.T) {
	e := newEnv(t)
	for range 3 {
		must[*store.Agent](t)(e.s.CreateAgent(ctx(), "a", store.Agent{Name: "a"}))
	}
	p := must[*store.List[store.Agent]](t)(e.s.ListAgents(ctx(), "a", store.Page{Limit: 1}))
	tests := []struct {
		name  string
		dev   string
		page  store.Page
		field string
	}{
		{"limit over 100", "a", store.Page{Limit: 101}, "limit"},
		{"negative limit", "a", store.Page{Limit: -1}, "limit"},
		{"garbage cursor", "a", store.Page{Cursor: "!!"}, "cursor"},
		{"base64 but not a cursor", "a", store.Page{Cursor: "e30"}, "cursor"},
		{"another developer's cursor", "b", store.Page{Cursor: *p.NextCursor}, "cursor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.ListAgents(ctx(), tc.dev, tc.page)
			wantKind(t, err, fault.InvalidInput)
			if f := fault.FieldOf(err); f != tc.field {
				t.Errorf("field %q, want %q", f, tc.field)
			}
		})
	}
	// Another list's cursor of the same developer is refused too, in the same partition or not.
	_, err := e.s.ListUsers(ctx(), "a", store.Page{Cursor: *p.NextCursor})
	wantKind(t, err, fault.InvalidInput)
	owner := store.Owner{Kind: store.OwnerAgent, ID: p.Items[0].ID}
	_, err = e.s.ListTools(ctx(), "a", owner, store.Page{Cursor: *p.NextCursor})
	wantKind(t, err, fault.InvalidInput)
}

func TestMessagesInOrder(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, "d")
	sess := must[*store.Session](t)(e.s.CreateSession(ctx(), "d", store.Session{AgentID: agent.ID}))
	var want []string
	for i := range 5 {
		batch := []store.Message{{Role: "user", Content: "q" + string(rune('0'+i))}, {Role: "assistant", Content: "a" + string(rune('0'+i))}}
		must[[]store.Message](t)(e.s.AppendMessages(ctx(), "d", sess.ID, batch))
		want = append(want, "q"+string(rune('0'+i)), "a"+string(rune('0'+i)))
	}
	var got []string
	cursor := ""
	for {
		p := must[*store.List[store.Message]](t)(e.s.ListMessages(ctx(), "d", sess.ID, store.Page{Limit: 3, Cursor: cursor}))
		for _, m := range p.Items {
			got = append(got, m.Content.(string))
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if len(got) != len(want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("history %v, want %v", got, want)
		}
	}
}
