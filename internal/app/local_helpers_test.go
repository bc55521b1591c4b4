package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	lambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/google/uuid"

	"sinew/internal/chat"
	"sinew/internal/config"
	"sinew/internal/httpapi"
	"sinew/internal/localaws/jwtlocal"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/testenv/localmode"
)

// Local mode (./infra/local), built and started once for the package's tests and driven over
// loopback as a client would: HTTP with local JWTs, the Lambda Invoke API, and DynamoDB Local to
// read the table before and after.

var (
	localOnce sync.Once
	localProc *localMode
	localErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if localProc != nil {
		localProc.stop()
	}
	os.Exit(code)
}

type localMode struct {
	*localmode.Proc
	tmp    string
	bin    string
	db     *dynamodb.Client
	lambda *lambdasdk.Client
	client *http.Client
	tokMu  sync.Mutex
	tokens map[string]string
}

// local is the running local mode, started on first use.
func local(t *testing.T) *localMode {
	t.Helper()
	if testing.Short() {
		t.Skip("starts local mode (a child process and DynamoDB Local)")
	}
	localOnce.Do(func() { localProc, localErr = startLocal() })
	if localErr != nil {
		t.Fatal(localErr)
	}
	return localProc
}

func moduleRoot() (string, error) { return filepath.Abs("../..") }

func startLocal() (*localMode, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "sinew-app-local-")
	if err != nil {
		return nil, err
	}
	l := &localMode{tmp: tmp, client: &http.Client{Timeout: 2 * time.Minute}, tokens: map[string]string{}}
	if l.bin, err = localmode.Build(root, filepath.Join(tmp, "local")); err != nil {
		return nil, err
	}
	// The scripted model: nothing here may reach a real model endpoint. DynamoDB Local of its own
	// (not make test's shared one): the walks scan the table after every case, and other packages'
	// load must not make each scan slow.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, ddblocal.EnvEndpoint+"=") {
			env = append(env, kv)
		}
	}
	// The MCP import's control reaches isoMCP, and nothing else on loopback.
	env = append(env, config.EnvAPICallAllow+"="+strings.TrimPrefix(isoMCP.URL, "http://"))
	env = append(env, config.EnvModel+"=scripted:"+filepath.Join(root, "events/models/echo_demo.json"))
	if l.Proc, err = localmode.Start(l.bin, filepath.Join(tmp, "data"), []string{"--in-memory", "--root", root}, env); err != nil {
		return nil, err
	}
	// DynamoDB through the AWS endpoint, as a user reaches it: DynamoDB Local's own port keeps
	// local mode's table under its secret key id.
	creds := l.Credentials()
	l.db = dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: awsv2.String(l.Endpoints["aws"]), Credentials: creds})
	l.lambda = lambdasdk.New(lambdasdk.Options{Region: "us-east-1", BaseEndpoint: awsv2.String(l.Endpoints["lambda"]), Credentials: creds})
	return l, nil
}

func (l *localMode) stop() {
	l.Kill()
	_ = os.RemoveAll(l.tmp)
}

// token is a JWT for developer dev, from local mode's own signer.
func (l *localMode) token(t *testing.T, dev string) string {
	t.Helper()
	l.tokMu.Lock()
	defer l.tokMu.Unlock()
	if tok, ok := l.tokens[dev]; ok {
		return tok
	}
	out, err := exec.Command(l.bin, "token", "--dir", l.Dir, dev).Output()
	if err != nil {
		t.Fatalf("local token %s: %v", dev, err)
	}
	tok := strings.TrimSpace(string(out))
	l.tokens[dev] = tok
	return tok
}

// answer is an HTTP answer.
type answer struct {
	status int
	raw    string
	body   map[string]any
}

func (a answer) String() string {
	raw := a.raw
	if len(raw) > 300 {
		raw = raw[:300] + "..."
	}
	return fmt.Sprintf("%d %s", a.status, raw)
}

// errMessage is the error body's message, "" when the body is not sinew's error shape.
func (a answer) errMessage() string {
	e, _ := a.body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// do sends one request as dev ("" for none); path is already escaped, query is the raw query
// string.
func (l *localMode) do(t *testing.T, dev, method, path, query string, body []byte) answer {
	t.Helper()
	tok := ""
	if dev != "" {
		tok = l.token(t, dev)
	}
	return l.doToken(t, tok, method, path, query, body)
}

// doToken sends one request with the bearer token tok ("" for none).
func (l *localMode) doToken(t *testing.T, tok, method, path, query string, body []byte) answer {
	t.Helper()
	u := l.Endpoints["http"] + path
	if query != "" {
		u += "?" + query
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := l.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, raw: string(b)}
	_ = json.Unmarshal(b, &a.body)
	return a
}

// must sends a request that must answer 2xx, and gives its body.
func (l *localMode) must(t *testing.T, dev, method, path string, body any) map[string]any {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	a := l.do(t, dev, method, path, "", b)
	if a.status < 200 || a.status > 299 {
		t.Fatalf("%s %s: %s", method, path, a)
	}
	return a.body
}

// items are developer dev's items in the table, keyed by pk|sk, as comparable JSON.
func (l *localMode) items(t *testing.T, dev string) map[string]string {
	t.Helper()
	out := map[string]string{}
	p := dynamodb.NewScanPaginator(l.db, &dynamodb.ScanInput{
		TableName:        awsv2.String("sinew"),
		ConsistentRead:   awsv2.Bool(true),
		FilterExpression: awsv2.String("pk = :d OR begins_with(pk, :p)"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":d": &ddbtypes.AttributeValueMemberS{Value: "DEV#" + dev}, ":p": &ddbtypes.AttributeValueMemberS{Value: "DEV#" + dev + "#"},
		},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			var m map[string]any
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				t.Fatal(err)
			}
			v, _ := json.Marshal(m)
			out[fmt.Sprint(m["pk"], "|", m["sk"])] = string(v)
		}
	}
	return out
}

// changes says how after differs from before, "" when it does not.
func changes(before, after map[string]string) string {
	var d []string
	for k, v := range after {
		if b, ok := before[k]; !ok {
			d = append(d, "added "+k)
		} else if b != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			d = append(d, "removed "+k)
		}
	}
	sort.Strings(d)
	return strings.Join(d, "; ")
}

// ---- the routes ----

// route is one route of the HTTP API with its OpenAPI operation.
type route struct {
	method, path string
	function     string
	public       bool
	op           map[string]any // the operation in the OpenAPI document
}

func (r route) String() string { return r.method + " " + r.path }

// hasBody reports whether the operation documents a JSON body.
func (r route) hasBody() bool { return r.op["requestBody"] != nil }

// params are the operation's parameters of one kind ("path", "query", "header").
func (r route) params(in string) []map[string]any {
	var out []map[string]any
	ps, _ := r.op["parameters"].([]any)
	for _, p := range ps {
		if m, ok := p.(map[string]any); ok && m["in"] == in {
			out = append(out, m)
		}
	}
	return out
}

// allRoutes is every route the deployment serves: the api function's router (app.APIRouter) and
// the chat function's, each with its OpenAPI operation, so a route added to either is walked
// without changing these tests. It also returns the schemas the operations refer to.
func allRoutes(t *testing.T) ([]route, map[string]any) {
	t.Helper()
	apiRT := apiRouter(t)
	chatRT := httpapi.New(httpapi.Options{})
	chat.Register(chatRT, nil)
	var out []route
	schemas := map[string]any{}
	for _, rt := range []*httpapi.Router{apiRT, chatRT} {
		doc := rt.OpenAPI()
		paths := doc["paths"].(map[string]any)
		for k, v := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
			schemas[k] = v
		}
		for _, ri := range rt.Routes() {
			item, _ := paths[ri.Path].(map[string]any)
			op, _ := item[strings.ToLower(ri.Method)].(map[string]any)
			if op == nil {
				t.Errorf("%s %s is not in the OpenAPI document", ri.Method, ri.Path)
				continue
			}
			out = append(out, route{method: ri.Method, path: ri.Path, function: ri.Function, public: ri.Public, op: op})
		}
	}
	return out, schemas
}

// resolve follows a schema's $ref.
func resolve(schemas map[string]any, s any) map[string]any {
	m, _ := s.(map[string]any)
	for i := 0; i < 8 && m != nil; i++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			break
		}
		m, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
	return m
}

// requestSchema is the route's JSON body schema, resolved.
func (r route) requestSchema(schemas map[string]any) map[string]any {
	rb, _ := r.op["requestBody"].(map[string]any)
	c, _ := rb["content"].(map[string]any)
	j, _ := c["application/json"].(map[string]any)
	return resolve(schemas, j["schema"])
}

// fill puts ids into the route's path, escaped; ok is false when the route has a parameter ids
// has no value for.
func fill(path string, ids func(param string) (string, bool)) (string, string, bool) {
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		b.WriteString("/")
		if strings.HasPrefix(seg, "{") {
			name := strings.Trim(seg, "{}")
			v, ok := ids(name)
			if !ok {
				return "", name, false
			}
			b.WriteString(url.PathEscape(v))
			continue
		}
		b.WriteString(seg)
	}
	return b.String(), "", true
}

// newDev is a fresh developer id, so runs and tests never share items.
func newDev(prefix string) string { return prefix + "-" + uuid.NewString()[:8] }

// ---- one developer's world ----

// world is one of everything, made by dev through the API: the ids the walks put in paths.
type world struct {
	dev                                       string
	agent, agentTool, task, taskTool, user    string
	session, agentDoc, userDoc, secret        string
	execution, call, token, payloadRef, flag  string
	integrationExecution                      string
	taskExecution, transition                 string // a task's run of its steps, and its first transition
	agentToolName, taskToolName, functionTool string
}

// seed makes dev's world: an agent with a function tool and an integration tool, a task with a
// tool, a user, a session with a message, docs of both owners, a secret, a flag, a tool_call
// execution waiting on a function call (with its call id and task token), and a finished one.
func seed(t *testing.T, l *localMode, dev string) *world {
	t.Helper()
	w := &world{dev: dev, flag: "auto_run_tools_chat", agentToolName: "ask_user", taskToolName: "task_echo", functionTool: "ask_user"}
	w.agent = l.must(t, dev, "POST", "/agents", map[string]any{"name": "agent of " + dev,
		"metadata": map[string]any{"x-integration-setup": map[string]any{"echo": map[string]any{"api_key": "setup-of-" + dev}}}})["id"].(string)
	w.agentTool = l.must(t, dev, "POST", "/agents/"+w.agent+"/tools", map[string]any{"name": "ask_user", "type": "function",
		"function": map[string]any{"parameters": map[string]any{"type": "object"}, "timeout_seconds": 3600}})["id"].(string)
	l.must(t, dev, "POST", "/agents/"+w.agent+"/tools", map[string]any{"name": "echo", "type": "integration", "integration": map[string]any{"provider": "dummy"}})
	task := l.must(t, dev, "POST", "/agents/"+w.agent+"/tasks", map[string]any{"name": "task of " + dev,
		"tools": []any{map[string]any{"name": "task_echo", "type": "integration", "integration": map[string]any{"provider": "dummy"}}}})
	w.task = task["id"].(string)
	tools := l.must(t, dev, "GET", "/tasks/"+w.task+"/tools", nil)["items"].([]any)
	w.taskTool = tools[0].(map[string]any)["id"].(string)
	w.user = l.must(t, dev, "POST", "/users", map[string]any{"name": "user of " + dev})["id"].(string)
	w.session = l.must(t, dev, "POST", "/sessions", map[string]any{"agent_id": w.agent, "user_id": w.user})["id"].(string)
	w.agentDoc = l.must(t, dev, "POST", "/agents/"+w.agent+"/docs", map[string]any{"title": "agent doc", "content": "lisbon harbour " + dev})["id"].(string)
	w.userDoc = l.must(t, dev, "POST", "/users/"+w.user+"/docs", map[string]any{"title": "user doc", "content": "porto river " + dev})["id"].(string)
	w.secret = "KEY_" + strings.ToUpper(strings.ReplaceAll(dev[len(dev)-8:], "-", "_"))
	l.must(t, dev, "PUT", "/secrets/"+w.secret, map[string]any{"value": "secret-value-of-" + dev})
	l.must(t, dev, "PUT", "/flags/"+w.flag, map[string]any{"value": true})

	// A finished integration call, and a function call left waiting for its answer.
	w.integrationExecution = l.must(t, dev, "POST", "/tool-calls", map[string]any{"agent_id": w.agent, "tool": "echo", "arguments": map[string]any{"text": "hi"}})["execution_id"].(string)
	w.execution = l.must(t, dev, "POST", "/tool-calls", map[string]any{"agent_id": w.agent, "tool": "ask_user", "arguments": map[string]any{"q": "which city?"}})["execution_id"].(string)
	eventually(t, "the function call of "+dev+" to wait and the integration call to end", func() bool {
		calls := l.must(t, dev, "GET", "/calls", nil)["items"].([]any)
		x := l.must(t, dev, "GET", "/executions/"+w.integrationExecution, nil)
		for _, c := range calls {
			c := c.(map[string]any)
			if c["execution_id"] == w.execution {
				w.call, _ = c["call_id"].(string)
				w.token, _ = c["task_token"].(string)
			}
		}
		return w.call != "" && w.token != "" && x["status"] != "running"
	})
	// A task with steps, run to its end: its execution's transitions.
	steps := l.must(t, dev, "POST", "/agents/"+w.agent+"/tasks", map[string]any{"name": "steps of " + dev,
		"main": []any{map[string]any{"evaluate": map[string]any{"x": 1}}}})["id"].(string)
	w.taskExecution = l.must(t, dev, "POST", "/tasks/"+steps+"/executions", map[string]any{"input": map[string]any{}})["id"].(string)
	eventually(t, "the task execution of "+dev+" to end", func() bool {
		ts, _ := l.must(t, dev, "GET", "/executions/"+w.taskExecution+"/transitions", nil)["items"].([]any)
		if len(ts) == 0 || ts[len(ts)-1].(map[string]any)["type"] != "finish" {
			return false
		}
		w.transition = ts[0].(map[string]any)["id"].(string)
		return true
	})
	// A stored payload, as an executor stores an output over 32 KiB, written through
	// the store into local mode's table.
	ref, err := store.New(l.db, "sinew", nil).PutPayload(context.Background(), dev, []byte(`{"big":"value of `+dev+`"}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	w.payloadRef = ref
	if got := l.must(t, dev, "GET", "/payloads/"+url.PathEscape(ref), nil); got == nil {
		t.Fatalf("GET /payloads/%s answered nothing", ref)
	}
	return w
}

// ids gives the value of each path parameter in w, by route: a tool id under /tasks is the task's
// tool, a doc id under /users the user's doc, a {name} under /flags a flag.
func (w *world) ids(path string) func(string) (string, bool) {
	return func(p string) (string, bool) {
		switch p {
		case "agent_id":
			return w.agent, true
		case "tool_id":
			if strings.HasPrefix(path, "/tasks/") {
				return w.taskTool, true
			}
			return w.agentTool, true
		case "task_id":
			return w.task, true
		case "user_id":
			return w.user, true
		case "session_id":
			return w.session, true
		case "doc_id":
			if strings.HasPrefix(path, "/users/") {
				return w.userDoc, true
			}
			return w.agentDoc, true
		case "name":
			if strings.HasPrefix(path, "/flags/") {
				return w.flag, true
			}
			return w.secret, true
		case "execution_id":
			if strings.Contains(path, "/transitions/") {
				return w.taskExecution, true
			}
			return w.execution, true
		case "transition_id":
			return w.transition, true
		case "call_id":
			return w.call, true
		case "ref":
			return w.payloadRef, true
		case "provider":
			return "dummy", true
		case "method":
			return "echo", true
		}
		return "", false
	}
}

// eventually polls cond until it holds; the bound only guards against a hang.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// forgedToken is a well-formed token for dev signed by a key local mode does not trust.
func forgedToken(dev string) string {
	dir, err := os.MkdirTemp("", "sinew-forged-key-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := jwtlocal.Open(jwtlocal.Options{Dir: dir})
	if err != nil {
		panic(err)
	}
	tok, err := s.Issue(dev, time.Hour)
	if err != nil {
		panic(err)
	}
	return tok
}
