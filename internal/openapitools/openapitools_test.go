package openapitools_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/netguard"
	"sinew/internal/openapitools"
	"sinew/internal/tool"
)

// reasonClass names a skip reason by what it is about, for counting.
func reasonClass(r string) string {
	for _, c := range []string{"OAuth2", "OpenID Connect", "needs a credential", "multipart", "callbacks", "no server", "webhook", "network guard", "relative"} {
		if strings.Contains(r, c) {
			return c
		}
	}
	return r
}

func quietGuard() *netguard.Policy {
	return netguard.New(netguard.WithLogger(slog.New(slog.DiscardHandler)))
}

// TestDocuments: what each vendored document makes, and what it skips by reason.
func TestDocuments(t *testing.T) {
	v := "x"
	tests := []struct {
		doc      string
		security map[string]openapitools.Credential
		made     int
		skipped  map[string]int
	}{
		{"oai-v3.0-petstore-expanded.json", nil, 4, nil},
		{"oai-v3.0-uspto.json", nil, 3, nil},
		{"oai-v3.0-callback-example.json", nil, 0, map[string]int{"callbacks": 1}},
		{"oai-v3.0-link-example.json", nil, 0, map[string]int{"no server": 6}},
		{"oai-v3.1-webhook-example.json", nil, 0, map[string]int{"webhook": 1}},
		{"oai-v3.1-non-oauth-scopes.json", nil, 0, map[string]int{"no server": 1}},
		{"swagger-petstore3.yaml", nil, 10, map[string]int{"OAuth2": 8, "needs a credential": 1}},
		{"redocly-museum.yaml", nil, 0, map[string]int{"needs a credential": 8, "webhook": 1}},
		{"redocly-museum.yaml", map[string]openapitools.Credential{"MuseumPlaceholderAuth": {Secret: "MUSEUM"}}, 8, map[string]int{"webhook": 1}},
		{"discourse.yaml", nil, 92, map[string]int{"multipart": 1}},
		{"twilio-conversations-v1.yaml", nil, 0, map[string]int{"needs a credential": 103}},
		{"twilio-conversations-v1.yaml", map[string]openapitools.Credential{"accountSid_authToken": {Secret: "TWILIO"}}, 103, nil},
		{"twilio-api-v2010.yaml", map[string]openapitools.Credential{"accountSid_authToken": {Value: &v}}, 197, nil},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			res, err := openapitools.Build(&openapitools.Request{Document: readDoc(t, tt.doc), Security: tt.security}, openapitools.Options{Guard: quietGuard()})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, s := range res.Skipped {
				got[reasonClass(s.Reason)]++
			}
			if len(res.Tools) != tt.made || !maps.Equal(got, tt.skipped) && len(got)+len(tt.skipped) > 0 {
				t.Fatalf("made %d, skipped %v; want %d, %v", len(res.Tools), got, tt.made, tt.skipped)
			}
			for _, tl := range res.Tools {
				// As PUT .../tools/{id} would take the tool back: decoded strictly, then checked.
				b, _ := json.Marshal(tl)
				back, err := tool.Decode(b)
				if err == nil {
					err = back.Validate()
				}
				if err != nil {
					t.Errorf("%s: %v", tl.Name, err)
				}
			}
		})
	}
}

// TestPetstoreWithBaseURLAndAKey: the relative server needs base_url; an operation that allows
// api_key or OAuth2 is made with the key; OAuth2 alone is skipped with its reason.
func TestPetstoreWithBaseURLAndAKey(t *testing.T) {
	res, err := openapitools.Build(&openapitools.Request{Document: readDoc(t, "swagger-petstore3.yaml"), BaseURL: "https://petstore3.swagger.io/api/v3/",
		Prefix: "pets_", Security: map[string]openapitools.Credential{"api_key": {Secret: "PETSTORE_KEY"}}}, openapitools.Options{Guard: quietGuard()})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]tool.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	get, ok := byName["pets_getPetById"]
	if !ok || get.APICall.URL != "https://petstore3.swagger.io/api/v3/pet/{petId}" || get.APICall.Method != "GET" {
		t.Fatalf("pets_getPetById = %+v", get.APICall)
	}
	if want := map[string]any{"headers": map[string]any{"api_key": map[string]any{"secret": "PETSTORE_KEY"}}}; fmt.Sprint(res.Setup["pets_getPetById"]) != fmt.Sprint(want) {
		t.Errorf("setup = %v, want %v", res.Setup["pets_getPetById"], want)
	}
	if len(res.Tools) != 12 || len(res.Skipped) != 7 {
		t.Fatalf("made %d, skipped %d: %v", len(res.Tools), len(res.Skipped), res.Skipped)
	}
	for _, s := range res.Skipped {
		if !strings.Contains(s.Reason, "petstore_auth is OAuth2") {
			t.Errorf("%s skipped for %q", s.Operation, s.Reason)
		}
	}
}

func TestBadRequests(t *testing.T) {
	minimal := `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "servers": [{"url": "https://api.example.com"}],
		"paths": {"/a": {"get": {"operationId": "getA", "responses": {"200": {"description": "ok"}}}}}}`
	withRef := func(ref string) string {
		return strings.Replace(minimal, `"operationId": "getA",`, `"operationId": "getA", "parameters": [{"$ref": "`+ref+`"}],`, 1)
	}
	big := `{"openapi": "3.0.3", "x-pad": "` + strings.Repeat("a", openapitools.MaxDocumentBytes) + `"}`
	v := "v"
	tests := []struct {
		name  string
		body  string
		req   *openapitools.Request // instead of body, when set
		field string
		want  string
	}{
		{"no document", `{}`, nil, "document", "document is required"},
		{"a number", `{"document": 3}`, nil, "document", "JSON object"},
		{"neither JSON nor YAML", `{"document": "{\"openapi\": [}"}`, nil, "document", "neither JSON nor YAML"},
		{"YAML that is not OpenAPI", `{"document": "title: hello\n"}`, nil, "document", "no \"openapi\" field"},
		{"Swagger 2.0", `{"document": {"swagger": "2.0"}}`, nil, "document", "Swagger (OpenAPI 2.0)"},
		{"OpenAPI 4", `{"document": {"openapi": "4.0.0"}}`, nil, "document", "OpenAPI 4.0.0"},
		{"an unresolvable $ref", "", &openapitools.Request{Document: []byte(withRef("#/components/parameters/nope"))}, "document", "cannot be read as OpenAPI"},
		{"a $ref to another file", "", &openapitools.Request{Document: []byte(withRef("other.yaml#/p"))}, "document", "refers outside itself"},
		{"a $ref to a URL", "", &openapitools.Request{Document: []byte(withRef("https://example.com/p.yaml#/p"))}, "document", "refers outside itself"},
		{"too large", "", &openapitools.Request{Document: []byte(big)}, "document", "at most 4194304"},
		{"no paths", `{"document": {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}}}`, nil, "document", "no paths"},
		{"an unknown field", `{"document": {}, "documents": {}}`, nil, "documents", "unknown field"},
		{"a bad prefix", "", &openapitools.Request{Document: []byte(minimal), Prefix: "1x"}, "prefix", "prefix"},
		{"a relative base_url", "", &openapitools.Request{Document: []byte(minimal), BaseURL: "/v1"}, "base_url", "absolute"},
		{"a base_url with a query", "", &openapitools.Request{Document: []byte(minimal), BaseURL: "https://a.example/?k=1"}, "base_url", "no credentials, query"},
		{"an unknown scheme", "", &openapitools.Request{Document: []byte(minimal), Security: map[string]openapitools.Credential{"key": {Secret: "K"}}}, "security.key", "defines no security schemes"},
		{"secret and value", "", &openapitools.Request{Document: []byte(minimal), Security: map[string]openapitools.Credential{"key": {Secret: "K", Value: &v}}}, "security.key", "both"},
		{"a bad secret name", "", &openapitools.Request{Document: []byte(minimal), Security: map[string]openapitools.Credential{"key": {Secret: "no-dash"}}}, "security.key.secret", "developer secret"},
		{"an unknown operation", "", &openapitools.Request{Document: []byte(minimal), Operations: []string{"getA", "GET /b"}}, "operations", `"GET /b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			var err error
			if req == nil {
				req, err = openapitools.DecodeRequest([]byte(tt.body))
			}
			if err == nil {
				_, err = openapitools.Build(req, openapitools.Options{Guard: quietGuard()})
			}
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tt.field || !strings.Contains(fault.Message(err), tt.want) {
				t.Fatalf("err = %v (field %q), want InvalidInput on %q saying %q", err, fault.FieldOf(err), tt.field, tt.want)
			}
		})
	}
}

// TestGuardedServers: a document server the network guard refuses skips its operations, and so
// does a relative one; a base_url the guard refuses is a 403.
func TestGuardedServers(t *testing.T) {
	doc := `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "servers": [{"url": "http://169.254.169.254/latest"}],
		"paths": {"/meta-data": {"get": {"operationId": "meta", "responses": {"200": {"description": "ok"}}}},
		          "/public": {"servers": [{"url": "https://api.example.com"}], "get": {"operationId": "pub", "responses": {"200": {"description": "ok"}}}},
		          "/rel": {"servers": [{"url": "/v2"}], "get": {"operationId": "rel", "responses": {"200": {"description": "ok"}}}}}}`
	res, err := openapitools.Build(&openapitools.Request{Document: []byte(doc)}, openapitools.Options{Guard: quietGuard()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "pub" || len(res.Skipped) != 2 || !strings.Contains(res.Skipped[0].Reason, "network guard") ||
		!strings.Contains(res.Skipped[1].Reason, "relative: give base_url") {
		t.Fatalf("tools %v, skipped %v", res.Tools, res.Skipped)
	}
	_, err = openapitools.Build(&openapitools.Request{Document: []byte(doc), BaseURL: "http://localhost:8080"}, openapitools.Options{Guard: quietGuard()})
	if !fault.Is(err, fault.Forbidden) {
		t.Fatalf("a loopback base_url: %v, want Forbidden", err)
	}
}

// TestNames: operationIds made to fit the tool-name rule, method-and-path names, long names cut
// with a hash, and duplicates numbered in document order; arguments renamed to fit theirs.
func TestNames(t *testing.T) {
	long := strings.Repeat("VeryLongOperationName", 3)
	doc := fmt.Sprintf(`openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /a:
    get: {operationId: "list-things.v2", responses: {"200": {description: ok}}}
    post: {operationId: "list-things.v2", responses: {"200": {description: ok}}}
  /b/{id}:
    delete:
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: "page[size]", in: query, schema: {type: integer}}
        - {name: id, in: query, schema: {type: string}}
        - {name: timeout, in: header, schema: {type: integer}}
      responses: {"200": {description: ok}}
  /c:
    get: {operationId: "%s", responses: {"200": {description: ok}}}
    put: {operationId: "%s", responses: {"200": {description: ok}}}
`, long, long)
	res, err := openapitools.Build(&openapitools.Request{Document: []byte(doc), Prefix: "x_"}, openapitools.Options{Guard: quietGuard()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if !tool.ValidName(tl.Name) {
			t.Errorf("%q is no valid tool name", tl.Name)
		}
	}
	if names[0] != "x_list_things_v2" || names[1] != "x_list_things_v2_2" || names[2] != "x_delete_b_id" {
		t.Errorf("names = %q", names)
	}
	if len(names[3]) != 40 || len(names[4]) != 40 || names[3] == names[4] || !strings.HasSuffix(names[4], "_2") {
		t.Errorf("long names = %q, %q", names[3], names[4])
	}
	locs := res.Tools[2].APICall.ArgumentLocations
	want := map[string]tool.ArgumentLocation{"id": {In: "path"}, "page_size_": {In: "query", Name: "page[size]"},
		"id_query": {In: "query", Name: "id"}, "timeout_": {In: "header", Name: "timeout"}}
	if !maps.Equal(locs, want) {
		t.Errorf("argument_locations = %v, want %v", locs, want)
	}
	again, _ := openapitools.Build(&openapitools.Request{Document: []byte(doc), Prefix: "x_"}, openapitools.Options{Guard: quietGuard()})
	a, _ := json.Marshal(res.Tools)
	b, _ := json.Marshal(again.Tools)
	if !bytes.Equal(a, b) {
		t.Error("two imports of one document differ")
	}
}

// TestSchemas: $refs resolved, allOf merged, read-only properties left out of a body, a recursive
// schema cut where it recurses, 3.1's type arrays read.
func TestSchemas(t *testing.T) {
	doc := `openapi: 3.1.0
info: {title: t, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /nodes:
    post:
      operationId: addNode
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/NewNode"}}}
      responses: {"200": {description: ok}}
components:
  schemas:
    Base: {type: object, required: [name], properties: {id: {type: integer, readOnly: true}, name: {type: [string, "null"]}}}
    NewNode:
      allOf:
        - $ref: "#/components/schemas/Base"
        - type: object
          properties:
            kind: {type: string, enum: [leaf, branch]}
            children: {type: array, items: {$ref: "#/components/schemas/NewNode"}}
`
	res, err := openapitools.Build(&openapitools.Request{Document: []byte(doc)}, openapitools.Options{Guard: quietGuard()})
	if err != nil {
		t.Fatal(err)
	}
	body := res.Tools[0].APICall.ParamsSchema.Properties["body"]
	if body.Type != "object" || !slices.Equal(body.Required, []string{"name"}) || body.Properties["name"].Type != "string" {
		t.Fatalf("body = %+v", body)
	}
	if _, ok := body.Properties["id"]; ok {
		t.Error("the read-only id is an argument")
	}
	if k := body.Properties["kind"]; !slices.Equal(k.Enum, []string{"leaf", "branch"}) {
		t.Errorf("kind = %+v", k)
	}
	child := body.Properties["children"].Items
	if child == nil || child.Type != "object" || len(child.Properties) != 0 || !strings.Contains(child.Description, "recursive") {
		t.Errorf("children's items = %+v", child)
	}
	if !slices.Equal(res.Tools[0].APICall.ParamsSchema.Required, []string{"body"}) {
		t.Errorf("required = %v", res.Tools[0].APICall.ParamsSchema.Required)
	}
}
