// Package badinput_test gives every Lambda handler the events a careless or hostile caller can send
// (malformed JSON, wrong types, unknown fields, events over 256 KiB and over 6 MB, empty ones),
// each through the real Lambda error boundary (lambdaboundary.Handler, as local mode and the
// deployed mains run them), and checks the answer is a typed Sinew.* error with a message a person
// can act on, never a panic or Sinew.Internal, and that the table is unchanged.
package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	apiexec "sinew/internal/apicall"
	"sinew/internal/app"
	"sinew/internal/chat"
	"sinew/internal/config"
	"sinew/internal/dispatch"
	"sinew/internal/executor"
	"sinew/internal/executor/eventbus"
	"sinew/internal/handler/function"
	modelfn "sinew/internal/handler/model"
	"sinew/internal/handler/prepare"
	"sinew/internal/handler/settle"
	"sinew/internal/httpapi"
	"sinew/internal/integrations"
	"sinew/internal/integrations/providers/dummy"
	"sinew/internal/lambdaboundary"
	"sinew/internal/llm/scripted"
	localeb "sinew/internal/localaws/eventbridge"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/netguard"
	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/system"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

const dev = "dev-badinput"

// fn is one Lambda under test.
type fn struct {
	name string
	h    lambda.Handler
	base map[string]any // a valid event: the cases spoil it one way each
	// typed are paths of fields with a fixed JSON type, nested a path of an object whose unknown
	// keys must be refused.
	typed  []string
	nested string
	// http: the function answers API Gateway events, whose unknown fields are ignored (AWS adds
	// fields to its events) and whose bad requests are HTTP 4xx answers.
	http bool
}

// tcase is one bad event; want is the Sinew kind expected ("" for an HTTP 4xx answer).
type tcase struct {
	name    string
	payload []byte
	want    string
}

func TestEveryLambdaRefusesBadEvents(t *testing.T) {
	w := newWorld(t)
	fns := w.functions(t)
	counts := map[string]int{}
	for _, f := range fns {
		for _, c := range casesFor(t, f) {
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				if why, ok := knownBugs[f.name+"/"+c.name]; ok {
					t.Skip(why)
				}
				before := w.scan(t)
				out, ierr := invoke(t, f.h, c.payload)
				checkAnswer(t, f, c, out, ierr)
				if after := w.scan(t); !reflect.DeepEqual(before, after) {
					t.Errorf("the table changed: %s", diff(before, after))
				}
			})
			counts[f.name]++
		}
		// The base event must pass the boundary's decoding and the handler's checks, or every
		// case above proves nothing: its outcome may be an error of state, never InvalidInput.
		t.Run(f.name+"/base event is valid", func(t *testing.T) {
			out, ierr := invoke(t, f.h, mustJSON(t, f.base))
			if ierr != nil && (ierr.Type == "Sinew.InvalidInput" || ierr.Type == "Sinew.Internal") {
				t.Errorf("the base event is refused: %s: %s", ierr.Type, ierr.Message)
			}
			if f.http {
				var resp events.APIGatewayV2HTTPResponse
				if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode >= 500 {
					t.Errorf("the base event's answer: %s (%v)", out, err)
				}
			}
		})
	}
	var names []string
	total := 0
	for n, c := range counts {
		names = append(names, n)
		total += c
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "bad events per Lambda:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-12s %d\n", n, counts[n])
	}
	fmt.Fprintf(&b, "  %-12s %d (%d Lambdas)", "total", total, len(names))
	t.Log(b.String())
	if len(names) != 9 {
		t.Errorf("%d Lambdas tested, want the 9 of internal/deploy (%v)", len(names), names)
	}
}

// knownBugs are cases that fail in code another engineer owns, reported rather than fixed here.
var knownBugs = map[string]string{}

// invoke runs h as local mode's in-process invoker does, catching a panic that escaped the
// boundary as a failure of the test.
func invoke(t *testing.T, h lambda.Handler, payload []byte) (out []byte, ierr *lambdaError) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("panic: %v", p)
		}
	}()
	o, e := lambdaboundary.Invoke(context.Background(), h, payload)
	if e != nil {
		if e.ShouldExit {
			t.Errorf("the handler panicked (%s: %s)", e.Type, e.Message)
		}
		return nil, &lambdaError{Type: e.Type, Message: e.Message}
	}
	return o, nil
}

type lambdaError struct{ Type, Message string }

func checkAnswer(t *testing.T, f fn, c tcase, out []byte, ierr *lambdaError) {
	t.Helper()
	if c.want == "" { // an API Gateway event whose unknown fields are ignored: the router answers it
		if ierr != nil {
			t.Fatalf("got the Lambda error %s: %s, want the router's answer", ierr.Type, ierr.Message)
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("answer %q is not an HTTP API response: %v", out, err)
		}
		var body httpapi.ErrorBody
		switch {
		case resp.StatusCode >= 500:
			t.Fatalf("answer %d %s", resp.StatusCode, resp.Body)
		case resp.StatusCode >= 400 && (json.Unmarshal([]byte(resp.Body), &body) != nil || body.Error.Message == ""):
			t.Fatalf("answer %d %s has no error message", resp.StatusCode, resp.Body)
		}
		return
	}
	if ierr == nil {
		t.Fatalf("the event was accepted (answer %.200s), want %s", out, c.want)
	}
	if ierr.Type != c.want {
		t.Errorf("error %s: %s, want %s", ierr.Type, ierr.Message, c.want)
	}
	if ierr.Message == "" || ierr.Message == "internal error" {
		t.Errorf("error %s has no message a person can act on: %q", ierr.Type, ierr.Message)
	}
}

// casesFor spoils f's base event in each way the issue lists.
func casesFor(t *testing.T, f fn) []tcase {
	f.base = clone(t, f.base) // JSON's own types, as a caller's event decodes
	base := mustJSON(t, f.base)
	inv, big := "Sinew.InvalidInput", "Sinew.TooLarge"
	unknown := inv
	if f.http {
		unknown = "" // ignored: the router answers the (otherwise valid) request
	}
	pad := func(n int) string { return strings.Repeat("x", n) }
	cs := []tcase{
		{"malformed: cut in half", base[:len(base)/2], inv},
		{"malformed: not JSON", []byte(`{call: "x"}`), inv},
		{"malformed: trailing data", append(slices.Clone(base), []byte(` {"again":1}`)...), inv},
		{"malformed: cut inside invalid UTF-8", []byte("{\"call\": \"\xff"), inv},
		{"malformed: invalid UTF-8 in a string", bytes.Replace(base, []byte(`":`), []byte("\xff\xfe\":"), 1), inv},
		{"wrong type: an array", []byte(`[]`), inv},
		{"wrong type: a string", []byte(`"event"`), inv},
		{"wrong type: a number", []byte(`42`), inv},
		{"unknown field at the top", with(t, f.base, "zz_unknown", 1), unknown},
		{"empty", nil, inv},
		{"whitespace only", []byte(" \n\t "), inv},
		{"over 256 KiB: unknown field", with(t, f.base, "zz_padding", pad(300<<10)), unknown},
		{"over 256 KiB: malformed", []byte(`{"call": "` + pad(300<<10)), inv},
		{"over 6 MB", with(t, f.base, "zz_padding", pad(lambdaboundary.MaxEvent)), big},
		{"over 6 MB: malformed", []byte(`{"call": "` + pad(lambdaboundary.MaxEvent+1)), big},
	}
	for _, p := range f.typed {
		for _, v := range wrongValues(t, f.base, p) {
			cs = append(cs, tcase{fmt.Sprintf("wrong type: %s = %s", p, mustJSON(t, v)), with(t, f.base, p, v), inv})
		}
		if f.http {
			continue
		}
		// The same wrong type in an event over 256 KiB (a large argument elsewhere).
		ev := withValue(t, f.base, p, wrongValues(t, f.base, p)[0])
		cs = append(cs, tcase{"over 256 KiB: wrong type " + p, with(t, ev, "zz_padding_unknown", pad(300<<10)), inv})
	}
	if f.nested != "" {
		obj, _ := get(f.base, f.nested).(map[string]any)
		if obj == nil {
			t.Fatalf("%s: %s is not an object in the base event", f.name, f.nested)
		}
		cp := clone(t, obj)
		cp["zz_unknown"] = true
		cs = append(cs, tcase{"unknown field in " + f.nested, with(t, f.base, f.nested, cp), unknown})
	}
	return cs
}

// wrongValues are values of another JSON type than the one at path in base.
func wrongValues(t *testing.T, base map[string]any, path string) []any {
	switch get(base, path).(type) {
	case string:
		return []any{42, map[string]any{"a": 1}}
	case float64:
		return []any{"7", []any{1}}
	case bool:
		return []any{"true"}
	case map[string]any:
		return []any{"an object", []any{1, 2}}
	case []any:
		return []any{map[string]any{}, "x"}
	}
	t.Fatalf("no value at %s in the base event", path)
	return nil
}

// world is the table and what the handlers need, with A's resources the events name, so a case
// that got past the checks would have something to write.
type world struct {
	db        *dynamodb.Client
	table     string
	st        *store.Store
	agentID   string
	sessionID string
	apiURL    string
	guard     *netguard.Policy
	reg       *integrations.Registry
	ebc       *eventbridge.Client
}

func newWorld(t *testing.T) *world {
	w := &world{}
	w.db = ddblocal.Client(t)
	w.table = ddblocal.NewTable(t, w.db)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	w.st = store.New(w.db, w.table, sl)
	ctx := context.Background()
	a, err := w.st.CreateAgent(ctx, dev, store.Agent{Name: "badinput"})
	if err != nil {
		t.Fatal(err)
	}
	w.agentID = a.ID
	api := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(rw, `{"ok":true}`)
	}))
	t.Cleanup(api.Close)
	w.apiURL = api.URL
	w.guard = netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(strings.TrimPrefix(api.URL, "http://"))))
	for _, src := range []string{
		`{"name":"echo","type":"integration","integration":{"provider":"dummy"}}`,
		`{"name":"ask_user","type":"function","function":{"parameters":{"type":"object"}}}`,
		`{"name":"get_item","type":"api_call","api_call":{"method":"GET","url":"` + api.URL + `/items/{id}"}}`,
		`{"name":"get_agent","type":"system","system":{"resource":"agent","operation":"get"}}`,
	} {
		tl, err := tool.Decode([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.st.CreateTool(ctx, dev, store.Owner{Kind: store.OwnerAgent, ID: a.ID}, *tl); err != nil {
			t.Fatal(err)
		}
	}
	s, err := w.st.CreateSession(ctx, dev, store.Session{AgentID: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	w.sessionID = s.ID
	if _, _, err := w.st.CreateExecution(ctx, dev, store.Execution{ExecutionID: "exec-badinput", Workflow: workflow.ToolCall}); err != nil {
		t.Fatal(err)
	}
	w.reg = integrations.New(w.guard)
	if err := w.reg.Register(dummy.Provider); err != nil {
		t.Fatal(err)
	}
	ev, err := localeb.Open(localeb.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	evSrv := httptest.NewServer(ev)
	t.Cleanup(evSrv.Close)
	w.ebc = eventbridge.NewFromConfig(awsv2.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(o *eventbridge.Options) { o.BaseEndpoint = &evSrv.URL })
	return w
}

// functions builds each Lambda as infra/local and the functions' mains build it, behind the
// boundary, with the base events from events/ pointed at this world's resources.
func (w *world) functions(t *testing.T) []fn {
	ctx := map[string]any{"developer_id": dev, "agent_id": w.agentID, "task_id": nil, "session_id": nil, "execution_id": "exec-badinput", "depth": 0}
	svc := &workflow.Service{Store: w.st}
	fnx := &executor.Function{Store: w.st, Events: eventbus.Bus{Client: w.ebc}, EventBus: "default"}
	exec := executor.Runner{Store: w.st}
	res := &resources.Service{Store: w.st}
	model, err := scripted.Load(filepath.Join(root(t), "events/models/echo_demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	formatter := &toolfmt.Formatter{Integrations: w.reg, System: system.Schema}
	chatSvc := chat.New(chat.Deps{Store: w.st, Model: model, Formatter: formatter,
		Dispatcher: &dispatch.Dispatcher{Invoker: refusing{}, Functions: map[tool.Type]string{}}})
	chatRT := httpapi.New(httpapi.Options{})
	chat.Register(chatRT, chatSvc)
	apiRT := app.APIRouter(app.Deps{Config: &config.Config{}, Store: w.st,
		AWS: awsv2.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}})

	event := func(rel string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(readFile(t, rel), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["context"]; ok {
			m["context"] = ctx
		}
		return m
	}
	prep := event("events/prepare/input.json")
	prep["developer_id"], prep["agent_id"], prep["tool"], prep["execution_id"] = dev, w.agentID, "echo", "exec-badinput-prepare"
	fnEv := event("events/function/input.json")
	fnEv["tool"].(map[string]any)["function"].(map[string]any)["timeout_seconds"] = 3600.0
	integ := event("events/integration/dummy.json")
	integ["tool"].(map[string]any)["integration"].(map[string]any)["arguments"] = map[string]any{"source": "definition"}
	ac := event("events/apicall/get.json")
	ac["tool"].(map[string]any)["api_call"].(map[string]any)["url"] = w.apiURL + "/items/{id}"
	sys := map[string]any{
		"call": map[string]any{"id": "call_c2FtcGxlLWNhbGwtaWQtMDAy", "type": "system", "system": map[string]any{
			"resource": "agent", "operation": "get", "resource_id": w.agentID, "subresource": nil, "arguments": map[string]any{}}},
		"tool":    map[string]any{"name": "get_agent", "type": "system", "system": map[string]any{"resource": "agent", "operation": "get"}},
		"context": ctx,
	}
	st := event("events/settle/outcome.json")
	mdl := event("events/agent_loop/model_first_step.json")
	mdl["input"].(map[string]any)["developer_id"], mdl["input"].(map[string]any)["agent_id"] = dev, w.agentID
	claims := map[string]any{"authorizer": map[string]any{"jwt": map[string]any{"claims": map[string]any{"sub": dev}}}}
	apiEv := map[string]any{"version": "2.0", "rawPath": "/agents", "rawQueryString": "",
		"requestContext": merge(claims, map[string]any{"http": map[string]any{"method": "GET", "path": "/agents"}})}
	chatPath := "/sessions/0190b3c2-7a3e-7c1d-9f00-00000000dead/chat"
	chatEv := map[string]any{"version": "2.0", "rawPath": chatPath, "body": `{"messages":[{"role":"user","content":"hi"}]}`,
		"requestContext": merge(claims, map[string]any{"http": map[string]any{"method": "POST", "path": chatPath}})}

	return []fn{
		{name: "prepare", h: lambdaboundary.Handler(prepare.Handler(prepare.Deps{Workflow: svc})), base: prep,
			typed: []string{"developer_id", "agent_id", "tool", "execution_id"}},
		{name: "function", h: lambdaboundary.Handler(function.Handler(fnx)), base: fnEv,
			typed: []string{"call", "call.id", "call.function.arguments", "tool.function.timeout_seconds", "context.depth", "task_token"}, nested: "context"},
		{name: "integration", h: lambdaboundary.Handler(executor.Handler(&executor.Integration{Runner: exec, Providers: w.reg}, nil)), base: integ,
			typed: []string{"call.integration.name", "tool.integration.provider", "context.developer_id"}, nested: "call.integration"},
		{name: "apicall", h: lambdaboundary.Handler(executor.Handler(&executor.APICall{Runner: exec, APICall: apiexec.New(w.guard)}, nil)), base: ac,
			typed: []string{"call.api_call.arguments", "tool.api_call.url", "context.agent_id"}, nested: "tool.api_call"},
		{name: "system", h: lambdaboundary.Handler(executor.Handler(&executor.System{System: &system.Executor{Resources: res}}, nil)), base: sys,
			typed: []string{"call.system.resource", "call.system.arguments", "context.depth"}, nested: "call.system"},
		{name: "settle", h: lambdaboundary.Handler(settle.Handler(svc, nil)), base: st,
			typed: []string{"call.id", "result", "context.execution_id"}, nested: "context"},
		{name: "model", h: lambdaboundary.Handler(modelfn.Handler(agentloop.New(agentloop.Deps{Store: w.st, Model: model, Formatter: formatter}))), base: mdl,
			typed: []string{"input.messages", "input.max_iterations", "execution_id"}, nested: "input"},
		{name: "api", h: lambdaboundary.Handler(apiRT.ServeEvent), base: apiEv, http: true,
			typed: []string{"rawPath", "requestContext", "requestContext.http.method"}, nested: "requestContext.http"},
		{name: "chat", h: lambdaboundary.Handler(chatRT.ServeEvent), base: chatEv, http: true,
			typed: []string{"rawPath", "body", "requestContext.authorizer.jwt.claims"}},
	}
}

// refusing is a dispatch transport that is never reached by these events.
type refusing struct{}

func (refusing) Invoke(context.Context, string, []byte) ([]byte, *messages.InvokeResponse_Error, error) {
	return nil, nil, fmt.Errorf("no executor in this test")
}

// scan is every item of the table, as comparable JSON.
func (w *world) scan(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	p := dynamodb.NewScanPaginator(w.db, &dynamodb.ScanInput{TableName: &w.table, ConsistentRead: awsv2.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			var key, all map[string]any
			if err := attributevalue.UnmarshalMap(it, &all); err != nil {
				t.Fatal(err)
			}
			key = map[string]any{"pk": all["pk"], "sk": all["sk"]}
			k, _ := json.Marshal(key)
			v, _ := json.Marshal(all)
			out[string(k)] = string(v)
		}
	}
	return out
}

func diff(before, after map[string]string) string {
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

func root(t *testing.T) string {
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func readFile(t *testing.T, rel string) []byte {
	b, err := os.ReadFile(filepath.Join(root(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func clone(t *testing.T, m map[string]any) map[string]any {
	var out map[string]any
	if err := json.Unmarshal(mustJSON(t, m), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func get(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		o, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = o[k]
	}
	return cur
}

// withValue is a copy of base with path set to v.
func withValue(t *testing.T, base map[string]any, path string, v any) map[string]any {
	cp := clone(t, base)
	keys := strings.Split(path, ".")
	cur := cp
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			t.Fatalf("%s: %s is not an object", path, k)
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = v
	return cp
}

// with is withValue as JSON.
func with(t *testing.T, base map[string]any, path string, v any) []byte {
	return mustJSON(t, withValue(t, base, path, v))
}
