package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/app"
	"sinew/internal/asl"
	"sinew/internal/config"
	"sinew/internal/httpapi"
	"sinew/internal/localaws/durable"
	"sinew/internal/localaws/sfnapi"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/testenv/ddblocal"
)

// fzRoute is one writing route the fuzzer sends bodies to; {A}, {T}, {K} are the fixture's agent,
// agent tool and task, so the bodies reach the handlers' rules and the store, not only a 404.
type fzRoute struct {
	method, path string
	get          string // the resource a refused write must leave as it was ("" for creates)
}

var fzRoutes = []fzRoute{
	{"POST", "/agents", ""},
	{"PUT", "/agents/{A}", "/agents/{A}"},
	{"PATCH", "/agents/{A}", "/agents/{A}"},
	{"POST", "/agents/{A}/tools", ""},
	{"PUT", "/agents/{A}/tools/{T}", "/agents/{A}/tools/{T}"},
	{"PATCH", "/agents/{A}/tools/{T}", "/agents/{A}/tools/{T}"},
	{"POST", "/agents/{A}/tasks", ""},
	{"PUT", "/tasks/{K}", "/tasks/{K}"},
	{"PATCH", "/tasks/{K}", "/tasks/{K}"},
	{"POST", "/tool-calls", ""},
	{"POST", "/tasks/{K}/executions", ""},
	{"POST", "/executions/exec-none/calls/call_AAAAAAAAAAAAAAAAAAAAAAAA/result", ""},
	{"PUT", "/executions/exec-none", ""},
}

// FuzzWriteRoutes sends arbitrary bodies to the main writing routes of the api function, through
// its real router (app.APIRouter) over DynamoDB Local and local mode's Step Functions service
// (a Pass machine stands in for tool_call and agent_loop, so a valid start succeeds). Every answer
// is a 2xx or a 4xx with the agreed error body, never a 5xx; a refused write leaves the resource
// it named as it was.
func FuzzWriteRoutes(f *testing.F) {
	fx := fzSetup(f)
	seeds := map[int][]string{
		0:  {`{"name":"a2","model":"m","about":"x","instructions":["be brief"],"metadata":{"x-integration-setup":{"send":{"api_key":"k"}}}}`, `{"name":5}`, `{"name":"a","metadata":[]}`, `{`, `[]`, `null`, ``},
		1:  {`{"name":"renamed","model":"m"}`, `{"name":"x","unknown":1}`, `{"metadata":{"x-api_call-setup":"no"}}`},
		2:  {`{"about":"patched"}`, `{"metadata":{"x-integration-args":{"t":{"a":1}}}}`, `{"name":null}`},
		3:  {`{"name":"t2","type":"function","function":{"parameters":{"type":"object"}}}`, `{"name":"w","type":"api_call","api_call":{"method":"GET","url":"http://x.test/{a}"}}`, `{"name":"t","type":"function","function":{}}`, `{"name":"s","type":"system","system":{"resource":"agent","operation":"list"}}`, `{"name":"1x","type":"integration","integration":{"provider":"slack"}}`},
		4:  {`{"name":"t","type":"function","function":{"timeout_seconds":60}}`, `{"name":"t","type":"integration"}`},
		5:  {`{"description":"d"}`, `{"type":"api_call"}`, `{"function":{"timeout_seconds":0}}`},
		6:  {`{"name":"k2","description":"d","tools":[{"name":"f","type":"function","function":{}}],"inherit_tools":true}`, `{"name":"k","tools":[{"name":1}]}`, `{"name":"k","tools":{}}`},
		7:  {`{"name":"k","tools":[]}`, `{"inherit_tools":"yes"}`},
		8:  {`{"description":"x"}`, `{"tools":null}`, `{"prompt":{"messages":[{"role":"user","content":"hi"}]}}`},
		9:  {`{"agent_id":"0190b3c2-7a3e-7c1d-9f00-000000000001","tool":"t","arguments":{"a":1}}`, `{"agent_id":"{A}","task_id":null,"session_id":null,"tool":"t","arguments":{}}`, `{"agent_id":"x","tool":"t"}`, `{"tool":"t","developer_id":"other"}`},
		10: {`{"input":"hello"}`, `{"input":{"a":1}}`, `{"input":1,"x":2}`},
		11: {`{"output":{"answer":42}}`, `{"error":{"type":"NotAllowed","message":"no"}}`, `{"output":1,"error":{"type":"x"}}`, `{}`},
		12: {`{"status":"running","input":{"a":1}}`, `{"status":"cancelled","reason":"r"}`, `{"status":"paused"}`},
	}
	for i, bodies := range seeds {
		for _, b := range bodies {
			f.Add(uint8(i), strings.ReplaceAll(b, "{A}", fx.ids["{A}"]))
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		r := fzRoutes[int(route)%len(fzRoutes)]
		before := ""
		if r.get != "" {
			before = fx.mustGet(t, r.get)
		}
		status, resp := fx.serve(t, r.method, fx.fill(r.path), body)
		if status >= 500 || status < 200 {
			t.Fatalf("%s %s with %q: status %d: %s", r.method, r.path, body, status, resp)
		}
		if status < 400 {
			return
		}
		var eb httpapi.ErrorBody
		if err := json.Unmarshal([]byte(resp), &eb); err != nil || eb.Error.Type == "" || eb.Error.Message == "" {
			t.Fatalf("%s %s with %q: status %d with error body %q", r.method, r.path, body, status, resp)
		}
		if r.get != "" {
			if after := fx.mustGet(t, r.get); after != before {
				t.Fatalf("%s %s with %q was refused (%d) but changed the resource:\nbefore %s\nafter  %s", r.method, r.path, body, status, before, after)
			}
		}
	})
}

type fzFixture struct {
	rt  *httpapi.Router
	dev string
	ids map[string]string
}

func fzSetup(f *testing.F) *fzFixture {
	f.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// ddblocal.Start reuses SINEW_TEST_DYNAMODB_ENDPOINT when set (make test, infra/scripts/fuzz.sh), so this
	// file needs no TestMain of its own.
	srv, err := ddblocal.Start(ctx)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = srv.Close() })
	db := ddblocal.NewClient(srv.Endpoint())
	table := ddblocal.NewTable(f, db)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		f.Fatal(err)
	}
	st := store.New(db, table, sl)

	// Local mode's Step Functions service, with a Pass machine for both state machines.
	ds, err := durable.Open(filepath.Join(f.TempDir(), "sfn.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = ds.Close() })
	rec := durable.NewRecorder(ds, fzNoLambda{}, nil, slog.New(slog.DiscardHandler))
	var svc *sfnapi.Service
	eng := asl.New(asl.Config{Lambda: rec, Clock: rec, Machines: func(arn string) (*asl.Machine, bool) { return svc.Resolve(arn) }})
	svc = sfnapi.New(sfnapi.Options{Store: ds, Recorder: rec, Engine: eng, Logger: slog.New(slog.DiscardHandler)})
	hs := httptest.NewServer(svc)
	f.Cleanup(hs.Close)
	awsCfg := awsv2.Config{Region: "us-east-1", BaseEndpoint: awsv2.String(hs.URL),
		Credentials: credentials.NewStaticCredentialsProvider("fuzz", "fuzz", "")}
	sm, err := sfn.NewFromConfig(awsCfg).CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: awsv2.String("fuzz-pass"), RoleArn: awsv2.String("arn:aws:iam::000000000000:role/fuzz"),
		Definition: awsv2.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`),
	})
	if err != nil {
		f.Fatal(err)
	}
	cfg := &config.Config{ToolCallARN: *sm.StateMachineArn, AgentLoopARN: *sm.StateMachineArn}
	fx := &fzFixture{
		rt:  app.APIRouter(app.Deps{Config: cfg, AWS: awsCfg, Store: st, Logger: slog.New(slog.DiscardHandler)}),
		dev: "dev-fuzz", ids: map[string]string{},
	}
	fx.ids["{A}"] = fx.create(f, "/agents", `{"name":"fuzz agent","model":"m"}`)
	fx.ids["{T}"] = fx.create(f, fx.fill("/agents/{A}/tools"), `{"name":"t","type":"function","function":{}}`)
	fx.ids["{K}"] = fx.create(f, fx.fill("/agents/{A}/tasks"), `{"name":"k","tools":[{"name":"f","type":"function","function":{}}]}`)
	return fx
}

func (fx *fzFixture) fill(path string) string {
	for k, v := range fx.ids {
		path = strings.ReplaceAll(path, k, v)
	}
	return path
}

func (fx *fzFixture) serve(tb testing.TB, method, path, body string) (int, string) {
	tb.Helper()
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: path, Body: body,
		Headers: map[string]string{"content-type": "application/json"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path},
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": fx.dev}}},
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := fx.rt.ServeEvent(ctx, ev)
	if err != nil {
		tb.Fatalf("%s %s: ServeEvent: %v", method, path, err)
	}
	return resp.StatusCode, resp.Body
}

func (fx *fzFixture) create(tb testing.TB, path, body string) string {
	tb.Helper()
	status, resp := fx.serve(tb, "POST", path, body)
	var out struct {
		ID string `json:"id"`
	}
	if status != 201 || json.Unmarshal([]byte(resp), &out) != nil || out.ID == "" {
		tb.Fatalf("POST %s: %d %s", path, status, resp)
	}
	return out.ID
}

func (fx *fzFixture) mustGet(tb testing.TB, path string) string {
	tb.Helper()
	status, resp := fx.serve(tb, "GET", fx.fill(path), "")
	if status != 200 {
		tb.Fatalf("GET %s: %d %s", path, status, resp)
	}
	return resp
}

// fzNoLambda: the Pass machines invoke nothing; an invocation is a fault of the fixture.
type fzNoLambda struct{}

func (fzNoLambda) Invoke(context.Context, asl.LambdaRequest) (*asl.LambdaResponse, error) {
	return nil, fmt.Errorf("the fuzz fixture's state machines invoke no Lambda")
}
