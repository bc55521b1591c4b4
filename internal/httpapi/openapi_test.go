package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"sinew/internal/testenv/oaschema"
)

// served fetches GET /openapi.json through the router, as a client would.
func served(t *testing.T, rt *Router) map[string]any {
	t.Helper()
	ev := baseEvent(t)
	withRequest("GET", "/openapi.json", "", "")(&ev)
	ev.RequestContext.Authorizer = nil
	resp, err := rt.ServeEvent(context.Background(), ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /openapi.json: %d %v %s", resp.StatusCode, err, resp.Body)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenAPIValid validates the served document against the OpenAPI 3.1 schema (testdata, from the
// OpenAPI Initiative, 2022-10-07), and compiles every schema in it as JSON Schema 2020-12 with its
// references resolved within the document.
func TestOpenAPIValid(t *testing.T) {
	rt := testRouter(&bytes.Buffer{})
	doc := served(t, rt)

	oasSchema, err := oaschema.LoadSchema("testdata/oas-3.1-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(doc)
	inst, err := oaschema.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := oasSchema.Validate(inst); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3.1:\n%v", err)
	}
	// The check has teeth: a broken document fails it.
	broken, _ := oaschema.Decode([]byte(`{"openapi":"3.1.0","paths":{"/x":{"get":{"responses":{"200":{}}}}}}`))
	if err := oasSchema.Validate(broken); err == nil {
		t.Errorf("a document without info and response descriptions passed the OpenAPI schema")
	}

	// Each schema, compiled in place so $refs to #/components/schemas resolve.
	sc := oaschema.NewDoc(inst.(map[string]any))
	var n int
	for name := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		if _, err := sc.Compile("/components/schemas/" + escapePointer(name)); err != nil {
			t.Errorf("schema %s: %v", name, err)
		}
		n++
	}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			for status := range op.(map[string]any)["responses"].(map[string]any) {
				ptr := "/paths/" + escapePointer(path) + "/" + method + "/responses/" + status
				if _, ok := op.(map[string]any)["responses"].(map[string]any)[status].(map[string]any)["content"]; !ok {
					continue
				}
				if _, err := sc.Compile(ptr + "/content/application~1json/schema"); err != nil {
					t.Errorf("%s %s %s: %v", method, path, status, err)
				}
				n++
			}
		}
	}
	if n < 5 {
		t.Errorf("only %d schemas checked", n)
	}
}

func escapePointer(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			b = append(b, '~', '0')
		case '/':
			b = append(b, '~', '1')
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}

func TestOpenAPIContent(t *testing.T) {
	rt := testRouter(&bytes.Buffer{})
	doc := served(t, rt)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v", doc["openapi"])
	}
	paths := doc["paths"].(map[string]any)
	op := func(path, method string) map[string]any {
		t.Helper()
		item, ok := paths[path].(map[string]any)
		if !ok {
			t.Fatalf("path %s not documented", path)
		}
		o, ok := item[method].(map[string]any)
		if !ok {
			t.Fatalf("%s %s not documented", method, path)
		}
		return o
	}
	// Every registered route is documented, and nothing else.
	var documented int
	for _, item := range paths {
		documented += len(item.(map[string]any))
	}
	if documented != len(rt.Routes()) {
		t.Errorf("%d operations documented, %d routes registered", documented, len(rt.Routes()))
	}

	health := op("/healthz", "get")
	if sec, ok := health["security"].([]any); !ok || len(sec) != 0 {
		t.Errorf("healthz must be documented as public: %v", health["security"])
	}
	if _, ok := health["responses"].(map[string]any)["401"]; ok {
		t.Errorf("a public route cannot answer 401")
	}

	tool := op("/agents/{agent_id}/tools/{tool_id}", "get")
	if tool["operationId"] != "getAgentsByAgentIdToolsByToolId" {
		t.Errorf("operationId %v", tool["operationId"])
	}
	params := tool["parameters"].([]any)
	if len(params) != 2 || params[0].(map[string]any)["name"] != "agent_id" || params[0].(map[string]any)["in"] != "path" || params[0].(map[string]any)["required"] != true {
		t.Errorf("path parameters %v", params)
	}
	for _, s := range []string{"401", "404", "default"} {
		if _, ok := tool["responses"].(map[string]any)[s]; !ok {
			t.Errorf("%s missing from %v", s, tool["responses"])
		}
	}
	if _, ok := tool["security"]; ok {
		t.Errorf("an authenticated route takes the document's security")
	}

	create := op("/agents", "post")
	rb := create["requestBody"].(map[string]any)
	if rb["required"] != true || rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["$ref"] != "#/components/schemas/Agent" {
		t.Errorf("request body %v", rb)
	}
	for _, s := range []string{"201", "400", "401", "413"} {
		if _, ok := create["responses"].(map[string]any)[s]; !ok {
			t.Errorf("POST /agents lacks response %s", s)
		}
	}
	list := op("/agents", "get")
	if len(list["parameters"].([]any)) != 2 {
		t.Errorf("list parameters %v", list["parameters"])
	}
	if list["summary"] != "List agents" {
		t.Errorf("summary %v", list["summary"])
	}
	errRef := create["responses"].(map[string]any)["400"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
	if errRef.(map[string]any)["$ref"] != "#/components/schemas/Error" {
		t.Errorf("400 schema %v", errRef)
	}
	if _, ok := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)["jwt"]; !ok {
		t.Errorf("no jwt security scheme")
	}
}

func TestSchemaTwice(t *testing.T) {
	rt := New(Options{})
	rt.Schema("A", map[string]any{"type": "string"})
	rt.Schema("A", map[string]any{"type": "string"}) // the same again is fine
	defer func() {
		if recover() == nil {
			t.Error("a different schema under the same name should be refused")
		}
	}()
	rt.Schema("A", map[string]any{"type": "integer"})
}
