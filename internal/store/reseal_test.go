package store_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/merge"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/tool"
)

// sealedBlobs is every sealed value in the table by item and entry, read raw.
func sealedBlobs(t *testing.T, e *env) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	items, err := e.db.Scan(ctx(), &dynamodb.ScanInput{TableName: &e.table})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items.Items {
		id := it["pk"].(*types.AttributeValueMemberS).Value + "|" + it["sk"].(*types.AttributeValueMemberS).Value
		if m, ok := it["sealed"].(*types.AttributeValueMemberM); ok {
			for k, v := range m.Value {
				out[id+"|"+k] = v.(*types.AttributeValueMemberB).Value
			}
		}
		if k, ok := it["kind"].(*types.AttributeValueMemberS); ok && k.Value == "secret" {
			out[id] = it["data"].(*types.AttributeValueMemberB).Value
		}
	}
	return out
}

func TestResealAll(t *testing.T) {
	e := newEnv(t)
	const dev = "dev#1/ü" // escaped in keys: the contexts must be rebuilt with the raw id
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{42}, 32))
	if err != nil {
		t.Fatal(err)
	}
	a := must[*store.Agent](t)(e.s.CreateAgent(ctx(), dev, store.Agent{Name: "a", Metadata: map[string]any{
		merge.KeyIntegrationSetup: map[string]any{"send": map[string]any{"password": "p1"}, "other": map[string]any{"k": "p2"}},
		merge.KeyAPICallSetup:     map[string]any{"call": map[string]any{"headers": map[string]any{"X": "p3"}}},
	}}))
	task, _, err := e.s.CreateTask(ctx(), dev, a.ID, store.Task{Name: "t", Metadata: map[string]any{
		merge.KeyIntegrationSetup: map[string]any{"send": map[string]any{"password": "p4"}},
	}}, []tool.Tool{{Name: "tt", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "dummy", Setup: map[string]any{"s": "p5"}}}})
	if err != nil {
		t.Fatal(err)
	}
	sess := must[*store.Session](t)(e.s.CreateSession(ctx(), dev, store.Session{AgentID: a.ID, Metadata: map[string]any{
		merge.KeyAPICallSetup: map[string]any{"call": map[string]any{"headers": map[string]any{"X": "p6"}}},
	}}))
	at := must[*tool.Tool](t)(e.s.CreateTool(ctx(), dev, store.Owner{Kind: store.OwnerAgent, ID: a.ID}, tool.Tool{
		Name: "send", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "email", Setup: map[string]any{"user": "p7"}}}))
	must[*store.Secret](t)(e.s.PutSecret(ctx(), dev, "S1", []byte("p8")))
	must[*store.Secret](t)(e.s.PutSecret(ctx(), "dev-2", "S1", []byte("p9")))
	// Items with nothing sealed are not touched.
	must[*store.Agent](t)(e.s.CreateAgent(ctx(), dev, store.Agent{Name: "plain"}))

	before := sealedBlobs(t, e)
	if len(before) != 9 {
		t.Fatalf("%d sealed values before, want 9: %v", len(before), keys(before))
	}
	var calls atomic.Int64
	reseal := func(c context.Context, encCtx map[string]string, b []byte) ([]byte, error) {
		calls.Add(1)
		pt, err := sl.Open(c, encCtx, b) // fails unless the context is the one sealed with
		if err != nil {
			return nil, err
		}
		return sl.Seal(c, encCtx, pt)
	}
	got, err := e.s.ResealAll(ctx(), e.db, reseal)
	if err != nil {
		t.Fatal(err)
	}
	want := store.ResealCounts{Items: 7, Values: 9, Resealed: 9}
	if got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	after := sealedBlobs(t, e)
	for k, b := range before {
		if bytes.Equal(after[k], b) {
			t.Errorf("%s not resealed", k)
		}
	}
	// Everything still opens where the executors read it.
	src, err := e.s.MergeSources(ctx(), dev, store.MergeRef{AgentID: a.ID, TaskID: task.ID, Tool: "send", ToolID: at.ID})
	if err != nil {
		t.Fatal(err)
	}
	if src.Agent[merge.KeyIntegrationSetup]["password"] != "p1" || src.Scope[merge.KeyIntegrationSetup]["password"] != "p4" || src.ToolSetup["user"] != "p7" {
		t.Errorf("sources after reseal: %+v", src)
	}
	src, err = e.s.MergeSources(ctx(), dev, store.MergeRef{AgentID: a.ID, SessionID: sess.ID, Tool: "call"})
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := src.Scope[merge.KeyAPICallSetup]["headers"].(map[string]any); h["X"] != "p6" {
		t.Errorf("session setup after reseal: %+v", src.Scope)
	}
	if v, err := e.s.OpenSecret(ctx(), dev, "S1"); err != nil || string(v) != "p8" {
		t.Errorf("secret after reseal: %q, %v", v, err)
	}

	// A value rewritten while it is being resealed keeps the new write.
	first := true
	racing := func(c context.Context, encCtx map[string]string, b []byte) ([]byte, error) {
		if first && encCtx["owner"] == "secret" && encCtx["developer"] == dev {
			first = false
			if _, err := e.s.PutSecret(c, dev, "S1", []byte("newer")); err != nil {
				return nil, err
			}
		}
		return reseal(c, encCtx, b)
	}
	got, err = e.s.ResealAll(ctx(), e.db, racing)
	if err != nil || got.Changed != 1 || got.Resealed != 8 {
		t.Errorf("racing run: %+v, %v", got, err)
	}
	if v, _ := e.s.OpenSecret(ctx(), dev, "S1"); string(v) != "newer" {
		t.Errorf("the concurrent write was lost: %q", v)
	}

	// A refused value is counted, the rest go on, and the error names the item, not a value.
	refuse := func(c context.Context, encCtx map[string]string, b []byte) ([]byte, error) {
		if encCtx["tool"] == "S1" && encCtx["developer"] == "dev-2" {
			return nil, fault.New(fault.Internal, "no")
		}
		return reseal(c, encCtx, b)
	}
	got, err = e.s.ResealAll(ctx(), e.db, refuse)
	if err == nil || got.Failed != 1 || got.Resealed != 8 {
		t.Errorf("refusing run: %+v, %v", got, err)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
