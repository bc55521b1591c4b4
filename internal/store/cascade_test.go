package store_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/tool"
)

func TestDeleteAgentCascades(t *testing.T) {
	e := newEnv(t)
	keep := e.agent(t, "d") // another agent of the same developer stays whole
	must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", keep, intTool("t", map[string]any{"k": "v"})))
	keepItems := len(e.scan(t))

	agent := e.agent(t, "d")
	tl := must[*tool.Tool](t)(e.s.CreateTool(ctx(), "d", agent, intTool("t", map[string]any{"k": "v"})))
	task, tools, err := e.s.CreateTask(ctx(), "d", agent.ID, store.Task{Name: "t"}, []tool.Tool{intTool("tt", map[string]any{"k": "v"})})
	if err != nil {
		t.Fatal(err)
	}
	sess := must[*store.Session](t)(e.s.CreateSession(ctx(), "d", store.Session{AgentID: agent.ID}))
	must[[]store.Message](t)(e.s.AppendMessages(ctx(), "d", sess.ID, []store.Message{{Role: "user", Content: "hi"}}))
	doc := must[*store.Doc](t)(e.s.CreateDoc(ctx(), "d", agent, store.Doc{Title: "d"}))
	to := store.Owner{Kind: store.OwnerTask, ID: task.ID}

	// A delete that stopped half way (the agent marked, nothing removed yet) leaves nothing the
	// API can reach, and nothing new can be added under it.
	if _, err := e.db.UpdateItem(ctx(), &dynamodb.UpdateItemInput{
		TableName: &e.table,
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "DEV#d"}, "sk": &types.AttributeValueMemberS{Value: "AGENT#" + agent.ID},
		},
		UpdateExpression:          ptr("SET deleting = :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}},
	}); err != nil {
		t.Fatal(err)
	}
	unreachable := map[string]func() error{
		"GetAgent":  func() error { _, err := e.s.GetAgent(ctx(), "d", agent.ID); return err },
		"GetTool":   func() error { _, err := e.s.GetTool(ctx(), "d", agent, tl.ID); return err },
		"ListTools": func() error { _, err := e.s.ListTools(ctx(), "d", agent, store.Page{}); return err },
		"FindTool":  func() error { _, err := e.s.FindTool(ctx(), "d", agent.ID, "", "t"); return err },
		"ListTasks": func() error { _, err := e.s.ListTasks(ctx(), "d", agent.ID, store.Page{}); return err },
		"ListDocs":  func() error { _, err := e.s.ListDocs(ctx(), "d", agent, store.Page{}); return err },
		"GetDoc":    func() error { _, err := e.s.GetDoc(ctx(), "d", agent, doc.ID); return err },
		"MergeSources": func() error {
			_, err := e.s.MergeSources(ctx(), "d", store.MergeRef{AgentID: agent.ID, Tool: "t"})
			return err
		},
		"CreateTool": func() error { _, err := e.s.CreateTool(ctx(), "d", agent, fnTool("new")); return err },
		"CreateTask": func() error {
			_, _, err := e.s.CreateTask(ctx(), "d", agent.ID, store.Task{Name: "n"}, nil)
			return err
		},
		"CreateSession": func() error { _, err := e.s.CreateSession(ctx(), "d", store.Session{AgentID: agent.ID}); return err },
	}
	for name, run := range unreachable {
		t.Run("half-deleted/"+name, func(t *testing.T) { wantKind(t, run(), fault.NotFound) })
	}
	if l := must[*store.List[store.Agent]](t)(e.s.ListAgents(ctx(), "d", store.Page{})); len(l.Items) != 1 {
		t.Errorf("the half-deleted agent is listed: %d agents", len(l.Items))
	}

	// Repeating the delete finishes it: nothing of the agent is left in the table.
	if err := e.s.DeleteAgent(ctx(), "d", agent.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(e.scan(t)); n != keepItems {
		for _, it := range e.scan(t) {
			t.Logf("left: %v %v", it["pk"], it["sk"])
		}
		t.Errorf("%d items after the delete, want %d (the other agent's)", n, keepItems)
	}
	for name, err := range map[string]error{
		"task":      func() error { _, err := e.s.GetTask(ctx(), "d", task.ID); return err }(),
		"task tool": func() error { _, err := e.s.GetTool(ctx(), "d", to, tools[0].ID); return err }(),
		"session":   func() error { _, err := e.s.GetSession(ctx(), "d", sess.ID); return err }(),
		"messages":  func() error { _, err := e.s.ListMessages(ctx(), "d", sess.ID, store.Page{}); return err }(),
	} {
		if !fault.Is(err, fault.NotFound) {
			t.Errorf("%s: %v, want NotFound", name, err)
		}
	}
	wantKind(t, e.s.DeleteAgent(ctx(), "d", agent.ID), fault.NotFound)
	// The other agent's tool is whole, setup included.
	src := must[*mergeSources](t)(mergeSrc(e, "d", store.MergeRef{AgentID: keep.ID, Tool: "t", ToolID: must[*store.FoundTool](t)(e.s.FindTool(ctx(), "d", keep.ID, "", "t")).Tool.ID}))
	if src.ToolSetup["k"] != "v" {
		t.Errorf("other agent's tool setup %v", src.ToolSetup)
	}
}

func TestDeleteTaskAndSession(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, "d")
	before := len(e.scan(t))
	task, _, err := e.s.CreateTask(ctx(), "d", agent.ID, store.Task{Name: "t"}, []tool.Tool{intTool("x", map[string]any{"k": "v"})})
	if err != nil {
		t.Fatal(err)
	}
	sess := must[*store.Session](t)(e.s.CreateSession(ctx(), "d", store.Session{AgentID: agent.ID}))
	must[[]store.Message](t)(e.s.AppendMessages(ctx(), "d", sess.ID, []store.Message{{Role: "user", Content: "hi"}}))
	if l := must[*store.List[store.Task]](t)(e.s.ListTasks(ctx(), "d", agent.ID, store.Page{})); len(l.Items) != 1 {
		t.Fatalf("tasks %+v", l.Items)
	}
	if err := e.s.DeleteTask(ctx(), "d", task.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.s.DeleteSession(ctx(), "d", sess.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(e.scan(t)); n != before {
		t.Errorf("%d items after deleting the task and session, %d before", n, before)
	}
	if l := must[*store.List[store.Task]](t)(e.s.ListTasks(ctx(), "d", agent.ID, store.Page{})); len(l.Items) != 0 {
		t.Errorf("deleted task still listed: %+v", l.Items)
	}
}
