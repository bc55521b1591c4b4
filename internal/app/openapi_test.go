package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/app"
	"sinew/internal/config"
	"sinew/internal/httpapi"
	"sinew/internal/integrations/all"
	"sinew/internal/netguard"
	"sinew/internal/store"
)

var update = flag.Bool("update", false, "rewrite openapi.json from the registered routes (go generate ./internal/app)")

// apiRouter is the api function's router with every route registered. The store is never used:
// the router is built only to list and document its routes.
func apiRouter(t *testing.T) *httpapi.Router {
	t.Helper()
	aws := awsv2.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("x", "x", "")}
	reg, err := all.New(netguard.New())
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(dynamodb.NewFromConfig(aws), "unused", nil)
	return app.APIRouter(app.Deps{Config: &config.Config{}, AWS: aws, Store: st, Integrations: reg})
}

// TestOpenAPIDocument: the committed openapi.json is what GET /openapi.json serves, and it
// documents every route, the chat function's included.
func TestOpenAPIDocument(t *testing.T) {
	rt := apiRouter(t)
	ev := events.APIGatewayV2HTTPRequest{RawPath: "/openapi.json"}
	ev.RequestContext.HTTP.Method = http.MethodGet
	resp, _ := rt.ServeEvent(context.Background(), ev)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %s", resp.StatusCode, resp.Body)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &doc); err != nil {
		t.Fatalf("GET /openapi.json: %v", err)
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, want := range []struct{ method, path string }{
		{"post", "/sessions/{session_id}/chat"}, {"get", "/openapi.json"}, {"post", "/agents/{agent_id}/tools"},
	} {
		if item, _ := paths[want.path].(map[string]any); item[want.method] == nil {
			t.Errorf("the served document lacks %s %s", strings.ToUpper(want.method), want.path)
		}
	}
	// A tool_call whose tool failed is failed here and SUCCEEDED in Step Functions: the document
	// says why where the status is described.
	if !strings.Contains(resp.Body, "Step Functions shows such an execution SUCCEEDED") {
		t.Error("the execution status description does not explain failed here against SUCCEEDED in Step Functions")
	}
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile("openapi.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatalf("%v: write it with go generate ./internal/app", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("internal/app/openapi.json differs from the registered routes at line %d; if the routes changed on purpose, rewrite it with go generate ./internal/app", firstDiffLine(got, want))
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}
