package resources_test

import (
	"strings"
	"testing"

	"sinew/internal/jsonv"
	"sinew/internal/store"
)

func TestAgentsLifecycle(t *testing.T) {
	e := newEnv(t)
	a := e.must(201, dev1, "POST", "/agents", `{"name":"helper","about":"helps","model":"m1","instructions":["be brief","be kind"],
		"default_settings":{"temperature":0.5,"max_tokens":100},"metadata":{"team":"x","x-integration-args":{"wx":{"units":"metric"}}}}`)
	id := a.str("id")
	if len(id) != 36 || a.str("created_at") == "" || a.get("default_settings", "max_tokens") != int64(100) {
		t.Fatalf("created %s", a.raw)
	}
	got := e.must(200, dev1, "GET", "/agents/"+id, "")
	if !jsonv.Equal(got.body, a.body) {
		t.Errorf("GET %s, POST answered %s", got.raw, a.raw)
	}

	// PATCH merges: metadata key by key, null removes, other fields stay.
	p := e.must(200, dev1, "PATCH", "/agents/"+id, `{"about":"helps more","metadata":{"team":null,"owner":"me"}}`)
	if p.str("about") != "helps more" || p.str("name") != "helper" || p.str("model") != "m1" {
		t.Errorf("patch gave %s", p.raw)
	}
	wantMeta := map[string]any{"owner": "me", "x-integration-args": map[string]any{"wx": map[string]any{"units": "metric"}}}
	if !jsonv.Equal(p.get("metadata"), wantMeta) {
		t.Errorf("metadata after patch %v, want %v", p.get("metadata"), wantMeta)
	}

	// PUT replaces: what is left out is gone.
	u := e.must(200, dev1, "PUT", "/agents/"+id, `{"name":"renamed","instructions":"one line"}`)
	if u.str("name") != "renamed" || u.get("about") != nil || u.get("metadata") != nil || u.str("instructions") != "one line" {
		t.Errorf("put gave %s", u.raw)
	}
	if u.str("created_at") != a.str("created_at") {
		t.Errorf("created_at changed: %s then %s", a.str("created_at"), u.str("created_at"))
	}

	e.must(204, dev1, "DELETE", "/agents/"+id, "")
	e.must(404, dev1, "GET", "/agents/"+id, "")
	e.must(404, dev1, "DELETE", "/agents/"+id, "")
}

func TestListsPaginate(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		e.agent(dev1, n)
	}
	e.agent(dev2, "other")
	var names []string
	cursor := ""
	for i := 0; ; i++ {
		path := "/agents?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		l := e.must(200, dev1, "GET", path, "")
		for _, it := range l.get("items").([]any) {
			names = append(names, it.(map[string]any)["name"].(string))
		}
		cursor = l.str("next_cursor")
		if cursor == "" {
			if l.get("next_cursor") != nil || l.obj()["next_cursor"] != nil {
				t.Errorf("last page next_cursor %v", l.get("next_cursor"))
			}
			break
		}
		if i > 3 {
			t.Fatal("pagination does not end")
		}
	}
	// Newest first, only the caller's.
	if js(names) != `["c","b","a"]` {
		t.Errorf("pages gave %v", names)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "cursor=bogus"} {
		if a := e.do(dev1, "GET", "/agents?"+q, ""); a.status != 400 {
			t.Errorf("?%s: %d %s, want 400", q, a.status, a.raw)
		}
	}
}

// TestSetupRedactedAndKeptOnWrite: setup values never come back; "<redacted>" written back (by PUT
// or PATCH) keeps the stored secret, which the executors' merge still reads.
func TestSetupRedactedAndKeptOnWrite(t *testing.T) {
	e := newEnv(t)
	a := e.must(201, dev1, "POST", "/agents", `{"name":"a","metadata":{"x-integration-setup":{"wx":{"api_key":"sk-1"}},"x-api_call-setup":{"hook":{"headers":{"Authorization":"Bearer s3"}}}}}`)
	id := a.str("id")
	if a.get("metadata", "x-integration-setup", "wx", "api_key") != store.Redacted ||
		a.get("metadata", "x-api_call-setup", "hook", "headers") != store.Redacted {
		t.Fatalf("setup not redacted: %s", a.raw)
	}
	for _, path := range []string{"/agents/" + id, "/agents"} {
		if g := e.must(200, dev1, "GET", path, ""); strings.Contains(g.raw, "sk-1") || strings.Contains(g.raw, "s3") {
			t.Errorf("GET %s shows a secret: %s", path, g.raw)
		}
	}
	// PUT the answer's own metadata back (redacted) with a new key: both secrets stay.
	meta := a.get("metadata").(map[string]any)
	meta["x-integration-setup"].(map[string]any)["wx"].(map[string]any)["region"] = "eu"
	e.must(200, dev1, "PUT", "/agents/"+id, js(map[string]any{"name": "a2", "metadata": meta}))
	// PATCH something else.
	e.must(200, dev1, "PATCH", "/agents/"+id, `{"about":"x"}`)
	src, err := e.st.MergeSources(t.Context(), dev1, store.MergeRef{AgentID: id, Tool: "wx"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"api_key": "sk-1", "region": "eu"}; !jsonv.Equal(src.Agent["x-integration-setup"], want) {
		t.Errorf("stored setup %v, want %v", src.Agent["x-integration-setup"], want)
	}
	// "<redacted>" where nothing is stored is refused, naming the field.
	r := e.must(400, dev1, "PATCH", "/agents/"+id, `{"metadata":{"x-integration-setup":{"wx":{"nope":"<redacted>"}}}}`)
	if r.errField() != "metadata.x-integration-setup.wx.nope" {
		t.Errorf("field %q", r.errField())
	}

	// A tool's integration.setup, the same way.
	tl := e.must(201, dev1, "POST", "/agents/"+id+"/tools", `{"name":"wx","type":"integration","integration":{"provider":"weather","setup":{"openweathermap_api_key":"owm-secret"}}}`)
	if strings.Contains(tl.raw, "owm-secret") || tl.get("integration", "setup", "openweathermap_api_key") != store.Redacted {
		t.Fatalf("tool setup shown: %s", tl.raw)
	}
	tid := tl.str("id")
	e.must(200, dev1, "PATCH", "/agents/"+id+"/tools/"+tid, `{"description":"weather"}`)
	put := e.must(200, dev1, "GET", "/agents/"+id+"/tools/"+tid, "")
	e.must(200, dev1, "PUT", "/agents/"+id+"/tools/"+tid, put.raw) // read-only fields ignored, setup redacted kept
	src, err = e.st.MergeSources(t.Context(), dev1, store.MergeRef{AgentID: id, Tool: "wx", ToolID: tid})
	if err != nil {
		t.Fatal(err)
	}
	if src.ToolSetup["openweathermap_api_key"] != "owm-secret" {
		t.Errorf("tool setup after writes %v", src.ToolSetup)
	}
}
