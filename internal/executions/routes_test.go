package executions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"sinew/internal/executions"
	"sinew/internal/httpapi"
	"sinew/internal/workflow"
)

func router() *httpapi.Router {
	rt := httpapi.New(httpapi.Options{})
	// No store or Step Functions: these tests only reach the checks that come before them.
	executions.Register(rt, executions.Deps{Workflow: &workflow.Service{ToolCallARN: "arn:aws:states:us-east-1:000000000000:stateMachine:t"}})
	return rt
}

// TestOpenAPI: every route of the item is documented, with its schemas registered.
func TestOpenAPI(t *testing.T) {
	doc := router().OpenAPI()
	paths := doc["paths"].(map[string]any)
	want := map[string][]string{
		"/tool-calls": {"post"}, "/executions": {"get"}, "/executions/{execution_id}": {"get", "put"},
		"/executions/{execution_id}/calls/{call_id}/result": {"post"}, "/executions/{execution_id}/calls/{call_id}/heartbeat": {"post"},
		"/calls": {"get"}, "/payloads/{ref}": {"get"},
	}
	for p, methods := range want {
		item, ok := paths[p].(map[string]any)
		if !ok {
			t.Errorf("%s is not documented", p)
			continue
		}
		for _, m := range methods {
			op, ok := item[m].(map[string]any)
			if !ok || op["summary"] == nil || op["responses"] == nil {
				t.Errorf("%s %s: operation %v", m, p, op)
			}
		}
	}
	b, _ := json.Marshal(doc)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, ref := range strings.Split(string(b), `"$ref":"#/components/schemas/`)[1:] {
		name := ref[:strings.Index(ref, `"`)]
		if _, ok := schemas[name]; !ok {
			t.Errorf("schema %s is referenced but not registered", name)
		}
	}
}

// TestBadRequests: each route's rules, refused with 400 naming the field before anything is read
// or started.
func TestBadRequests(t *testing.T) {
	const agent = "0190b3c2-7a3e-7c1d-9f00-000000000001"
	tests := []struct {
		name, method, path, body, field string
	}{
		{"answer with both", "POST", "/executions/e/calls/c/result", `{"output":1,"error":{"type":"x"}}`, "output"},
		{"answer with neither", "POST", "/executions/e/calls/c/result", `{}`, "output"},
		{"answer with an unknown field", "POST", "/executions/e/calls/c/result", `{"output":1,"extra":2}`, "extra"},
		{"error without a type", "POST", "/executions/e/calls/c/result", `{"error":{"message":"x"}}`, "error.type"},
		{"error with an unknown field", "POST", "/executions/e/calls/c/result", `{"error":{"type":"x","code":1}}`, "error.code"},
		{"error not an object", "POST", "/executions/e/calls/c/result", `{"error":"x"}`, "error"},
		{"PUT with an unknown status", "PUT", "/executions/e", `{"status":"paused"}`, "status"},
		{"PUT running with a reason", "PUT", "/executions/e", `{"status":"running","reason":"x"}`, "reason"},
		{"tool call without a tool", "POST", "/tool-calls", `{"agent_id":"` + agent + `"}`, "tool"},
		{"tool call with task and session", "POST", "/tool-calls", `{"agent_id":"` + agent + `","task_id":"` + agent + `","session_id":"` + agent + `","tool":"t"}`, "session_id"},
		{"tool call with an unknown field", "POST", "/tool-calls", `{"agent_id":"` + agent + `","tool":"t","developer_id":"x"}`, "developer_id"},
		{"bad limit", "GET", "/executions?limit=0", ``, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, q, _ := strings.Cut(tt.path, "?")
			code, body := serve(t, tt.method, path, q, tt.body)
			e, _ := body["error"].(map[string]any)
			if code != 400 || e["field"] != tt.field {
				t.Errorf("%s %s = %d %v, want 400 naming %s", tt.method, tt.path, code, body, tt.field)
			}
		})
	}
}

// serve answers one request from dev-a as API Gateway would deliver it.
func serve(t *testing.T, method, path, query, body string) (int, map[string]any) {
	t.Helper()
	ev := events.APIGatewayV2HTTPRequest{RawPath: path, RawQueryString: query, Body: body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path},
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": "dev-a"}}},
		}}
	resp, err := router().ServeEvent(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(resp.Body), &m)
	return resp.StatusCode, m
}
