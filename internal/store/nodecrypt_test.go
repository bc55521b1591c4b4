package store_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/merge"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/tool"
)

// writeOnly is the sealer of the API role: it may seal, and opening anything fails
// the test, so every write path run through it is shown never to decrypt.
type writeOnly struct {
	t     *testing.T
	inner store.Sealer
	seals int
}

func (w *writeOnly) Seal(ctx context.Context, encCtx map[string]string, pt []byte) ([]byte, error) {
	w.seals++
	return w.inner.Seal(ctx, encCtx, pt)
}

func (w *writeOnly) Open(_ context.Context, encCtx map[string]string, _ []byte) ([]byte, error) {
	w.t.Errorf("a write opened a sealed value (context %v)", encCtx)
	return nil, fmt.Errorf("this sealer cannot open")
}

// blobsOf is the sealed blobs of the items whose key contains id, by setting.
func blobsOf(all map[string][]byte, id string) map[string][]byte {
	out := map[string][]byte{}
	for k, b := range all {
		if strings.Contains(k, id) {
			out[k[strings.LastIndex(k, "/")+1:]] = b
		}
	}
	return out
}

func TestWritesNeverOpenSealedValues(t *testing.T) {
	e := newEnv(t)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{42}, 32)) // the key newEnv's store opens with
	if err != nil {
		t.Fatal(err)
	}
	wo := &writeOnly{t: t, inner: sl}
	api := store.New(e.db, e.table, wo) // the API role's store: no Open
	const dev = "d"
	setup := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	meta := func(entry map[string]any) map[string]any {
		return map[string]any{
			merge.KeyIntegrationSetup: map[string]any{"send": entry, "empty": map[string]any{}},
			merge.KeyAPICallSetup:     map[string]any{"call": map[string]any{"headers": map[string]any{"X": "h1"}}},
			"note":                    "visible",
		}
	}
	a := must[*store.Agent](t)(api.CreateAgent(ctx(), dev, store.Agent{Name: "a", Metadata: meta(setup("keep", "k1", "change", "c1", "drop", "d1"))}))
	task, _, err := api.CreateTask(ctx(), dev, a.ID, store.Task{Name: "t", Metadata: meta(setup("keep", "k2", "change", "c2", "drop", "d2"))},
		[]tool.Tool{intTool("send", setup("keep", "k3", "change", "c3", "drop", "d3"))})
	if err != nil {
		t.Fatal(err)
	}
	sess := must[*store.Session](t)(api.CreateSession(ctx(), dev, store.Session{AgentID: a.ID, Metadata: meta(setup("keep", "k4", "change", "c4", "drop", "d4"))}))
	at := must[*tool.Tool](t)(api.CreateTool(ctx(), dev, store.Owner{Kind: store.OwnerAgent, ID: a.ID}, intTool("send", setup("keep", "k5", "change", "c5", "drop", "d5"))))
	tt := must[*store.List[tool.Tool]](t)(api.ListTools(ctx(), dev, store.Owner{Kind: store.OwnerTask, ID: task.ID}, store.Page{})).Items[0]

	// A PATCH that does not touch metadata keeps every blob and seals nothing.
	before := sealedBlobs(t, e)
	wo.seals = 0
	must[*store.Agent](t)(api.UpdateAgent(ctx(), dev, a.ID, func(x *store.Agent) error { x.About = "patched"; return nil }))
	must[*store.Task](t)(api.UpdateTask(ctx(), dev, task.ID, func(x *store.Task) error { x.Description = "patched"; return nil }))
	must[*store.Session](t)(api.UpdateSession(ctx(), dev, sess.ID, func(x *store.Session) error { x.Situation = "patched"; return nil }))
	must[*tool.Tool](t)(api.UpdateTool(ctx(), dev, store.Owner{Kind: store.OwnerAgent, ID: a.ID}, at.ID, func(x *tool.Tool) error {
		x.Description = "patched"
		return nil
	}))
	if after := sealedBlobs(t, e); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a PATCH without setup changed sealed values")
	}
	if wo.seals != 0 {
		t.Errorf("a PATCH without setup sealed %d values", wo.seals)
	}

	// Setup written back: "keep" as Redacted, "change" with a new value, "drop" left out, "add" new.
	upd := func(n string) map[string]any {
		return setup("keep", store.Redacted, "change", "new"+n, "add", "a"+n)
	}
	redactedMeta := func(m map[string]any, n string) {
		m[merge.KeyIntegrationSetup].(map[string]any)["send"] = upd(n)
	}
	before = sealedBlobs(t, e)
	must[*store.Agent](t)(api.UpdateAgent(ctx(), dev, a.ID, func(x *store.Agent) error { redactedMeta(x.Metadata, "1"); return nil }))
	must[*store.Task](t)(api.UpdateTask(ctx(), dev, task.ID, func(x *store.Task) error { redactedMeta(x.Metadata, "2"); return nil }))
	must[*store.Session](t)(api.UpdateSession(ctx(), dev, sess.ID, func(x *store.Session) error { redactedMeta(x.Metadata, "4"); return nil }))
	for _, c := range []struct {
		o  store.Owner
		id string
		n  string
	}{{store.Owner{Kind: store.OwnerTask, ID: task.ID}, tt.ID, "3"}, {store.Owner{Kind: store.OwnerAgent, ID: a.ID}, at.ID, "5"}} {
		must[*tool.Tool](t)(api.UpdateTool(ctx(), dev, c.o, c.id, func(x *tool.Tool) error {
			x.Integration.Setup = upd(c.n)
			return nil
		}))
	}
	after := sealedBlobs(t, e)
	for _, id := range []string{a.ID, task.ID, sess.ID, tt.ID, at.ID} {
		b, aft := blobsOf(before, id), blobsOf(after, id)
		if !bytes.Equal(b["keep"], aft["keep"]) || aft["keep"] == nil {
			t.Errorf("%s: the Redacted value's blob was not kept byte for byte", id)
		}
		if bytes.Equal(b["change"], aft["change"]) {
			t.Errorf("%s: the changed value kept its old blob", id)
		}
		if _, ok := aft["drop"]; ok {
			t.Errorf("%s: the value left out is still stored", id)
		}
		if aft["add"] == nil {
			t.Errorf("%s: the new value is not stored", id)
		}
	}

	// Only the executor's store opens, and it finds what was written.
	checks := []struct {
		ref  store.MergeRef
		want string
	}{
		{store.MergeRef{AgentID: a.ID, TaskID: task.ID, Tool: "send", ToolID: tt.ID},
			"agent map[add:a1 change:new1 keep:k1] scope map[add:a2 change:new2 keep:k2] tool map[add:a3 change:new3 keep:k3]"},
		{store.MergeRef{AgentID: a.ID, SessionID: sess.ID, Tool: "send", ToolID: at.ID},
			"agent map[add:a1 change:new1 keep:k1] scope map[add:a4 change:new4 keep:k4] tool map[add:a5 change:new5 keep:k5]"},
	}
	for _, c := range checks {
		src := must[*mergeSources](t)(mergeSrc(e, dev, c.ref))
		got := fmt.Sprintf("agent %v scope %v tool %v", src.Agent[merge.KeyIntegrationSetup], src.Scope[merge.KeyIntegrationSetup], src.ToolSetup)
		if got != c.want {
			t.Errorf("sources %s, want %s", got, c.want)
		}
	}
	// An empty entry is kept as an entry (it replaces the agent's at tool level), and the
	// api_call setup is untouched by the integration updates.
	src := must[*mergeSources](t)(mergeSrc(e, dev, store.MergeRef{AgentID: a.ID, TaskID: task.ID, Tool: "empty"}))
	if e, ok := src.Scope[merge.KeyIntegrationSetup]; !ok || len(e) != 0 {
		t.Errorf("the task's empty entry came back as %v, %v", e, ok)
	}
	src = must[*mergeSources](t)(mergeSrc(e, dev, store.MergeRef{AgentID: a.ID, SessionID: sess.ID, Tool: "call"}))
	if h, _ := src.Scope[merge.KeyAPICallSetup]["headers"].(map[string]any); h["X"] != "h1" {
		t.Errorf("api_call setup after the updates: %v", src.Scope)
	}

	// A Redacted value with nothing stored under it is still refused, without opening anything.
	_, err = api.UpdateAgent(ctx(), dev, a.ID, func(x *store.Agent) error {
		x.Metadata[merge.KeyIntegrationSetup].(map[string]any)["send"] = setup("drop", store.Redacted)
		return nil
	})
	wantKind(t, err, fault.InvalidInput)
	_, err = api.UpdateTool(ctx(), dev, store.Owner{Kind: store.OwnerAgent, ID: a.ID}, at.ID, func(x *tool.Tool) error {
		x.Integration.Setup = setup("drop", store.Redacted)
		return nil
	})
	wantKind(t, err, fault.InvalidInput)
}
