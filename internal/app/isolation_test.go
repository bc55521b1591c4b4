package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	lambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/lambdaboundary"
	"sinew/internal/system"
	"sinew/internal/testenv/mcpserver"
	"sinew/internal/tool"
)

// validBodies are bodies each writing route accepts, so that a refusal of developer B naming A's
// ids is the ownership check and nothing else (TestIsolation's control sends them with B's own
// ids). A route with a body and no entry here fails the test: add one.
var validBodies = map[string][]string{
	"PUT /agents/{agent_id}":                                 {`{"name":"renamed by b"}`},
	"PATCH /agents/{agent_id}":                               {`{"name":"renamed by b"}`},
	"POST /agents/{agent_id}/tools":                          {`{"name":"b_tool","type":"function","function":{}}`},
	"PUT /agents/{agent_id}/tools/{tool_id}":                 {`{"name":"ask_user","type":"function","function":{"timeout_seconds":60}}`},
	"PATCH /agents/{agent_id}/tools/{tool_id}":               {`{"description":"changed by b"}`},
	"POST /tasks/{task_id}/tools":                            {`{"name":"b_tool","type":"function","function":{}}`},
	"POST /agents/{agent_id}/tools/openapi":                  {openAPIBody},
	"POST /tasks/{task_id}/tools/openapi":                    {openAPIBody},
	"POST /agents/{agent_id}/tools/mcp":                      {mcpImportBody()},
	"POST /tasks/{task_id}/tools/mcp":                        {mcpImportBody()},
	"PUT /tasks/{task_id}/tools/{tool_id}":                   {`{"name":"task_echo","type":"integration","integration":{"provider":"dummy"}}`},
	"PATCH /tasks/{task_id}/tools/{tool_id}":                 {`{"description":"changed by b"}`},
	"POST /agents/{agent_id}/tasks":                          {`{"name":"task by b"}`},
	"PUT /tasks/{task_id}":                                   {`{"name":"renamed by b"}`},
	"PATCH /tasks/{task_id}":                                 {`{"description":"changed by b"}`},
	"PUT /users/{user_id}":                                   {`{"name":"renamed by b"}`},
	"PATCH /users/{user_id}":                                 {`{"about":"changed by b"}`},
	"POST /agents/{agent_id}/docs":                           {`{"title":"doc by b","content":"b"}`},
	"POST /users/{user_id}/docs":                             {`{"title":"doc by b","content":"b"}`},
	"POST /agents/{agent_id}/search":                         {`{"text":"lisbon"}`},
	"POST /users/{user_id}/search":                           {`{"text":"porto"}`},
	"PATCH /sessions/{session_id}":                           {`{"situation":"changed by b"}`},
	"POST /sessions/{session_id}/chat":                       {`{"messages":[{"role":"user","content":"hello"}],"auto_run_tools":false}`},
	"POST /tasks/{task_id}/executions":                       {`{"input":"hello"}`},
	"PUT /executions/{execution_id}":                         {`{"status":"running","input":{"city":"Lisbon"}}`, `{"status":"cancelled"}`},
	"POST /executions/{execution_id}/calls/{call_id}/result": {`{"output":{"city":"Lisbon"}}`, `{"error":{"type":"Refused","message":"no"}}`},
	"PUT /secrets/{name}":                                    {`{"value":"value by b"}`},
	"POST /agents/{agent_id}/tasks/{task_id}":                {`{"name":"task by b"}`},
	"POST /agents/{agent_id}":                                {`{"name":"agent by b"}`},
	"POST /users/{user_id}":                                  {`{"name":"user by b"}`},
	"DELETE /agents/{agent_id}/docs":                         {`{"delete_all":true}`},
	"PUT /sessions/{session_id}":                             {`{"situation":"changed by b"}`},
	"POST /sessions/{session_id}":                            {`{"situation":"changed by b"}`},
	"DELETE /users/{user_id}/docs":                           {`{"delete_all":true}`},
	"PUT /flags/{name}":                                      {`{"value":false}`},
	"POST /agents/{agent_id}/mcp":                            {`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	"POST /sessions/{session_id}/mcp":                        {`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"none"}}`},
}

// openAPIBody imports one operation.
const openAPIBody = `{"document":{"openapi":"3.1.0","info":{"title":"t","version":"1"},"servers":[{"url":"https://api.example.com"}],` +
	`"paths":{"/ping":{"get":{"operationId":"ping"}}}},"prefix":"b_"}`

// isoMCP is an MCP server for the import routes' control; local mode allows its address only.
var isoMCP = func() *httptest.Server {
	get := func(*http.Request) *sdkmcp.Server { return mcpserver.New() }
	return httptest.NewServer(sdkmcp.NewStreamableHTTPHandler(get, nil))
}()

// mcpImportBody imports isoMCP's tools.
func mcpImportBody() string {
	return `{"prefix":"b_","setup":{"transport":"http","http_url":"` + isoMCP.URL + `/mcp"}}`
}

// TestIsolation: developer B, with a valid token of its own, can neither read, change, start,
// resume nor list anything of developer A through any route, naming A's real ids (agents, tools,
// tasks, users, docs, sessions, secrets, executions, calls, payloads): every such request is a 404
// (never a 403: existence is not told), B's lists show nothing of A's, and A's items in the table
// are unchanged. Then the same through every system tool, run by the system Lambda on behalf of B.
func TestIsolation(t *testing.T) {
	l := local(t)
	routes, _ := allRoutes(t)
	a := seed(t, l, newDev("iso-a"))
	b := seed(t, l, newDev("iso-b"))
	// What of A's must never show in an answer to B.
	secretsOfA := []string{a.agent, a.agentTool, a.task, a.taskTool, a.user, a.session, a.agentDoc, a.userDoc,
		a.secret, a.execution, a.integrationExecution, a.call, a.token, a.payloadRef, "secret-value-of-" + a.dev, "setup-of-" + a.dev, a.dev}
	// Cases that fail in code another engineer owns: reported, not fixed here (none now).
	knownBugs := map[string]string{}

	// The ids are real: A reads each of them through its GET route.
	for _, r := range routes {
		if r.method != "GET" || r.public || len(r.params("path")) == 0 || isCatalogue(r) {
			continue
		}
		path, _, _ := fill(r.path, a.ids(r.path))
		if got := l.do(t, a.dev, "GET", path, "", nil); got.status != 200 {
			t.Errorf("A's own %s %s: %s; the walk below would prove nothing", r, path, got)
		}
	}

	before := l.items(t, a.dev)
	counts := map[string]int{}
	checked := 0
	for _, r := range routes {
		if r.public || isCatalogue(r) {
			continue // not a developer's data
		}
		key := r.String()
		bodies := [][]byte{nil}
		if r.hasBody() {
			list, ok := validBodies[key]
			if !ok && len(r.params("path")) > 0 {
				t.Errorf("%s: no valid body in validBodies; add one", r)
				continue
			}
			bodies = nil
			for _, s := range list {
				bodies = append(bodies, []byte(s))
			}
		}
		for _, c := range isolationCases(r, a, b, bodies) {
			t.Run(key+"/"+c.name, func(t *testing.T) {
				if why, ok := knownBugs[key]; ok {
					t.Skip(why)
				}
				got := l.do(t, b.dev, r.method, c.path, c.query, c.body)
				switch {
				case c.want404 && got.status != 404:
					t.Errorf("B got %s, want 404", got)
				case !c.want404 && got.status >= 500:
					t.Errorf("B got %s", got)
				}
				sent := c.path + c.query + string(c.body)
				for _, s := range secretsOfA {
					// An error may repeat what B sent; anything else of A's is a leak.
					if strings.Contains(got.raw, s) && !strings.Contains(sent, s) {
						t.Errorf("B's answer holds A's %q: %s", s, got)
					}
				}
			})
			counts[key]++
			checked++
		}
	}
	if d := changes(before, l.items(t, a.dev)); d != "" {
		t.Errorf("A's items changed while B walked the routes: %s", d)
	}
	// A's call still waits, and A can still answer it: B's attempts consumed nothing.
	if got := l.do(t, a.dev, "POST", "/executions/"+a.execution+"/calls/"+a.call+"/result", "", []byte(`{"output":{"by":"a"}}`)); got.status/100 != 2 {
		t.Errorf("A answering its own call after B's attempts: %s", got)
	}

	// The control: B's own ids with the same bodies are accepted, so the 404s above were ownership.
	for _, r := range routes {
		if r.public || isCatalogue(r) || r.method == "DELETE" || len(r.params("path")) == 0 || isExecution(r) {
			continue
		}
		for _, body := range validBodies[r.String()] {
			path, _, _ := fill(r.path, b.ids(r.path))
			if got := l.do(t, b.dev, r.method, path, "", []byte(body)); got.status/100 != 2 {
				t.Errorf("control: B's own %s %s %s: %s", r, path, body, got)
			}
		}
	}

	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	fmt.Fprintf(&sb, "isolation cases per route (B naming A's ids):\n")
	for _, k := range keys {
		fmt.Fprintf(&sb, "  %-58s %3d\n", k, counts[k])
	}
	fmt.Fprintf(&sb, "  %-58s %3d (%d routes)", "total", checked, len(keys))
	t.Log(sb.String())
}

type isoCase struct {
	name        string
	path, query string
	body        []byte
	want404     bool
}

// isolationCases are B's requests on route r naming A's ids.
func isolationCases(r route, a, b *world, bodies [][]byte) []isoCase {
	var cs []isoCase
	params := r.params("path")
	if len(params) > 0 {
		// Routes keyed by a name in the caller's own namespace (secrets, flags): B writing under
		// A's secret name writes a secret of B's own, which names nothing of A's; B deleting it
		// must miss.
		if len(params) == 1 && params[0]["name"] == "name" && r.method != "DELETE" {
			return nil
		}
		// So too Julep's create_or_update of agents and users: B naming A's id makes a record of
		// B's own, in B's namespace (a task's, which names an agent too, is checked below).
		if len(params) == 1 && createsWithID[r.String()] != "" {
			return nil
		}
		for i, body := range bodies {
			path, _, _ := fill(r.path, a.ids(r.path))
			cs = append(cs, isoCase{name: fmt.Sprintf("A's ids, body %d", i), path: path, body: body, want404: true})
		}
		// The resume routes with one id of each: B's execution with A's call, A's execution with B's.
		if strings.Contains(r.path, "{call_id}") {
			for _, mix := range []struct {
				name     string
				exec, cl string
			}{{"B's execution, A's call", b.execution, a.call}, {"A's execution, B's call", a.execution, b.call}} {
				path, _, _ := fill(r.path, func(p string) (string, bool) {
					switch p {
					case "execution_id":
						return mix.exec, true
					case "call_id":
						return mix.cl, true
					}
					return "", false
				})
				cs = append(cs, isoCase{name: mix.name, path: path, body: bodies[0], want404: true})
			}
		}
		return cs
	}
	switch r.String() {
	case "POST /sessions":
		for _, body := range []string{
			fmt.Sprintf(`{"agent_id":%q}`, a.agent),
			fmt.Sprintf(`{"agent_id":%q,"user_id":%q}`, b.agent, a.user),
		} {
			cs = append(cs, isoCase{name: body, path: r.path, body: []byte(body), want404: true})
		}
	case "POST /tool-calls":
		for _, body := range []string{
			fmt.Sprintf(`{"agent_id":%q,"tool":"ask_user"}`, a.agent),
			fmt.Sprintf(`{"agent_id":%q,"task_id":%q,"tool":"task_echo"}`, b.agent, a.task),
			fmt.Sprintf(`{"agent_id":%q,"session_id":%q,"tool":"ask_user"}`, b.agent, a.session),
		} {
			cs = append(cs, isoCase{name: body, path: r.path, body: []byte(body), want404: true})
		}
	default:
		if r.method != "GET" {
			return nil // a create that cannot name anything of A's (POST /agents, POST /users)
		}
		// A list: B's answer must hold nothing of A's (checked on every answer).
		cs = append(cs, isoCase{name: "list", path: r.path})
		for _, p := range r.params("query") {
			if enum, ok := p["schema"].(map[string]any)["enum"].([]any); ok {
				for _, v := range enum {
					q := fmt.Sprintf("%s=%v", p["name"], v)
					cs = append(cs, isoCase{name: "list " + q, path: r.path, query: q})
				}
			}
		}
	}
	return cs
}

func isCatalogue(r route) bool { return strings.HasPrefix(r.path, "/integrations") }

func isExecution(r route) bool {
	return strings.HasPrefix(r.path, "/executions") || strings.HasSuffix(r.path, "/executions") || strings.HasSuffix(r.path, "/chat")
}

// TestIsolationSystemTools runs every system tool combination through local mode's system Lambda
// (the Lambda Invoke API) on behalf of developer B, naming developer A's ids: each is a
// Sinew.NotFound, a list without ids holds nothing of A's, and A's items are unchanged.
func TestIsolationSystemTools(t *testing.T) {
	l := local(t)
	a := seed(t, l, newDev("sys-a"))
	b := seed(t, l, newDev("sys-b"))
	before := l.items(t, a.dev)
	secretsOfA := []string{a.agent, a.agentTool, a.task, a.taskTool, a.user, a.session, a.agentDoc, a.userDoc, a.execution, a.dev}

	n, named := 0, 0
	for _, name := range system.Supported() {
		parts := strings.Split(name, ".")
		res, sub, op := parts[0], "", parts[len(parts)-1]
		if len(parts) == 3 {
			sub = parts[1]
		}
		params, err := system.Parameters(res, sub, op)
		if err != nil {
			t.Fatal(err)
		}
		args, namesA := systemArgs(params, res, a)
		if !namesA && op != "list" && op != "search" {
			continue // a create naming nothing of A's (agent.create, user.create)
		}
		n++
		t.Run(name, func(t *testing.T) {
			out, ferr := invokeSystem(t, l, b, res, sub, op, args)
			if namesA {
				named++
				if ferr == nil || ferr.Type != "Sinew.NotFound" {
					t.Errorf("B's %s naming A's ids (%v): %s %v, want Sinew.NotFound", name, args, out, ferr)
				}
			} else if ferr != nil && ferr.Type == "Sinew.Internal" {
				t.Errorf("B's %s: %v", name, ferr)
			}
			raw := string(out)
			if ferr != nil {
				raw = ferr.Message
			}
			sent, _ := json.Marshal(args)
			for _, s := range secretsOfA {
				if strings.Contains(raw, s) && !strings.Contains(string(sent), s) {
					t.Errorf("B's %s answer holds A's %q: %s", name, s, raw)
				}
			}
		})
	}
	if d := changes(before, l.items(t, a.dev)); d != "" {
		t.Errorf("A's items changed: %s", d)
	}
	t.Logf("system tools: %d of %d combinations run on behalf of B, %d of them naming A's ids", n, len(system.Supported()), named)
	// The control: B's own agent is found by the same call, so the NotFound above was ownership.
	if out, ferr := invokeSystem(t, l, b, "agent", "", "get", map[string]any{"agent_id": b.agent}); ferr != nil || !strings.Contains(string(out), b.agent) {
		t.Errorf("control: B's agent.get of its own agent: %s %v", out, ferr)
	}
}

// systemArgs fills a combination's arguments: every id argument with A's id of that kind, the other
// required ones with plain values. namesA reports whether any A id went in.
func systemArgs(params map[string]any, res string, a *world) (map[string]any, bool) {
	props, _ := params["properties"].(map[string]any)
	// The required arguments, and the words a search needs (its handler asks for them).
	req := map[string]bool{"text": true}
	rs, _ := params["required"].([]any)
	for _, r := range rs {
		req[r.(string)] = true
	}
	args := map[string]any{}
	namesA := false
	for k, p := range props {
		id := map[string]string{"agent_id": a.agent, "user_id": a.user, "task_id": a.task, "session_id": a.session,
			"tool_id": a.agentTool, "execution_id": a.execution}[k]
		if k == "doc_id" {
			id = a.agentDoc
			if res == "user" {
				id = a.userDoc
			}
		}
		if id != "" {
			args[k], namesA = id, true
			continue
		}
		if !req[k] {
			continue
		}
		if k == "messages" {
			args[k] = []any{map[string]any{"role": "user", "content": "hello"}}
			continue
		}
		switch p.(map[string]any)["type"] {
		case "object":
			args[k] = map[string]any{}
		case "array":
			args[k] = []any{}
		case "integer", "number":
			args[k] = 1
		case "boolean":
			args[k] = true
		default:
			args[k] = "x"
		}
	}
	return args, namesA
}

// invokeSystem runs one system call through the system Lambda as developer dev of w.
func invokeSystem(t *testing.T, l *localMode, w *world, res, sub, op string, args map[string]any) ([]byte, *lambdaError) {
	t.Helper()
	var subp any
	if sub != "" {
		subp = sub
	}
	ev := map[string]any{
		"call": map[string]any{"id": tool.NewCallID(), "type": "system", "system": map[string]any{
			"resource": res, "operation": op, "resource_id": nil, "subresource": subp, "arguments": args}},
		"tool":    map[string]any{"name": "sys", "type": "system", "system": map[string]any{"resource": res, "operation": op, "subresource": sub}},
		"context": map[string]any{"developer_id": w.dev, "agent_id": w.agent, "task_id": nil, "session_id": nil, "execution_id": nil, "depth": 0},
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.lambda.Invoke(context.Background(), &lambdasdk.InvokeInput{FunctionName: awsv2.String("system"), Payload: payload})
	if err != nil {
		t.Fatalf("invoke system: %v", err)
	}
	if out.FunctionError != nil {
		e, ok := lambdaboundary.ParsePayload(out.Payload)
		if !ok {
			t.Fatalf("system failed with %s: %s", *out.FunctionError, out.Payload)
		}
		return nil, &lambdaError{Type: e.Type, Message: e.Message}
	}
	return out.Payload, nil
}

type lambdaError struct{ Type, Message string }

func (e *lambdaError) String() string { return e.Type + ": " + e.Message }
