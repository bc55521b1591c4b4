package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"sinew/internal/fault"
)

// baseEvent is a JWT-authorized API Gateway HTTP API event for GET /agents, as API Gateway sends it.
func baseEvent(t testing.TB) events.APIGatewayV2HTTPRequest {
	t.Helper()
	b, err := os.ReadFile("testdata/event-jwt.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func withRequest(method, rawPath, rawQuery, body string) func(*events.APIGatewayV2HTTPRequest) {
	return func(ev *events.APIGatewayV2HTTPRequest) {
		ev.RequestContext.HTTP.Method = method
		ev.RawPath, ev.RequestContext.HTTP.Path = rawPath, rawPath
		ev.RawQueryString = rawQuery
		ev.Body = body
	}
}

type agentIn struct {
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// testRouter registers routes of each shape the later items use.
func testRouter(logs *bytes.Buffer) *Router {
	rt := New(Options{Logger: slog.New(slog.NewJSONHandler(logs, nil)), Version: "test"})
	rt.Schema("Agent", map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}})
	rt.Handle(Route{Method: "GET", Path: "/agents", Op: Operation{Summary: "List agents", Params: PageParams(),
		Responses: map[int]Resp{200: {Schema: ListOf(Ref("Agent"))}}},
		Handler: func(_ context.Context, r *Request) (*Response, error) {
			p, err := r.Page()
			if err != nil {
				return nil, err
			}
			items := []agentIn{}
			for i := range p.Limit {
				items = append(items, agentIn{Name: fmt.Sprintf("a%d", i)})
			}
			next := ""
			if p.Cursor == "" {
				next = "opaque-2"
			}
			return OK(NewList(items, next)), nil
		}})
	rt.Handle(Route{Method: "POST", Path: "/agents", Op: Operation{Summary: "Create an agent", Request: Ref("Agent"),
		Responses: map[int]Resp{201: {Schema: Ref("Agent")}}},
		Handler: func(_ context.Context, r *Request) (*Response, error) {
			var in agentIn
			if err := r.Decode(&in); err != nil {
				return nil, err
			}
			if in.Name == "" {
				return nil, fault.Invalid("name", "name is required")
			}
			return JSON(http.StatusCreated, map[string]any{"name": in.Name, "developer": r.DeveloperID, "metadata": in.Metadata}), nil
		}})
	rt.Handle(Route{Method: "GET", Path: "/agents/{agent_id}",
		Handler: func(_ context.Context, r *Request) (*Response, error) {
			if r.Param("agent_id") == "missing" {
				return nil, fault.New(fault.NotFound, "agent %q not found", r.Param("agent_id"))
			}
			return OK(map[string]string{"id": r.Param("agent_id"), "developer": r.DeveloperID}), nil
		}})
	rt.Handle(Route{Method: "DELETE", Path: "/agents/{agent_id}",
		Handler: func(context.Context, *Request) (*Response, error) { return nil, nil }})
	rt.Handle(Route{Method: "GET", Path: "/agents/special",
		Handler: func(context.Context, *Request) (*Response, error) {
			return OK(map[string]string{"route": "special"}), nil
		}})
	rt.Handle(Route{Method: "GET", Path: "/agents/{agent_id}/tools/{tool_id}",
		Handler: func(_ context.Context, r *Request) (*Response, error) {
			return OK(map[string]string{"agent": r.Param("agent_id"), "tool": r.Param("tool_id")}), nil
		}})
	rt.Handle(Route{Method: "POST", Path: "/small", MaxBody: 10,
		Handler: func(_ context.Context, r *Request) (*Response, error) {
			return OK(map[string]int{"bytes": len(r.Body())}), nil
		}})
	rt.Handle(Route{Method: "POST", Path: "/echo-bytes",
		Handler: func(_ context.Context, r *Request) (*Response, error) {
			return OK(map[string]string{"b64": base64.StdEncoding.EncodeToString(r.Body())}), nil
		}})
	rt.Handle(Route{Method: "GET", Path: "/boom",
		Handler: func(context.Context, *Request) (*Response, error) { panic("db password hunter2") }})
	rt.Handle(Route{Method: "GET", Path: "/fail/{kind}",
		Handler: func(_ context.Context, r *Request) (*Response, error) {
			if r.Param("kind") == "untyped" {
				return nil, errors.New("pq: connection to 10.0.0.5 refused")
			}
			return nil, fmt.Errorf("store: %w", &fault.Error{Kind: fault.Kind(r.Param("kind")), Field: "f", Msg: "failed as " + r.Param("kind")})
		}})
	rt.Handle(Route{Method: "POST", Path: "/tool-calls", Op: Operation{Params: []Param{IdempotencyParam()}},
		Handler: func(_ context.Context, r *Request) (*Response, error) {
			k, err := r.IdempotencyKey()
			if err != nil {
				return nil, err
			}
			return JSON(http.StatusAccepted, map[string]string{"key": k}), nil
		}})
	rt.Handle(Route{Method: "GET", Path: "/unmarshalable",
		Handler: func(context.Context, *Request) (*Response, error) { return OK(map[string]any{"f": func() {}}), nil }})
	return rt
}

func TestServeEvent(t *testing.T) {
	type check struct {
		status  int
		body    string            // exact JSON body when set
		errType string            // error.type when set
		field   string            // error.field when set
		msgHas  string            // in error.message when set
		headers map[string]string // each must be present with this value
	}
	tests := []struct {
		name string
		edit func(*events.APIGatewayV2HTTPRequest)
		want check
	}{
		{"list default page", withRequest("GET", "/agents", "", ""), check{status: 200}},
		{"list limit", withRequest("GET", "/agents", "limit=2&cursor=c1", ""),
			check{status: 200, body: `{"items":[{"name":"a0"},{"name":"a1"}],"next_cursor":null}`}},
		{"list first page cursor", withRequest("GET", "/agents", "limit=1", ""),
			check{status: 200, body: `{"items":[{"name":"a0"}],"next_cursor":"opaque-2"}`}},
		{"limit zero", withRequest("GET", "/agents", "limit=0", ""), check{status: 400, errType: "Sinew.InvalidInput", field: "limit"}},
		{"limit over", withRequest("GET", "/agents", "limit=101", ""), check{status: 400, field: "limit", msgHas: "1 to 100"}},
		{"limit word", withRequest("GET", "/agents", "limit=ten", ""), check{status: 400, field: "limit"}},
		{"cursor huge", withRequest("GET", "/agents", "cursor="+strings.Repeat("x", 5000), ""), check{status: 400, field: "cursor"}},
		{"bad query", withRequest("GET", "/agents", "limit=%zz", ""), check{status: 400, field: "query"}},
		{"path params", withRequest("GET", "/agents/a%2Fb/tools/t1", "", ""),
			check{status: 200, body: `{"agent":"a/b","tool":"t1"}`}},
		{"literal beats param", withRequest("GET", "/agents/special", "", ""), check{status: 200, body: `{"route":"special"}`}},
		{"param route", withRequest("GET", "/agents/0190-abc", "", ""), check{status: 200, body: `{"developer":"dev-7f3c","id":"0190-abc"}`}},
		{"trailing slash", withRequest("GET", "/agents/x/", "", ""), check{status: 200, body: `{"developer":"dev-7f3c","id":"x"}`}},
		{"not found from handler", withRequest("GET", "/agents/missing", "", ""),
			check{status: 404, body: `{"error":{"type":"Sinew.NotFound","message":"agent \"missing\" not found"}}`}},
		{"unknown route", withRequest("GET", "/nope", "", ""), check{status: 404, errType: "Sinew.NotFound"}},
		{"empty param segment", withRequest("GET", "/agents//tools/t", "", ""), check{status: 404}},
		{"bad escape", withRequest("GET", "/agents/%zz", "", ""), check{status: 400, field: "path"}},
		{"wrong method", withRequest("PATCH", "/agents/x", "", ""),
			check{status: 405, errType: TypeMethodNotAllowed, headers: map[string]string{"allow": "DELETE, GET"}}},
		{"wrong method on collection", withRequest("DELETE", "/agents", "", ""),
			check{status: 405, headers: map[string]string{"allow": "GET, POST"}}},
		{"delete no content", withRequest("DELETE", "/agents/x", "", ""), check{status: 204, body: ""}},
		{"create", withRequest("POST", "/agents", "", `{"name":"n1","metadata":{"k":1}}`),
			check{status: 201, body: `{"developer":"dev-7f3c","metadata":{"k":1},"name":"n1"}`}},
		{"create unknown field", withRequest("POST", "/agents", "", `{"name":"n1","nmae":"x"}`),
			check{status: 400, field: "nmae", msgHas: `unknown field "nmae"`}},
		{"create wrong type", withRequest("POST", "/agents", "", `{"name":5}`),
			check{status: 400, field: "name", msgHas: "name must be a string, not number"}},
		{"create empty body", withRequest("POST", "/agents", "", ""), check{status: 400, field: "body", msgHas: "empty"}},
		{"create trailing data", withRequest("POST", "/agents", "", `{"name":"a"} {}`), check{status: 400, field: "body", msgHas: "after"}},
		{"create rule", withRequest("POST", "/agents", "", `{}`), check{status: 400, field: "name"}},
		{"base64 body", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("POST", "/agents", "", base64.StdEncoding.EncodeToString([]byte(`{"name":"b64"}`)))(ev)
			ev.IsBase64Encoded = true
		}, check{status: 201, body: `{"developer":"dev-7f3c","metadata":null,"name":"b64"}`}},
		{"base64 broken", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("POST", "/agents", "", "!!!")(ev)
			ev.IsBase64Encoded = true
		}, check{status: 400, field: "body"}},
		{"route limit", withRequest("POST", "/small", "", `"0123456789"`), check{status: 413, errType: "Sinew.TooLarge"}},
		{"route limit exact", withRequest("POST", "/small", "", `"01234567"`), check{status: 200, body: `{"bytes":10}`}},
		{"route limit base64", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("POST", "/small", "", base64.StdEncoding.EncodeToString(make([]byte, 11)))(ev)
			ev.IsBase64Encoded = true
		}, check{status: 413}},
		{"default limit", withRequest("POST", "/echo-bytes", "", strings.Repeat("a", DefaultMaxBody+1)), check{status: 413, msgHas: "at most 1048576"}},
		{"panic", withRequest("GET", "/boom", "", ""),
			check{status: 500, body: `{"error":{"type":"Sinew.Internal","message":"internal error"}}`}},
		{"untyped error", withRequest("GET", "/fail/untyped", "", ""),
			check{status: 500, body: `{"error":{"type":"Sinew.Internal","message":"internal error"}}`}},
		{"internal with message", withRequest("GET", "/fail/Sinew.Internal", "", ""),
			check{status: 500, body: `{"error":{"type":"Sinew.Internal","message":"internal error"}}`}},
		{"transient", withRequest("GET", "/fail/Sinew.Transient", "", ""),
			check{status: 503, errType: "Sinew.Transient", msgHas: "failed as", headers: map[string]string{"retry-after": "1"}}},
		{"unmarshalable answer", withRequest("GET", "/unmarshalable", "", ""), check{status: 500, errType: "Sinew.Internal"}},
		{"idempotency key", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("POST", "/tool-calls", "", "")(ev)
			ev.Headers["idempotency-key"] = "k-1"
		}, check{status: 202, body: `{"key":"k-1"}`}},
		{"idempotency key too long", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("POST", "/tool-calls", "", "")(ev)
			ev.Headers["idempotency-key"] = strings.Repeat("k", 256)
		}, check{status: 400, field: "Idempotency-Key"}},
		{"idempotency key control char", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("POST", "/tool-calls", "", "")(ev)
			ev.Headers["idempotency-key"] = "a\x01"
		}, check{status: 400, field: "Idempotency-Key"}},
		{"no authorizer", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("GET", "/agents", "", "")(ev)
			ev.RequestContext.Authorizer = nil
		}, check{status: 401, errType: TypeUnauthorized, headers: map[string]string{"www-authenticate": "Bearer"}}},
		{"claim missing", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("GET", "/agents", "", "")(ev)
			delete(ev.RequestContext.Authorizer.JWT.Claims, "sub")
		}, check{status: 401, msgHas: `"sub"`}},
		{"healthz without auth", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("GET", "/healthz", "", "")(ev)
			ev.RequestContext.Authorizer = nil
		}, check{status: 200, body: `{"status":"ok"}`}},
		{"openapi without auth", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("GET", "/openapi.json", "", "")(ev)
			ev.RequestContext.Authorizer = nil
		}, check{status: 200}},
		{"named stage", func(ev *events.APIGatewayV2HTTPRequest) {
			withRequest("GET", "/prod/agents/s1", "", "")(ev)
			ev.RequestContext.Stage = "prod"
		}, check{status: 200, body: `{"developer":"dev-7f3c","id":"s1"}`}},
	}
	for _, k := range []fault.Kind{fault.Unauthorized, fault.InvalidInput, fault.Forbidden, fault.NotFound, fault.Conflict, fault.Gone,
		fault.TooLarge, fault.Unprocessable, fault.Transient, fault.Timeout, fault.Provider} {
		tests = append(tests, struct {
			name string
			edit func(*events.APIGatewayV2HTTPRequest)
			want check
		}{"kind " + string(k), withRequest("GET", "/fail/"+string(k), "", ""),
			check{status: wantStatus[k], errType: string(k), field: "f", msgHas: "failed as " + string(k)}})
	}

	var logs bytes.Buffer
	rt := testRouter(&logs)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := baseEvent(t)
			tt.edit(&ev)
			resp, err := rt.ServeEvent(context.Background(), ev)
			if err != nil {
				t.Fatalf("ServeEvent error: %v", err)
			}
			w := tt.want
			if resp.StatusCode != w.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, w.status, resp.Body)
			}
			if resp.Body != "" && resp.Headers["content-type"] != "application/json" {
				t.Errorf("content-type %q", resp.Headers["content-type"])
			}
			if w.body != "" || w.status == 204 {
				if !jsonEqual(resp.Body, w.body) {
					t.Errorf("body %s, want %s", resp.Body, w.body)
				}
			}
			for k, v := range w.headers {
				if resp.Headers[k] != v {
					t.Errorf("header %s = %q, want %q", k, resp.Headers[k], v)
				}
			}
			if w.errType != "" || w.field != "" || w.msgHas != "" {
				var eb ErrorBody
				if err := json.Unmarshal([]byte(resp.Body), &eb); err != nil {
					t.Fatalf("error body %s: %v", resp.Body, err)
				}
				if w.errType != "" && eb.Error.Type != w.errType {
					t.Errorf("error.type %q, want %q", eb.Error.Type, w.errType)
				}
				if w.field != "" && eb.Error.Field != w.field {
					t.Errorf("error.field %q, want %q", eb.Error.Field, w.field)
				}
				if !strings.Contains(eb.Error.Message, w.msgHas) {
					t.Errorf("error.message %q lacks %q", eb.Error.Message, w.msgHas)
				}
			}
		})
	}
	if !strings.Contains(logs.String(), "hunter2") {
		t.Errorf("the panic should be logged for the operator")
	}
}

var wantStatus = map[fault.Kind]int{
	fault.InvalidInput: 400, fault.Forbidden: 403, fault.NotFound: 404, fault.Conflict: 409, fault.Gone: 410,
	fault.TooLarge: 413, fault.Unprocessable: 422, fault.Transient: 503, fault.Timeout: 504, fault.Provider: 502,
	fault.Internal: 500, fault.Unauthorized: 401,
}

func jsonEqual(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// TestRequestLog checks one JSON line per request with the agreed fields, and never the body.
func TestRequestLog(t *testing.T) {
	var logs bytes.Buffer
	rt := testRouter(&logs)
	ev := baseEvent(t)
	withRequest("POST", "/agents", "", `{"name":"n","metadata":{"password":"s3cr3t-value"}}`)(&ev)
	if _, err := rt.ServeEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	ev = baseEvent(t)
	withRequest("GET", "/fail/untyped", "", "")(&ev)
	if _, err := rt.ServeEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 log lines, got %d:\n%s", len(lines), logs.String())
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"msg": "request", "method": "POST", "route": "/agents", "status": float64(201),
		"developer_id": "dev-7f3c", "request_id": "UkJ2ZgExIAMEbCQ="}
	for k, v := range want {
		if first[k] != v {
			t.Errorf("log %s = %v, want %v", k, first[k], v)
		}
	}
	if _, ok := first["duration_ms"].(float64); !ok {
		t.Errorf("log lacks duration_ms: %v", first)
	}
	if strings.Contains(logs.String(), "s3cr3t") {
		t.Errorf("the log carries the body: %s", logs.String())
	}
	if second["level"] != "ERROR" || !strings.Contains(fmt.Sprint(second["error"]), "10.0.0.5") || second["status"] != float64(500) {
		t.Errorf("a 500 should log the real error for the operator: %v", second)
	}
}

func TestHandleRejectsBadPatterns(t *testing.T) {
	h := func(context.Context, *Request) (*Response, error) { return nil, nil }
	for _, r := range []Route{
		{Method: "GET", Path: "agents", Handler: h},
		{Method: "GET", Path: "/agents//x", Handler: h},
		{Method: "GET", Path: "/a/{b-c}", Handler: h},
		{Method: "GET", Path: "/a/{x}/{x}", Handler: h},
		{Method: "GET", Path: "/a/x{y}", Handler: h},
		{Method: "GET", Path: "/healthz", Handler: h},        // registered by New
		{Method: "GET", Path: "/agents/{other}", Handler: h}, // same shape as /agents/{agent_id}
		{Method: "GET", Path: "/x"},
		{Method: "", Path: "/x", Handler: h},
	} {
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			rt := New(Options{})
			rt.Handle(Route{Method: "GET", Path: "/agents/{agent_id}", Handler: h})
			defer func() {
				if recover() == nil {
					t.Errorf("Handle(%s %s) should refuse", r.Method, r.Path)
				}
			}()
			rt.Handle(r)
		})
	}
}

func TestRoutes(t *testing.T) {
	rt := testRouter(&bytes.Buffer{})
	rt.Handle(Route{Method: "POST", Path: "/sessions/{session_id}/chat", Function: "chat",
		Handler: func(context.Context, *Request) (*Response, error) { return nil, nil }})
	got := map[string]RouteInfo{}
	for _, r := range rt.Routes() {
		got[r.Method+" "+r.Path] = r
	}
	for key, want := range map[string]RouteInfo{
		"GET /healthz":                     {Method: "GET", Path: "/healthz", Function: "api", Public: true},
		"GET /openapi.json":                {Method: "GET", Path: "/openapi.json", Function: "api", Public: true},
		"GET /agents":                      {Method: "GET", Path: "/agents", Function: "api"},
		"POST /sessions/{session_id}/chat": {Method: "POST", Path: "/sessions/{session_id}/chat", Function: "chat"},
	} {
		if got[key] != want {
			t.Errorf("%s: %+v, want %+v", key, got[key], want)
		}
	}
}

func TestCustomClaim(t *testing.T) {
	rt := New(Options{JWTClaim: "custom:developer", Logger: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil))})
	rt.Handle(Route{Method: "GET", Path: "/me", Handler: func(_ context.Context, r *Request) (*Response, error) {
		return OK(map[string]string{"developer": r.DeveloperID}), nil
	}})
	ev := baseEvent(t)
	withRequest("GET", "/me", "", "")(&ev)
	resp, _ := rt.ServeEvent(context.Background(), ev)
	if resp.StatusCode != 401 {
		t.Errorf("without the custom claim: %d %s", resp.StatusCode, resp.Body)
	}
	ev.RequestContext.Authorizer.JWT.Claims["custom:developer"] = "d-9"
	resp, _ = rt.ServeEvent(context.Background(), ev)
	if resp.StatusCode != 200 || resp.Body != `{"developer":"d-9"}` {
		t.Errorf("with the custom claim: %d %s", resp.StatusCode, resp.Body)
	}
}

func TestStatusOfEveryKind(t *testing.T) {
	for k, want := range wantStatus {
		if got := StatusOf(k); got != want {
			t.Errorf("StatusOf(%s) = %d, want %d", k, got, want)
		}
	}
	if got := StatusOf("Sinew.Something"); got != 500 {
		t.Errorf("unknown kind: %d", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
