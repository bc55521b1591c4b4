package store_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/merge"
	"sinew/internal/store"
	"sinew/internal/tool"
)

func fnTool(name string) tool.Tool {
	return tool.Tool{Name: name, Type: tool.TypeFunction, Function: &tool.FunctionDef{Parameters: map[string]any{"type": "object"}}}
}

func intTool(name string, setup map[string]any) tool.Tool {
	return tool.Tool{Name: name, Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "dummy", Setup: setup}}
}

// scan is every item of the test's table (for checks of what is really stored).
func (e *env) scan(t testing.TB) []map[string]types.AttributeValue {
	t.Helper()
	var items []map[string]types.AttributeValue
	in := &dynamodb.ScanInput{TableName: &e.table, ConsistentRead: ptr(true)}
	for {
		out, err := e.db.Scan(ctx(), in)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			return items
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func ptr[T any](v T) *T { return &v }

func (e *env) agent(t testing.TB, dev string) store.Owner {
	t.Helper()
	a := must[*store.Agent](t)(e.s.CreateAgent(ctx(), dev, store.Agent{Name: "a"}))
	return store.Owner{Kind: store.OwnerAgent, ID: a.ID}
}

func TestConcurrentCreatesOfOneNameOneWins(t *testing.T) {
	e := newEnv(t)
	owner := e.agent(t, "d")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = e.s.CreateTool(ctx(), "d", owner, intTool("same", map[string]any{"key": fmt.Sprint(i)}))
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case fault.Is(err, fault.Conflict):
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d creates won, want exactly 1 (errors %v)", wins, errs)
	}
	list := must[*store.List[tool.Tool]](t)(e.s.ListTools(ctx(), "d", owner, store.Page{}))
	if len(list.Items) != 1 {
		t.Fatalf("%d tools stored, want 1", len(list.Items))
	}
	// Exactly one sealed setup item, the winner's: the losers left nothing behind.
	setups := 0
	for _, it := range e.scan(t) {
		if s, _ := it["sk"].(*types.AttributeValueMemberS); s != nil && s.Value == "SETUP" {
			setups++
		}
	}
	if setups != 1 {
		t.Errorf("%d setup items, want 1", setups)
	}
	// A later create of the same name is a Conflict naming the field.
	_, err := e.s.CreateTool(ctx(), "d", owner, fnTool("same"))
	wantKind(t, err, fault.Conflict)
	if fault.FieldOf(err) != "name" {
		t.Errorf("field %q, want name", fault.FieldOf(err))
	}
}

func TestToolRenameAndDeleteKeepNameClaims(t *testing.T) {
	e := newEnv(t)
	owner := e.agent(t, "d")
	a := must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", owner, fnTool("a")))
	b := must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", owner, fnTool("b")))

	// Renaming onto a taken name fails and changes nothing.
	_, err := e.s.UpdateTool(ctx(), "d", owner, a.ID, func(x *tool.Tool) error { x.Name = "b"; return nil })
	wantKind(t, err, fault.Conflict)
	if got := must[*tool.Tool](t)(e.s.GetTool(ctx(), "d", owner, a.ID)); got.Name != "a" {
		t.Fatalf("a failed rename changed the name to %s", got.Name)
	}
	// Renaming frees the old name and takes the new one.
	must[*tool.Tool](t)(e.s.UpdateTool(ctx(), "d", owner, a.ID, func(x *tool.Tool) error { x.Name = "c"; return nil }))
	must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", owner, fnTool("a")))
	_, err = e.s.CreateTool(ctx(), "d", owner, fnTool("c"))
	wantKind(t, err, fault.Conflict)
	found := must[*store.FoundTool](t)(e.s.FindTool(ctx(), "d", owner.ID, "", "c"))
	if found.Tool.ID != a.ID {
		t.Errorf("FindTool(c) = %s, want %s", found.Tool.ID, a.ID)
	}
	// Deleting frees the name.
	if err := e.s.DeleteTool(ctx(), "d", owner, b.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.s.GetTool(ctx(), "d", owner, b.ID)
	wantKind(t, err, fault.NotFound)
	must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", owner, fnTool("b")))
	err = e.s.DeleteTool(ctx(), "d", owner, b.ID)
	wantKind(t, err, fault.NotFound)
}

func TestToolSetupIsSealedAndRedacted(t *testing.T) {
	e := newEnv(t)
	owner := e.agent(t, "d")
	in := intTool("mail", map[string]any{"password": "pa55-w0rd", "user": "me"})
	created := must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", owner, in))
	if in.Integration.Setup["password"] != "pa55-w0rd" {
		t.Fatal("CreateTool changed the caller's tool")
	}
	for _, got := range []*tool.Tool{created, must[*tool.Tool](t)(e.s.GetTool(ctx(), "d", owner, created.ID))} {
		if got.Integration.Setup["password"] != store.Redacted || got.Integration.Setup["user"] != store.Redacted {
			t.Errorf("setup answered as %v, want redacted", got.Integration.Setup)
		}
	}
	for _, it := range e.scan(t) {
		for name, av := range it {
			var b []byte
			switch v := av.(type) {
			case *types.AttributeValueMemberS:
				b = []byte(v.Value)
			case *types.AttributeValueMemberB:
				b = v.Value
			}
			if bytes.Contains(b, []byte("pa55-w0rd")) {
				t.Errorf("attribute %s of an item holds the password in the clear", name)
			}
		}
	}
	// Redacted written back keeps the value; a changed value replaces it; a dropped key goes.
	must[*tool.Tool](t)(e.s.UpdateTool(ctx(), "d", owner, created.ID, func(x *tool.Tool) error {
		x.Integration.Setup = map[string]any{"password": store.Redacted, "host": "smtp.example.com"}
		return nil
	}))
	src := must[*mergeSources](t)(mergeSrc(e, "d", store.MergeRef{AgentID: owner.ID, Tool: "mail", ToolID: created.ID}))
	want := map[string]any{"password": "pa55-w0rd", "host": "smtp.example.com"}
	if fmt.Sprint(src.ToolSetup) != fmt.Sprint(want) {
		t.Errorf("stored setup %v, want %v", src.ToolSetup, want)
	}
	// A Redacted value with nothing under it is refused.
	_, err := e.s.UpdateTool(ctx(), "d", owner, created.ID, func(x *tool.Tool) error {
		x.Integration.Setup["user"] = store.Redacted
		return nil
	})
	wantKind(t, err, fault.InvalidInput)
	// Turning the tool into a function drops the sealed setup.
	must[*tool.Tool](t)(e.s.UpdateTool(ctx(), "d", owner, created.ID, func(x *tool.Tool) error {
		x.Type, x.Integration, x.Function = tool.TypeFunction, nil, &tool.FunctionDef{}
		return nil
	}))
	src = must[*mergeSources](t)(mergeSrc(e, "d", store.MergeRef{AgentID: owner.ID, Tool: "mail", ToolID: created.ID}))
	if src.ToolSetup != nil {
		t.Errorf("setup %v left after the tool stopped being an integration", src.ToolSetup)
	}
}

func TestFindTool(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, "d")
	agentOnly := must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", agent, fnTool("agent_only")))
	agentClash := must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", agent, fnTool("clash")))
	inherit, tools, err := e.s.CreateTask(ctx(), "d", agent.ID, store.Task{Name: "i", InheritTools: true},
		[]tool.Tool{fnTool("clash"), fnTool("task_only")})
	if err != nil {
		t.Fatal(err)
	}
	closed, _, err := e.s.CreateTask(ctx(), "d", agent.ID, store.Task{Name: "c"}, []tool.Tool{fnTool("task_only")})
	if err != nil {
		t.Fatal(err)
	}
	other := e.agent(t, "d")
	tests := []struct {
		name, agentID, taskID, tool string
		wantID                      string
		wantKind                    fault.Kind
	}{
		{"agent's tool without a task", agent.ID, "", "agent_only", agentOnly.ID, ""},
		{"task's tool wins a clash", agent.ID, inherit.ID, "clash", tools[0].ID, ""},
		{"inherited agent tool", agent.ID, inherit.ID, "agent_only", agentOnly.ID, ""},
		{"task's own tool", agent.ID, inherit.ID, "task_only", tools[1].ID, ""},
		{"no inherit: the agent's tools are not seen", agent.ID, closed.ID, "agent_only", "", fault.NotFound},
		{"agent's clash without a task", agent.ID, "", "clash", agentClash.ID, ""},
		{"unknown name", agent.ID, "", "nope", "", fault.NotFound},
		{"task of another agent", other.ID, inherit.ID, "task_only", "", fault.NotFound},
	}
	// ToolsFor agrees with FindTool: the task's first, inherited agent tools after, clashes hidden.
	names := func(ts []tool.Tool) string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name+"@"+t.ID[len(t.ID)-4:])
		}
		return fmt.Sprint(out)
	}
	suffix := func(t *tool.Tool) string { return t.ID[len(t.ID)-4:] }
	if got, want := names(must[[]tool.Tool](t)(e.s.ToolsFor(ctx(), "d", agent.ID, inherit.ID))),
		fmt.Sprintf("[clash@%s task_only@%s agent_only@%s]", suffix(&tools[0]), suffix(&tools[1]), suffix(agentOnly)); got != want {
		t.Errorf("ToolsFor(inherit) = %s, want %s", got, want)
	}
	if got := must[[]tool.Tool](t)(e.s.ToolsFor(ctx(), "d", agent.ID, closed.ID)); len(got) != 1 || got[0].Name != "task_only" {
		t.Errorf("ToolsFor(no inherit) = %s", names(got))
	}
	if got := must[[]tool.Tool](t)(e.s.ToolsFor(ctx(), "d", agent.ID, "")); len(got) != 2 {
		t.Errorf("ToolsFor(agent) = %s", names(got))
	}
	_, err = e.s.ToolsFor(ctx(), "d", other.ID, inherit.ID)
	wantKind(t, err, fault.NotFound)

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.n.Reset()
			got, err := e.s.FindTool(ctx(), "d", tc.agentID, tc.taskID, tc.tool)
			if e.n.Total() != 1 {
				t.Errorf("%d requests, want 1 BatchGetItem", e.n.Total())
			}
			if tc.wantKind != "" {
				wantKind(t, err, tc.wantKind)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Tool.ID != tc.wantID {
				t.Errorf("found %s (%s), want %s", got.Tool.ID, got.Tool.Name, tc.wantID)
			}
		})
	}
}

func TestNothingHalfWritten(t *testing.T) {
	e := newEnv(t)
	owner := e.agent(t, "d")
	must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", owner, intTool("taken", map[string]any{"k": "v"})))
	before := len(e.scan(t))
	missing := store.Owner{Kind: store.OwnerAgent, ID: "0190a0a0-0000-7000-8000-000000000000"}
	tests := []struct {
		name string
		run  func() error
		kind fault.Kind
	}{
		{"tool under a missing agent", func() error {
			_, err := e.s.CreateTool(ctx(), "d", missing, intTool("x", map[string]any{"k": "v"}))
			return err
		}, fault.NotFound},
		{"duplicate tool with setup", func() error {
			_, err := e.s.CreateTool(ctx(), "d", owner, intTool("taken", map[string]any{"k": "other"}))
			return err
		}, fault.Conflict},
		{"task with tools under a missing agent", func() error {
			_, _, err := e.s.CreateTask(ctx(), "d", missing.ID, store.Task{Name: "t"}, []tool.Tool{intTool("x", map[string]any{"k": "v"})})
			return err
		}, fault.NotFound},
		{"task whose tools share a name", func() error {
			_, _, err := e.s.CreateTask(ctx(), "d", owner.ID, store.Task{Name: "t"}, []tool.Tool{fnTool("x"), fnTool("x")})
			return err
		}, fault.Conflict},
		{"task with a bad tool", func() error {
			_, _, err := e.s.CreateTask(ctx(), "d", owner.ID, store.Task{Name: "t"}, []tool.Tool{fnTool("ok"), fnTool("bad name")})
			return err
		}, fault.InvalidInput},
		{"session under a missing agent", func() error {
			_, err := e.s.CreateSession(ctx(), "d", store.Session{AgentID: missing.ID})
			return err
		}, fault.NotFound},
		{"session with a missing user", func() error {
			_, err := e.s.CreateSession(ctx(), "d", store.Session{AgentID: owner.ID, UserID: missing.ID})
			return err
		}, fault.NotFound},
		{"messages of a missing session", func() error {
			_, err := e.s.AppendMessages(ctx(), "d", missing.ID, []store.Message{{Role: "user", Content: "hi"}})
			return err
		}, fault.NotFound},
		{"messages with one bad role", func() error {
			_, err := e.s.AppendMessages(ctx(), "d", missing.ID, []store.Message{{Role: "user"}, {Role: "robot"}})
			return err
		}, fault.InvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantKind(t, tc.run(), tc.kind)
			if after := len(e.scan(t)); after != before {
				t.Errorf("%d items after the failed write, %d before", after, before)
			}
		})
	}
	// A task whose tools fail validation field by field names the field.
	_, _, err := e.s.CreateTask(ctx(), "d", owner.ID, store.Task{Name: "t"}, []tool.Tool{fnTool("ok"), fnTool("bad name")})
	if f := fault.FieldOf(err); f != "tools[1].name" {
		t.Errorf("field %q, want tools[1].name", f)
	}
}

// TestFindCallToolPlainSources: a call's find answers the merge's sources when none is sealed, as
// MergeSources reads them, so the executor need not read them again; it answers none when the
// merge needs a sealed value (the tool's stored setup, a setup value in the agent's or the task's
// or session's metadata), which only the executor opens. An empty setup entry needs nothing
// opened and is kept.
func TestFindCallToolPlainSources(t *testing.T) {
	e := newEnv(t)
	const dev = "d"
	args := map[string]any{merge.KeyIntegrationArgs: map[string]any{"plain": map[string]any{"units": "metric"}, "sealed": map[string]any{"units": "si"}},
		merge.KeyAPICallArgs: map[string]any{"get": map[string]any{"q": int64(3)}}}
	withSetup := map[string]any{merge.KeyIntegrationSetup: map[string]any{"sealed": map[string]any{"key": "s3cr3t"}, "plain": map[string]any{}}}
	for k, v := range args {
		withSetup[k] = v
	}
	a := must[*store.Agent](t)(e.s.CreateAgent(ctx(), dev, store.Agent{Name: "a", Metadata: args}))
	agent := store.Owner{Kind: store.OwnerAgent, ID: a.ID}
	task, _, err := e.s.CreateTask(ctx(), dev, a.ID, store.Task{Name: "t", InheritTools: true, Metadata: withSetup}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess := must[*store.Session](t)(e.s.CreateSession(ctx(), dev, store.Session{AgentID: a.ID, Metadata: args}))
	for _, in := range []tool.Tool{intTool("plain", nil), intTool("sealed", nil), intTool("stored_setup", map[string]any{"key": "v"}), fnTool("get")} {
		must[*tool.Tool](t)(e.s.CreateTool(ctx(), dev, agent, in))
	}
	for _, tc := range []struct {
		name, taskID, sessionID, tool string
		plain                         bool
	}{
		{"agent's args only", "", "", "plain", true},
		{"session's args over the agent's", "", sess.ID, "get", true},
		{"the task's empty setup entry", task.ID, "", "plain", true},
		{"a setup value in the task's metadata", task.ID, "", "sealed", false},
		{"the tool's stored setup", "", "", "stored_setup", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.n.Reset()
			found := must[*store.FoundTool](t)(e.s.FindCallTool(ctx(), dev, a.ID, tc.taskID, tc.sessionID, tc.tool))
			if e.n.Total() != 1 {
				t.Errorf("%d requests, want the one BatchGetItem", e.n.Total())
			}
			if (found.Plain != nil) != tc.plain {
				t.Fatalf("plain sources %v, want them: %v", found.Plain, tc.plain)
			}
			if !tc.plain {
				return
			}
			read := must[*mergeSources](t)(mergeSrc(e, dev, store.MergeRef{AgentID: a.ID, TaskID: tc.taskID, SessionID: tc.sessionID,
				Tool: tc.tool, ToolID: found.Tool.ID}))
			if fmt.Sprint(*found.Plain) != fmt.Sprint(*read) {
				t.Errorf("the find's sources %v, MergeSources' %v", *found.Plain, *read)
			}
		})
	}
}
