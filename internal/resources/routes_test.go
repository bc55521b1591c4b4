package resources_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"sinew/internal/testenv/oaschema"
)

// fixture is one of each resource of dev1, so every route has real ids to address.
type fixture struct {
	agent, tool, task, taskTool, user, agentDoc, userDoc, session string
}

func (e *env) fixture() fixture {
	e.t.Helper()
	var f fixture
	f.agent = e.agent(dev1, "a")
	f.tool = e.must(201, dev1, "POST", "/agents/"+f.agent+"/tools", fnTool).str("id")
	task := e.must(201, dev1, "POST", "/agents/"+f.agent+"/tasks", `{"name":"t","tools":[`+fnTool+`]}`)
	f.task, f.taskTool = task.str("id"), task.str("tools", 0, "id")
	f.user = e.must(201, dev1, "POST", "/users", `{"name":"u"}`).str("id")
	f.agentDoc = e.must(201, dev1, "POST", "/agents/"+f.agent+"/docs", `{"title":"d","content":"c"}`).str("id")
	f.userDoc = e.must(201, dev1, "POST", "/users/"+f.user+"/docs", `{"title":"d","content":"c"}`).str("id")
	f.session = e.must(201, dev1, "POST", "/sessions", `{"agent_id":"`+f.agent+`"}`).str("id")
	return f
}

// route is one route with the fixture's ids filled in, a valid body, and a body with a field of the
// wrong type (naming the field).
type route struct {
	method, pattern, path string
	body                  string
	wrongType, wrongField string
}

func (f fixture) routes() []route {
	r := strings.NewReplacer("{agent_id}", f.agent, "{tool_id}", f.tool, "{task_id}", f.task, "{user_id}", f.user,
		"{session_id}", f.session, "{name}", "auto_run_tools_chat")
	rs := []route{
		{method: "POST", pattern: "/agents", body: `{"name":"n"}`, wrongType: `{"name":"n","about":5}`, wrongField: "about"},
		{method: "GET", pattern: "/agents"},
		{method: "GET", pattern: "/agents/{agent_id}"},
		{method: "PUT", pattern: "/agents/{agent_id}", body: `{"name":"n"}`, wrongType: `{"name":"n","default_settings":[]}`, wrongField: "default_settings"},
		{method: "PATCH", pattern: "/agents/{agent_id}", body: `{"about":"x"}`, wrongType: `{"metadata":"x"}`, wrongField: "metadata"},
		{method: "POST", pattern: "/agents/{agent_id}/tools", body: `{"name":"zz","type":"function","function":{}}`, wrongType: `{"name":"zz","type":"function","function":{"parameters":[]}}`, wrongField: "function.parameters"},
		{method: "GET", pattern: "/agents/{agent_id}/tools"},
		{method: "GET", pattern: "/agents/{agent_id}/tools/{tool_id}"},
		{method: "PUT", pattern: "/agents/{agent_id}/tools/{tool_id}", body: fnTool, wrongType: `{"name":"lookup","type":"function","function":{},"description":1}`, wrongField: "description"},
		{method: "PATCH", pattern: "/agents/{agent_id}/tools/{tool_id}", body: `{"description":"x"}`, wrongType: `{"description":1}`, wrongField: "description"},
		{method: "POST", pattern: "/agents/{agent_id}/tasks", body: `{"name":"n"}`, wrongType: `{"name":"n","inherit_tools":"yes"}`, wrongField: "inherit_tools"},
		{method: "GET", pattern: "/agents/{agent_id}/tasks"},
		{method: "GET", pattern: "/tasks/{task_id}"},
		{method: "PUT", pattern: "/tasks/{task_id}", body: `{"name":"n"}`, wrongType: `{"name":"n","prompt":{"settings":1}}`, wrongField: "prompt.settings"},
		{method: "PATCH", pattern: "/tasks/{task_id}", body: `{"description":"d"}`, wrongType: `{"description":["d"]}`, wrongField: "description"},
		{method: "POST", pattern: "/tasks/{task_id}/tools", body: `{"name":"zz","type":"function","function":{}}`, wrongType: `{"name":3}`, wrongField: "name"},
		{method: "GET", pattern: "/tasks/{task_id}/tools"},
		{method: "GET", pattern: "/tasks/{task_id}/tools/{tool_id}"},
		{method: "PUT", pattern: "/tasks/{task_id}/tools/{tool_id}", body: fnTool, wrongType: `{"name":"lookup","type":7}`, wrongField: "type"},
		{method: "PATCH", pattern: "/tasks/{task_id}/tools/{tool_id}", body: `{"description":"x"}`, wrongType: `{"function":{"timeout_seconds":true}}`, wrongField: "function.timeout_seconds"},
		{method: "POST", pattern: "/users", body: `{"name":"n"}`, wrongType: `{"name":false}`, wrongField: "name"},
		{method: "GET", pattern: "/users"},
		{method: "GET", pattern: "/users/{user_id}"},
		{method: "PUT", pattern: "/users/{user_id}", body: `{"name":"n"}`, wrongType: `{"metadata":1}`, wrongField: "metadata"},
		{method: "PATCH", pattern: "/users/{user_id}", body: `{"about":"x"}`, wrongType: `{"about":{}}`, wrongField: "about"},
		{method: "POST", pattern: "/agents/{agent_id}/docs", body: `{"title":"t","content":"c"}`, wrongType: `{"title":1,"content":"c"}`, wrongField: "title"},
		{method: "GET", pattern: "/agents/{agent_id}/docs"},
		{method: "POST", pattern: "/agents/{agent_id}/search", body: `{"text":"c"}`, wrongType: `{"text":["c"]}`, wrongField: "text"},
		{method: "POST", pattern: "/users/{user_id}/docs", body: `{"title":"t","content":"c"}`, wrongType: `{"title":"t","content":"c","metadata":"m"}`, wrongField: "metadata"},
		{method: "GET", pattern: "/users/{user_id}/docs"},
		{method: "POST", pattern: "/users/{user_id}/search", body: `{"text":"c"}`, wrongType: `{"text":"c","metadata_filter":[]}`, wrongField: "metadata_filter"},
		{method: "POST", pattern: "/sessions", body: `{"agent_id":"` + f.agent + `"}`, wrongType: `{"agent_id":1}`, wrongField: "agent_id"},
		{method: "GET", pattern: "/sessions"},
		{method: "GET", pattern: "/sessions/{session_id}"},
		{method: "PATCH", pattern: "/sessions/{session_id}", body: `{"situation":"s"}`, wrongType: `{"situation":2}`, wrongField: "situation"},
		{method: "GET", pattern: "/sessions/{session_id}/history"},
		{method: "GET", pattern: "/flags"},
		{method: "PUT", pattern: "/flags/{name}", body: `{"value":true}`, wrongType: `{"value":"true"}`, wrongField: "value"},
		// Deletes last: they remove what the others address.
		{method: "DELETE", pattern: "/agents/{agent_id}/docs/{doc_id}"},
		{method: "DELETE", pattern: "/users/{user_id}/docs/{doc_id}"},
		{method: "DELETE", pattern: "/agents/{agent_id}/tools/{tool_id}"},
		{method: "DELETE", pattern: "/tasks/{task_id}/tools/{tool_id}"},
		{method: "DELETE", pattern: "/sessions/{session_id}"},
		{method: "DELETE", pattern: "/tasks/{task_id}"},
		{method: "DELETE", pattern: "/users/{user_id}"},
		{method: "DELETE", pattern: "/agents/{agent_id}"},
	}
	for i := range rs {
		p := rs[i].pattern
		switch {
		case strings.HasPrefix(p, "/agents/{agent_id}/docs/"):
			p = strings.Replace(p, "{doc_id}", f.agentDoc, 1)
		case strings.HasPrefix(p, "/users/{user_id}/docs/"):
			p = strings.Replace(p, "{doc_id}", f.userDoc, 1)
		case strings.HasPrefix(p, "/tasks/{task_id}/tools/"):
			p = strings.Replace(p, "{tool_id}", f.taskTool, 1)
		}
		rs[i].path = r.Replace(p)
	}
	return rs
}

// TestEveryRoute sends every route: without a token (401), another developer's ids (404), bad bodies
// (malformed JSON, empty, not an object, unknown field, wrong type, over the limit), malformed and
// unknown ids, and finally the valid request.
func TestEveryRoute(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	const unknown = "0190a0a0-0000-7000-8000-000000000000"
	for _, r := range f.routes() {
		t.Run(r.method+" "+r.pattern, func(t *testing.T) {
			body := r.body
			if a := e.do("", r.method, r.path, body); a.status != 401 || a.errType() != "Sinew.Unauthorized" {
				t.Errorf("no token: %d %s", a.status, a.raw)
			}
			hasID := strings.Contains(r.pattern, "_id}")
			if hasID {
				if a := e.do(dev2, r.method, r.path, body); a.status != 404 || a.errType() != "Sinew.NotFound" {
					t.Errorf("another developer's ids: %d %s", a.status, a.raw)
				}
				// Each id of the path in turn: malformed → 400 naming it; well-formed but unknown → 404.
				for _, id := range []string{f.agent, f.tool, f.task, f.taskTool, f.user, f.agentDoc, f.userDoc, f.session} {
					if !strings.Contains(r.path, id) {
						continue
					}
					if a := e.do(dev1, r.method, strings.Replace(r.path, id, "not-a-uuid", 1), body); a.status != 400 || !strings.HasSuffix(a.errField(), "_id") {
						t.Errorf("malformed id: %d %s", a.status, a.raw)
					}
					if a := e.do(dev1, r.method, strings.Replace(r.path, id, unknown, 1), body); a.status != 404 {
						t.Errorf("unknown id: %d %s", a.status, a.raw)
					}
				}
			}
			if body != "" {
				for _, bad := range []struct{ name, body, field string }{
					{"malformed", `{"name":`, "body"},
					{"trailing data", body + ` {}`, "body"},
					{"empty", ``, "body"},
					{"array", `[]`, "body"},
					{"unknown field", strings.Replace(body, "{", `{"zzz_unknown":1,`, 1), "zzz_unknown"},
					{"wrong type", r.wrongType, r.wrongField},
				} {
					a := e.do(dev1, r.method, r.path, bad.body)
					if a.status != 400 || a.errType() != "Sinew.InvalidInput" || a.errField() != bad.field {
						t.Errorf("%s body %q: %d %s, want 400 naming %q", bad.name, bad.body, a.status, a.raw, bad.field)
					}
				}
				big := `{"name":"` + strings.Repeat("x", 1<<20) + `"}`
				if a := e.do(dev1, r.method, r.path, big); a.status != 413 || a.errType() != "Sinew.TooLarge" {
					t.Errorf("oversize: %d %s", a.status, a.raw)
				}
			}
			want := 200
			switch r.method {
			case "POST":
				want = 201
				if strings.HasSuffix(r.pattern, "/search") {
					want = 200
				}
			case "DELETE":
				want = 204
			}
			a := e.do(dev1, r.method, r.path, body)
			if a.status != want {
				t.Fatalf("valid request: %d %s, want %d", a.status, a.raw, want)
			}
			if r.method == "GET" && strings.HasSuffix(r.pattern, "s") && r.pattern != "/flags" {
				if _, ok := a.obj()["next_cursor"]; !ok || a.get("items") == nil {
					t.Errorf("list answer without items and next_cursor: %s", a.raw)
				}
			}
		})
	}
}

// TestOpenAPIListsEveryRoute: the document has an operation, with schemas, for every route the
// resources item owns, and every $ref it makes resolves.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	e := newEnv(t)
	doc := e.must(200, "", "GET", "/openapi.json", "")
	paths := doc.get("paths").(map[string]any)
	schemas := doc.get("components", "schemas").(map[string]any)
	var f fixture
	for _, r := range f.routes() {
		item, _ := paths[r.pattern].(map[string]any)
		op, _ := item[strings.ToLower(r.method)].(map[string]any)
		if op == nil {
			t.Errorf("%s %s is not in the document", r.method, r.pattern)
			continue
		}
		if op["summary"] == nil || op["operationId"] == nil {
			t.Errorf("%s %s: no summary or operationId", r.method, r.pattern)
		}
		if r.body != "" && op["requestBody"] == nil {
			t.Errorf("%s %s: no request schema", r.method, r.pattern)
		}
		resps := op["responses"].(map[string]any)
		if r.method != "DELETE" {
			var ok map[string]any
			for _, s := range []string{"200", "201"} {
				if v, found := resps[s].(map[string]any); found {
					ok = v
				}
			}
			if ok == nil || ok["content"] == nil {
				t.Errorf("%s %s: no success schema", r.method, r.pattern)
			}
		} else if resps["204"] == nil {
			t.Errorf("%s %s: no 204", r.method, r.pattern)
		}
	}
	var refs []string
	collectRefs(doc.body, &refs)
	for _, ref := range refs {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		if _, ok := schemas[name]; !ok {
			t.Errorf("$ref %s does not resolve", ref)
		}
	}
	if !slices.Contains(refs, "#/components/schemas/ToolPatch") {
		t.Error("ToolPatch is never referenced")
	}
	if d, _ := doc.get("paths", "/agents/{agent_id}/search", "post", "description").(string); !strings.Contains(d, "keyword search") {
		t.Errorf("search is not documented as a keyword search: %q", d)
	}
	checkOpenAPI(t, e, doc.raw)
}

// checkOpenAPI validates the document against the OpenAPI 3.1 schema (httpapi's testdata), then
// checks the schemas say what the routes do: each route's valid body passes its request schema and
// its wrongly typed one fails it, and real answers pass their response schemas.
func checkOpenAPI(t *testing.T, e *env, raw string) {
	oasSchema, err := oaschema.LoadSchema("../httpapi/testdata/oas-3.1-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := oaschema.Decode([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := oasSchema.Validate(inst); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3.1:\n%v", err)
	}
	sc := oaschema.NewDoc(inst.(map[string]any))
	compile := func(ptr string) *jsonschema.Resolved {
		t.Helper()
		s, err := sc.Compile(ptr)
		if err != nil {
			t.Fatalf("%s: %v", ptr, err)
		}
		return s
	}
	valid := func(s *jsonschema.Resolved, body string) error {
		v, err := oaschema.Decode([]byte(body))
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		return s.Validate(v)
	}
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	f := e.fixture()
	for _, r := range f.routes() {
		if r.body == "" {
			continue
		}
		s := compile("/paths/" + esc.Replace(r.pattern) + "/" + strings.ToLower(r.method) + "/requestBody/content/application~1json/schema")
		if err := valid(s, r.body); err != nil {
			t.Errorf("%s %s: the valid body %s fails the request schema: %v", r.method, r.pattern, r.body, err)
		}
		if err := valid(s, r.wrongType); err == nil {
			t.Errorf("%s %s: the wrongly typed body %s passes the request schema", r.method, r.pattern, r.wrongType)
		}
	}
	for _, a := range []struct{ schema, path string }{
		{"Agent", "/agents/" + f.agent},
		{"Tool", "/agents/" + f.agent + "/tools/" + f.tool},
		{"Task", "/tasks/" + f.task},
		{"User", "/users/" + f.user},
		{"Session", "/sessions/" + f.session},
		{"Flags", "/flags"},
	} {
		got := e.must(200, dev1, "GET", a.path, "")
		if err := valid(compile("/components/schemas/"+a.schema), got.raw); err != nil {
			t.Errorf("GET %s does not fit %s: %v\n%s", a.path, a.schema, err, got.raw)
		}
	}
	s := e.must(200, dev1, "POST", "/agents/"+f.agent+"/search", `{"text":"c"}`)
	if err := valid(compile("/components/schemas/SearchResult"), s.raw); err != nil {
		t.Errorf("search answer does not fit SearchResult: %v", err)
	}
}

func collectRefs(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				*out = append(*out, s)
			}
			collectRefs(e, out)
		}
	case []any:
		for _, e := range x {
			collectRefs(e, out)
		}
	}
}
