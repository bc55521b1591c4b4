package store_test

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/tool"
)

func TestPayloadRoundTrip(t *testing.T) {
	e := newEnv(t)
	big := make([]byte, 1<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{0, 1, store.ChunkSize, store.ChunkSize + 1, 1 << 20} {
		ref := must[string](t)(e.s.PutPayload(ctx(), "d", big[:size], 0))
		got := must[[]byte](t)(e.s.GetPayload(ctx(), "d", ref))
		if !bytes.Equal(got, big[:size]) {
			t.Errorf("%d bytes came back as %d different ones", size, len(got))
		}
	}
	// Every chunk fits DynamoDB's item limit with room to spare.
	for _, it := range e.scan(t) {
		if b, ok := it["data"].(*types.AttributeValueMemberB); ok && len(b.Value) > store.ChunkSize {
			t.Errorf("a chunk of %d bytes", len(b.Value))
		}
	}

	// Values: small ones travel inline, large ones as a reference that reads back.
	small := map[string]any{"x": int64(1)}
	if v := must[any](t)(e.s.StoreValue(ctx(), "d", small, time.Hour)); !jsonv.Equal(v, small) {
		t.Errorf("small value became %v", v)
	}
	large := map[string]any{"text": strings.Repeat("é", store.InlineLimit), "n": int64(3)}
	v := must[any](t)(e.s.StoreValue(ctx(), "d", large, time.Hour))
	ref, ok := store.RefOf(v)
	if !ok || v.(map[string]any)["bytes"].(int64) <= store.InlineLimit {
		t.Fatalf("large value stored as %v", v)
	}
	back := must[any](t)(e.s.LoadValue(ctx(), "d", v))
	if !jsonv.Equal(back, large) {
		t.Error("large value did not read back equal")
	}
	raw := e.rawItem(t, "DEV#d#PAYLOAD#"+ref, "MANIFEST")
	if ttlOf(t, raw) != e.clock.t.Add(time.Hour).Unix() {
		t.Errorf("payload ttl %d", ttlOf(t, raw))
	}

	// A write that stopped before its manifest is not a value.
	if _, err := e.db.DeleteItem(ctx(), &dynamodb.DeleteItemInput{TableName: &e.table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "DEV#d#PAYLOAD#" + ref}, "sk": &types.AttributeValueMemberS{Value: "MANIFEST"},
	}}); err != nil {
		t.Fatal(err)
	}
	_, err := e.s.GetPayload(ctx(), "d", ref)
	wantKind(t, err, fault.NotFound)
	_, err = e.s.PutPayload(ctx(), "d", make([]byte, store.MaxPayload+1), 0)
	wantKind(t, err, fault.TooLarge)
}

func TestSecrets(t *testing.T) {
	e := newEnv(t)
	first := must[*store.Secret](t)(e.s.PutSecret(ctx(), "d", "SMTP_PASSWORD", []byte("s3cret-value")))
	e.clock.advance(time.Minute)
	second := must[*store.Secret](t)(e.s.PutSecret(ctx(), "d", "SMTP_PASSWORD", []byte("n3w-value")))
	if !second.CreatedAt.Equal(first.CreatedAt) || !second.UpdatedAt.After(first.UpdatedAt) {
		t.Errorf("replaced secret: created %v→%v updated %v→%v", first.CreatedAt, second.CreatedAt, first.UpdatedAt, second.UpdatedAt)
	}
	if v := must[[]byte](t)(e.s.OpenSecret(ctx(), "d", "SMTP_PASSWORD")); string(v) != "n3w-value" {
		t.Errorf("opened %q", v)
	}
	for _, it := range e.scan(t) {
		if b, ok := it["data"].(*types.AttributeValueMemberB); ok && bytes.Contains(b.Value, []byte("n3w-value")) {
			t.Error("the secret is stored in the clear")
		}
	}
	l := must[*store.List[store.Secret]](t)(e.s.ListSecrets(ctx(), "d", store.Page{}))
	if len(l.Items) != 1 || l.Items[0].Name != "SMTP_PASSWORD" {
		t.Errorf("list %+v", l.Items)
	}
	_, err := e.s.PutSecret(ctx(), "d", "bad-name", []byte("x"))
	wantKind(t, err, fault.InvalidInput)
	if err := e.s.DeleteSecret(ctx(), "d", "SMTP_PASSWORD"); err != nil {
		t.Fatal(err)
	}
	_, err = e.s.OpenSecret(ctx(), "d", "SMTP_PASSWORD")
	wantKind(t, err, fault.NotFound)
	wantKind(t, e.s.DeleteSecret(ctx(), "d", "SMTP_PASSWORD"), fault.NotFound)
}

func TestFlags(t *testing.T) {
	e := newEnv(t)
	defaults := must[map[string]bool](t)(store.ParseFlagDefaults("auto_run_tools_chat=false, auto_tool_calls_prompt_step=true"))
	if err := e.s.SetFlag(ctx(), "d", "auto_run_tools_chat", true); err != nil {
		t.Fatal(err)
	}
	got := must[map[string]bool](t)(e.s.Flags(ctx(), "d", defaults))
	if !got["auto_run_tools_chat"] || !got["auto_tool_calls_prompt_step"] || len(got) != 2 {
		t.Errorf("flags %v", got)
	}
	if other := must[map[string]bool](t)(e.s.Flags(ctx(), "other", defaults)); other["auto_run_tools_chat"] {
		t.Error("another developer's flag leaked")
	}
	wantKind(t, e.s.SetFlag(ctx(), "d", "Bad Name", true), fault.InvalidInput)
}

func TestParseFlagDefaults(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]bool
		ok   bool
	}{
		{"", map[string]bool{}, true},
		{"a=true", map[string]bool{"a": true}, true},
		{" a = false ,b=1,", map[string]bool{"a": false, "b": true}, true},
		{"a", nil, false},
		{"a=maybe", nil, false},
		{"A=true", nil, false},
	}
	for _, tc := range tests {
		got, err := store.ParseFlagDefaults(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v", tc.in, err)
			continue
		}
		if tc.ok && len(got) != len(tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
			}
		}
	}
}

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
