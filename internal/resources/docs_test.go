package resources_test

import (
	"strings"
	"testing"
)

func TestDocsAndSearch(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(dev1, "a")
	user := e.must(201, dev1, "POST", "/users", `{"name":"u"}`).str("id")
	for _, owner := range []string{"/agents/" + agent, "/users/" + user} {
		t.Run(owner[1:6], func(t *testing.T) {
			docs := map[string]string{}
			for _, d := range []struct{ title, body string }{
				{"Café opening hours", `"The café opens at nine and closes at five."`},
				{"Weather", `["Rain is likely tomorrow.", "Bring an umbrella to the cafe."]`},
				{"Taxes", `"File before April."`},
			} {
				meta := `{"lang":"en"}`
				if d.title == "Taxes" {
					meta = `{"lang":"fr"}`
				}
				a := e.must(201, dev1, "POST", owner+"/docs", `{"title":"`+d.title+`","content":`+d.body+`,"metadata":`+meta+`}`)
				docs[d.title] = a.str("id")
			}
			l := e.must(200, dev1, "GET", owner+"/docs", "")
			if len(l.get("items").([]any)) != 3 || l.str("items", 0, "title") != "Café opening hours" {
				t.Errorf("list %s", l.raw)
			}

			s := e.must(200, dev1, "POST", owner+"/search", `{"text":"CAFE hours"}`)
			if s.str("docs", 0, "title") != "Café opening hours" || s.str("docs", 1, "title") != "Weather" || s.get("docs", 2) != nil {
				t.Errorf("search %s", s.raw)
			}
			if s.get("docs", 0, "score").(float64) <= s.get("docs", 1, "score").(float64) {
				t.Errorf("scores not descending: %s", s.raw)
			}
			// Julep's nested form wins over the top level; limit bounds the answer.
			s = e.must(200, dev1, "POST", owner+"/search", `{"text":"nothing matches","search_params":{"text":"cafe","limit":1}}`)
			if len(s.get("docs").([]any)) != 1 {
				t.Errorf("search_params %s", s.raw)
			}
			s = e.must(200, dev1, "POST", owner+"/search", `{"text":"april cafe","metadata_filter":{"lang":"fr"}}`)
			if s.str("docs", 0, "title") != "Taxes" || s.get("docs", 1) != nil {
				t.Errorf("metadata_filter %s", s.raw)
			}
			if s := e.must(200, dev1, "POST", owner+"/search", `{"text":"zebra"}`); len(s.get("docs").([]any)) != 0 || s.get("truncated") != false {
				t.Errorf("no match %s", s.raw)
			}
			for body, field := range map[string]string{
				`{"vector":[0.1]}`:          "vector",
				`{"text":""}`:               "text",
				`{"text":"a","limit":101}`:  "limit",
				`{"text":"a","limit":"10"}`: "limit",
				`{"text":"a","nope":1}`:     "nope",
				`{"search_params":{"x":1}}`: "search_params.x",
			} {
				if a := e.do(dev1, "POST", owner+"/search", body); a.status != 400 || a.errField() != field {
					t.Errorf("search %s: %d %s, want 400 naming %s", body, a.status, a.raw, field)
				}
			}

			e.must(204, dev1, "DELETE", owner+"/docs/"+docs["Taxes"], "")
			e.must(404, dev1, "DELETE", owner+"/docs/"+docs["Taxes"], "")
			if l := e.must(200, dev1, "GET", owner+"/docs", ""); len(l.get("items").([]any)) != 2 {
				t.Errorf("after delete %s", l.raw)
			}
			for body, field := range map[string]string{
				`{"content":"x"}`:                   "title",
				`{"title":"t"}`:                     "content",
				`{"title":"t","content":5}`:         "content",
				`{"title":"t","content":[1]}`:       "content",
				`{"title":"t","content":"c","x":1}`: "x",
			} {
				if a := e.do(dev1, "POST", owner+"/docs", body); a.status != 400 || a.errField() != field {
					t.Errorf("doc %s: %d %s, want 400 naming %s", body, a.status, a.raw, field)
				}
			}
			// The doc route's own limit: a doc is one DynamoDB item.
			big := `{"title":"t","content":"` + strings.Repeat("x", 400_001) + `"}`
			if a := e.do(dev1, "POST", owner+"/docs", big); a.status != 413 {
				t.Errorf("big doc: %d", a.status)
			}
		})
	}
	// Another developer sees none of it.
	e.must(404, dev2, "GET", "/agents/"+agent+"/docs", "")
	e.must(404, dev2, "POST", "/users/"+user+"/search", `{"text":"cafe"}`)
}

func TestSessions(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(dev1, "a")
	user := e.must(201, dev1, "POST", "/users", `{"name":"u"}`).str("id")
	s := e.must(201, dev1, "POST", "/sessions", `{"agent":"`+agent+`","user_id":"`+user+`","situation":"support","metadata":{"x-integration-setup":{"wx":{"key":"v"}}}}`)
	id := s.str("id")
	if s.str("agent_id") != agent || s.str("user_id") != user || s.get("metadata", "x-integration-setup", "wx", "key") != "<redacted>" {
		t.Fatalf("created %s", s.raw)
	}
	e.must(200, dev1, "GET", "/sessions/"+id, "")
	if l := e.must(200, dev1, "GET", "/sessions", ""); l.str("items", 0, "id") != id {
		t.Errorf("list %s", l.raw)
	}
	p := e.must(200, dev1, "PATCH", "/sessions/"+id, `{"situation":"sales","user_id":null}`)
	if p.str("situation") != "sales" || p.get("user_id") != nil || p.str("agent_id") != agent {
		t.Errorf("patch %s", p.raw)
	}
	for body, want := range map[string]struct {
		status int
		field  string
	}{
		`{}`: {400, "agent_id"},
		`{"agent":"` + agent + `","agent_id":"` + agent + `"}`: {400, "agent"},
		`{"agent_id":"nope"}`: {400, "agent_id"},
		`{"agent_id":"0190a0a0-0000-7000-8000-000000000000"}`:                           {404, ""},
		`{"agent_id":"` + agent + `","user_id":"0190a0a0-0000-7000-8000-000000000000"}`: {404, ""},
		`{"agent_id":"` + agent + `","situation":1}`:                                    {400, "situation"},
	} {
		if a := e.do(dev1, "POST", "/sessions", body); a.status != want.status || a.errField() != want.field {
			t.Errorf("POST /sessions %s: %d %s, want %d naming %q", body, a.status, a.raw, want.status, want.field)
		}
	}
	e.must(400, dev1, "PATCH", "/sessions/"+id, `{"agent_id":"`+agent+`"}`) // the agent stays

	// History: what the chat item appends, oldest first, paginated.
	if _, err := e.st.AppendMessages(t.Context(), dev1, id, []storeMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}); err != nil {
		t.Fatal(err)
	}
	h := e.must(200, dev1, "GET", "/sessions/"+id+"/history?limit=1", "")
	if h.str("items", 0, "content") != "hi" || h.str("next_cursor") == "" {
		t.Errorf("history %s", h.raw)
	}
	h = e.must(200, dev1, "GET", "/sessions/"+id+"/history?limit=1&cursor="+h.str("next_cursor"), "")
	if h.str("items", 0, "role") != "assistant" {
		t.Errorf("history page 2 %s", h.raw)
	}
	e.must(404, dev2, "GET", "/sessions/"+id+"/history", "")
	e.must(204, dev1, "DELETE", "/sessions/"+id, "")
	e.must(404, dev1, "GET", "/sessions/"+id+"/history", "")
}

func TestFlags(t *testing.T) {
	e := newEnv(t)
	f := e.must(200, dev1, "GET", "/flags", "")
	if js(f.body) != `{"auto_run_tools_chat":true,"auto_tool_calls_prompt_step":false}` {
		t.Errorf("defaults %s", f.raw)
	}
	if p := e.must(200, dev1, "PUT", "/flags/auto_tool_calls_prompt_step", `{"value":true}`); js(p.body) != `{"name":"auto_tool_calls_prompt_step","value":true}` {
		t.Errorf("put %s", p.raw)
	}
	e.must(200, dev1, "PUT", "/flags/auto_run_tools_chat", `{"value":false}`)
	if f := e.must(200, dev1, "GET", "/flags", ""); js(f.body) != `{"auto_run_tools_chat":false,"auto_tool_calls_prompt_step":true}` {
		t.Errorf("after put %s", f.raw)
	}
	// Per developer.
	if f := e.must(200, dev2, "GET", "/flags", ""); js(f.body) != `{"auto_run_tools_chat":true,"auto_tool_calls_prompt_step":false}` {
		t.Errorf("other developer %s", f.raw)
	}
	e.must(404, dev1, "PUT", "/flags/made_up", `{"value":true}`)
	for _, body := range []string{`{}`, `{"value":"yes"}`, `{"value":true,"x":1}`, `true`} {
		if a := e.do(dev1, "PUT", "/flags/auto_run_tools_chat", body); a.status != 400 {
			t.Errorf("PUT %s: %d %s", body, a.status, a.raw)
		}
	}
}

// TestBulkDeleteDocs: Julep's DELETE {owner}/docs removes the docs a metadata_filter matches, or all
// of them with delete_all, and answers which; a body with neither is refused.
func TestBulkDeleteDocs(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(dev1, "a")
	base := "/agents/" + agent + "/docs"
	keep := e.must(201, dev1, "POST", base, `{"title":"keep","content":"k","metadata":{"kind":"keep"}}`).str("id")
	gone := e.must(201, dev1, "POST", base, `{"title":"gone","content":"g","metadata":{"kind":"old"}}`).str("id")
	if b := e.must(400, dev1, "DELETE", base, `{}`); b.errField() != "metadata_filter" {
		t.Errorf("neither: %s", b.raw)
	}
	d := e.must(200, dev1, "DELETE", base, `{"metadata_filter":{"kind":"old"}}`)
	if d.str("items", 0, "id") != gone || len(d.get("items").([]any)) != 1 {
		t.Errorf("by filter: %s", d.raw)
	}
	if l := e.must(200, dev1, "GET", base, ""); l.str("items", 0, "id") != keep || len(l.get("items").([]any)) != 1 {
		t.Errorf("left: %s", l.raw)
	}
	e.must(200, dev1, "DELETE", base, `{"delete_all":true}`)
	if l := e.must(200, dev1, "GET", base, ""); len(l.get("items").([]any)) != 0 {
		t.Errorf("after delete_all: %s", l.raw)
	}
}
