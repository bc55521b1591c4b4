package store_test

import (
	"fmt"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/tool"
)

func apiTool(name string) tool.Tool {
	return tool.Tool{Name: name, Type: tool.TypeAPICall, APICall: &tool.APICallDef{Method: "GET", URL: "https://api.example.com/" + name}}
}

func apiTools(n int) []tool.Tool {
	out := make([]tool.Tool, n)
	for i := range out {
		out[i] = apiTool(fmt.Sprintf("t_%d", i))
	}
	return out
}

// countTools counts an owner's tools, every page.
func (e *env) countTools(t *testing.T, o store.Owner) int {
	t.Helper()
	n, cursor := 0, ""
	for {
		l := must[*store.List[tool.Tool]](t)(e.s.ListTools(ctx(), "d", o, store.Page{Limit: 100, Cursor: cursor}))
		n += len(l.Items)
		if l.NextCursor == nil {
			return n
		}
		cursor = *l.NextCursor
	}
}

func TestCreateTools(t *testing.T) {
	key := "k-" + strings.Repeat("9", 12)
	setupFor := func(names ...string) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, n := range names {
			m[n] = map[string]any{"headers": map[string]any{"X-Api-Key": key}}
		}
		return m
	}
	tests := []struct {
		name     string
		existing []string       // tools the owner has before
		meta     map[string]any // the owner's metadata before
		tools    int
		setup    map[string]map[string]any
		kind     fault.Kind // "" when the import succeeds
		after    int        // the owner's tools after
	}{
		{"one transaction with setup", nil, nil, 3, setupFor("t_1"), "", 3},
		{"120 tools in three transactions, setup with the last", nil, nil, 120, setupFor("t_0", "t_119"), "", 120},
		{"a name taken: nothing made", []string{"t_77"}, nil, 120, nil, fault.Conflict, 1},
		{"a setup entry taken, found by the last transaction: the earlier ones rolled back", nil,
			map[string]any{"x-api_call-setup": map[string]any{"t_110": map[string]any{"headers": map[string]any{"X": "y"}}}}, 120, setupFor("t_110"), fault.Conflict, 0},
		{"nothing to make", nil, nil, 0, nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			a := must[*store.Agent](t)(e.s.CreateAgent(ctx(), "d", store.Agent{Name: "a", Metadata: tt.meta}))
			owner := store.Owner{Kind: store.OwnerAgent, ID: a.ID}
			for _, n := range tt.existing {
				must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", owner, apiTool(n)))
			}
			made, err := e.s.CreateTools(ctx(), "d", owner, apiTools(tt.tools), tt.setup)
			if tt.kind != "" {
				wantKind(t, err, tt.kind)
				if tt.existing != nil && !strings.Contains(fault.Message(err), tt.existing[0]) {
					t.Errorf("the conflict does not name %s: %v", tt.existing[0], err)
				}
			} else if err != nil || len(made) != tt.tools {
				t.Fatalf("made %d: %v", len(made), err)
			}
			if n := e.countTools(t, owner); n != tt.after {
				t.Fatalf("the owner has %d tools, want %d", n, tt.after)
			}
			if tt.kind == "" && len(tt.setup) > 0 {
				got := must[*store.Agent](t)(e.s.GetAgent(ctx(), "d", a.ID))
				entries, _ := got.Metadata["x-api_call-setup"].(map[string]any)
				if len(entries) != len(tt.setup) || fmt.Sprint(got.Metadata) == "" || strings.Contains(fmt.Sprint(got.Metadata), key) {
					t.Fatalf("the agent's metadata: %v", got.Metadata)
				}
				for _, it := range e.scan(t) {
					if strings.Contains(fmt.Sprint(it), key) {
						t.Fatal("the key is stored in the clear")
					}
				}
			}
		})
	}
}

func TestCreateToolsOwners(t *testing.T) {
	e := newEnv(t)
	_, err := e.s.CreateTools(ctx(), "d", store.Owner{Kind: store.OwnerAgent, ID: "0190c6b1-7c1e-7000-8000-000000000000"}, apiTools(2), nil)
	wantKind(t, err, fault.NotFound)
	_, err = e.s.CreateTools(ctx(), "d", store.Owner{Kind: store.OwnerAgent, ID: "0190c6b1-7c1e-7000-8000-000000000000"}, nil, nil)
	wantKind(t, err, fault.NotFound)
	a := must[*store.Agent](t)(e.s.CreateAgent(ctx(), "d", store.Agent{Name: "a"}))
	task, _, err := e.s.CreateTask(ctx(), "d", a.ID, store.Task{Name: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	owner := store.Owner{Kind: store.OwnerTask, ID: task.ID}
	must[[]tool.Tool](t)(e.s.CreateTools(ctx(), "d", owner, apiTools(2), map[string]map[string]any{"t_0": {"params": map[string]any{"key": "v"}}}))
	if n := e.countTools(t, owner); n != 2 {
		t.Fatalf("the task has %d tools", n)
	}
	got := must[*store.Task](t)(e.s.GetTask(ctx(), "d", task.ID))
	if _, ok := got.Metadata["x-api_call-setup"].(map[string]any)["t_0"]; !ok {
		t.Fatalf("the task's metadata: %v", got.Metadata)
	}
}
