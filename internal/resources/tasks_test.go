package resources_test

import "testing"

func TestTasks(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(dev1, "a")
	task := e.must(201, dev1, "POST", "/agents/"+agent+"/tasks", `{"name":"triage","description":"sort mail","inherit_tools":true,
		"metadata":{"x-api_call-setup":{"hook":{"token":"t0p"}}},
		"prompt":{"messages":[{"role":"user","content":"hi"}],"auto_run_tools":true,"max_iterations":5},
		"tools":[`+fnTool+`,{"name":"mail","type":"integration","integration":{"provider":"dummy","setup":{"k":"secret-k"}}}]}`)
	id := task.str("id")
	if task.str("agent_id") != agent || task.str("tools", 0, "name") != "lookup" || task.str("tools", 1, "integration", "setup", "k") != "<redacted>" ||
		task.get("metadata", "x-api_call-setup", "hook", "token") != "<redacted>" || task.get("prompt", "max_iterations") != int64(5) {
		t.Fatalf("created %s", task.raw)
	}
	g := e.must(200, dev1, "GET", "/tasks/"+id, "")
	if len(g.get("tools").([]any)) != 2 || g.str("name") != "triage" {
		t.Errorf("get %s", g.raw)
	}
	l := e.must(200, dev1, "GET", "/agents/"+agent+"/tasks", "")
	if l.str("items", 0, "id") != id {
		t.Errorf("list %s", l.raw)
	}

	// Duplicate tool names within one task: 409 naming the second.
	d := e.must(409, dev1, "POST", "/agents/"+agent+"/tasks", `{"name":"t","tools":[`+fnTool+`,`+fnTool+`]}`)
	if d.errField() != "tools[1].name" {
		t.Errorf("dup field %q", d.errField())
	}
	if b := e.must(400, dev1, "POST", "/agents/"+agent+"/tasks", `{"name":"t","tools":[{"name":"x","type":"function"}]}`); b.errField() != "tools[0].function" {
		t.Errorf("bad tool field %q (%s)", b.errField(), b.raw)
	}
	if b := e.must(400, dev1, "POST", "/agents/"+agent+"/tasks", `{"name":"t","tools":[{"name":"x","type":"function","function":{},"bogus":1}]}`); b.errField() != "tools[0].bogus" {
		t.Errorf("unknown tool field %q (%s)", b.errField(), b.raw)
	}
	if b := e.must(400, dev1, "POST", "/agents/"+agent+"/tasks", `{"name":"t","tools":[5]}`); b.errField() != "tools[0]" {
		t.Errorf("tool not an object %q (%s)", b.errField(), b.raw)
	}
	if b := e.must(400, dev1, "POST", "/agents/"+agent+"/tasks", `{"name":"t","prompt":{"messages":["hi"]}}`); b.errField() != "prompt.messages[0]" {
		t.Errorf("prompt field %q", b.errField())
	}
	e.must(404, dev1, "POST", "/agents/0190a0a0-0000-7000-8000-000000000000/tasks", `{"name":"t"}`)

	// PATCH merges the task's own fields; tools are refused there.
	p := e.must(200, dev1, "PATCH", "/tasks/"+id, `{"description":"sort all mail","prompt":{"auto_run_tools":false}}`)
	if p.str("description") != "sort all mail" || p.get("prompt", "auto_run_tools") != false || p.get("prompt", "max_iterations") != int64(5) || len(p.get("tools").([]any)) != 2 {
		t.Errorf("patch %s", p.raw)
	}
	if b := e.must(400, dev1, "PATCH", "/tasks/"+id, `{"tools":[]}`); b.errField() != "tools" {
		t.Errorf("tools in patch: %s", b.raw)
	}
	u := e.must(200, dev1, "PUT", "/tasks/"+id, `{"name":"triage2"}`)
	if u.str("name") != "triage2" || u.get("description") != nil || u.get("inherit_tools") != false || len(u.get("tools").([]any)) != 2 {
		t.Errorf("put %s", u.raw)
	}
	e.must(400, dev1, "PUT", "/tasks/"+id, `{"name":"x","tools":[]}`)

	// The task's tools through their own routes.
	tb := "/tasks/" + id + "/tools"
	e.must(409, dev1, "POST", tb, fnTool)
	nt := e.must(201, dev1, "POST", tb, `{"name":"third","type":"function","function":{}}`)
	e.must(200, dev1, "PATCH", tb+"/"+nt.str("id"), `{"description":"3"}`)
	if l := e.must(200, dev1, "GET", tb, ""); len(l.get("items").([]any)) != 3 {
		t.Errorf("task tools %s", l.raw)
	}
	// A task's tool is not reachable as the agent's.
	e.must(404, dev1, "GET", "/agents/"+agent+"/tools/"+nt.str("id"), "")
	e.must(204, dev1, "DELETE", tb+"/"+nt.str("id"), "")

	e.must(204, dev1, "DELETE", "/tasks/"+id, "")
	e.must(404, dev1, "GET", "/tasks/"+id, "")
	e.must(404, dev1, "GET", tb, "")
}

func TestUsers(t *testing.T) {
	e := newEnv(t)
	u := e.must(201, dev1, "POST", "/users", `{"name":"ann","about":"a user","metadata":{"tier":"gold"}}`)
	id := u.str("id")
	e.must(200, dev1, "GET", "/users/"+id, "")
	p := e.must(200, dev1, "PATCH", "/users/"+id, `{"metadata":{"tier":"silver","x":1}}`)
	if p.get("metadata", "tier") != "silver" || p.get("metadata", "x") != int64(1) || p.str("name") != "ann" {
		t.Errorf("patch %s", p.raw)
	}
	r := e.must(200, dev1, "PUT", "/users/"+id, `{"name":"bob"}`)
	if r.str("name") != "bob" || r.get("metadata") != nil || r.get("about") != nil {
		t.Errorf("put %s", r.raw)
	}
	e.must(201, dev1, "POST", "/users", `{}`)
	if l := e.must(200, dev1, "GET", "/users", ""); len(l.get("items").([]any)) != 2 {
		t.Errorf("list %s", l.raw)
	}
	e.must(204, dev1, "DELETE", "/users/"+id, "")
	e.must(404, dev1, "PATCH", "/users/"+id, `{"name":"x"}`)
}

// TestUpsertTask: Julep's create_or_update creates a task with the given id, then replaces it in
// place: fields as PUT, tools by name (one kept with its id, one added, one deleted).
func TestUpsertTask(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(dev1, "a")
	const id = "0190a0a0-0000-7000-8000-00000000abcd"
	base := "/agents/" + agent + "/tasks/" + id
	c := e.must(201, dev1, "POST", base, `{"name":"first","description":"d","tools":[`+fnTool+`,{"name":"gone","type":"function","function":{}}]}`)
	if c.str("id") != id || c.str("agent_id") != agent || len(c.get("tools").([]any)) != 2 {
		t.Fatalf("created %s", c.raw)
	}
	kept := c.str("tools", 0, "id")
	u := e.must(200, dev1, "POST", base, `{"name":"second","tools":[{"name":"lookup","type":"function","function":{},"description":"new"},{"name":"added","type":"function","function":{}}]}`)
	if u.str("id") != id || u.str("name") != "second" || u.get("description") != nil {
		t.Fatalf("replaced %s", u.raw)
	}
	names := map[string]string{}
	for i := range u.get("tools").([]any) {
		names[u.str("tools", i, "name")] = u.str("tools", i, "id")
	}
	if len(names) != 2 || names["lookup"] != kept || names["added"] == "" {
		t.Errorf("tools after the update %v (lookup was %s)", names, kept)
	}
	if g := e.must(200, dev1, "GET", "/tasks/"+id, ""); g.str("name") != "second" {
		t.Errorf("get %s", g.raw)
	}
	// The id under another agent, a bad id, an unknown agent.
	other := e.agent(dev1, "b")
	e.must(409, dev1, "POST", "/agents/"+other+"/tasks/"+id, `{"name":"x"}`)
	if b := e.must(400, dev1, "POST", "/agents/"+agent+"/tasks/nope", `{"name":"x"}`); b.errField() != "task_id" {
		t.Errorf("bad id: %s", b.raw)
	}
	e.must(404, dev1, "POST", "/agents/0190a0a0-0000-7000-8000-000000000000/tasks/0190a0a0-0000-7000-8000-00000000abce", `{"name":"t"}`)
}

// TestUpsertAgentAndUser: Julep's create_or_update of agents and users creates with the given id,
// then replaces as PUT does.
func TestUpsertAgentAndUser(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ base, field string }{{"/agents/", "about"}, {"/users/", "about"}} {
		const id = "0190a0a0-0000-7000-8000-00000000beef"
		c := e.must(201, dev1, "POST", tc.base+id, `{"name":"one","about":"first"}`)
		if c.str("id") != id || c.str("about") != "first" {
			t.Errorf("%s created %s", tc.base, c.raw)
		}
		u := e.must(200, dev1, "POST", tc.base+id, `{"name":"two"}`)
		if u.str("id") != id || u.str("name") != "two" || u.get("about") != nil {
			t.Errorf("%s replaced %s", tc.base, u.raw)
		}
		if g := e.must(200, dev1, "GET", tc.base+id, ""); g.str("name") != "two" {
			t.Errorf("%s get %s", tc.base, g.raw)
		}
		e.must(400, dev1, "POST", tc.base+"not-a-uuid", `{"name":"x"}`)
	}
}

// TestSessionResetAndUpsert: PUT /sessions/{id} replaces a session's fields, its agent staying;
// POST /sessions/{id} creates one with that id, then replaces it.
func TestSessionResetAndUpsert(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(dev1, "a")
	x := e.must(201, dev1, "POST", "/sessions", `{"agent":"`+agent+`","situation":"first","metadata":{"a":1}}`)
	r := e.must(200, dev1, "PUT", "/sessions/"+x.str("id"), `{"situation":"second"}`)
	if r.str("situation") != "second" || r.get("metadata") != nil || r.str("agent_id") != agent {
		t.Errorf("reset %s", r.raw)
	}
	other := e.agent(dev1, "b")
	if b := e.must(400, dev1, "PUT", "/sessions/"+x.str("id"), `{"agent":"`+other+`"}`); b.errField() != "agent_id" {
		t.Errorf("another agent: %s", b.raw)
	}
	const id = "0190a0a0-0000-7000-8000-00000000cafe"
	if c := e.must(201, dev1, "POST", "/sessions/"+id, `{"agent":"`+agent+`","situation":"made"}`); c.str("id") != id {
		t.Errorf("created %s", c.raw)
	}
	if u := e.must(200, dev1, "POST", "/sessions/"+id, `{"agent":"`+agent+`","situation":"again"}`); u.str("situation") != "again" {
		t.Errorf("replaced %s", u.raw)
	}
	e.must(404, dev1, "POST", "/sessions/0190a0a0-0000-7000-8000-00000000caff", `{"agent":"0190a0a0-0000-7000-8000-000000000000"}`)
}
