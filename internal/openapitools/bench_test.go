package openapitools_test

import (
	"encoding/json"
	"maps"
	"testing"

	"go.yaml.in/yaml/v4"

	"sinew/internal/openapitools"
)

// joinedTwilio is Twilio's 2010 API (197 operations) and its conversations API (103) as one
// document of 300 operations, each path keeping its own server.
func joinedTwilio(t testing.TB) []byte {
	t.Helper()
	var a, b map[string]any
	if err := yaml.Unmarshal(readDoc(t, "twilio-api-v2010.yaml"), &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(readDoc(t, "twilio-conversations-v1.yaml"), &b); err != nil {
		t.Fatal(err)
	}
	paths := a["paths"].(map[string]any)
	for p, item := range b["paths"].(map[string]any) {
		if _, clash := paths[p]; clash {
			t.Fatalf("both documents have the path %s", p)
		}
		item.(map[string]any)["servers"] = b["servers"]
		paths[p] = item
	}
	schemas := a["components"].(map[string]any)["schemas"].(map[string]any)
	for k, v := range b["components"].(map[string]any)["schemas"].(map[string]any) {
		if _, clash := schemas[k]; clash {
			t.Fatalf("both documents have the schema %s", k)
		}
		schemas[k] = v
	}
	maps.Copy(a["components"].(map[string]any)["securitySchemes"].(map[string]any), b["components"].(map[string]any)["securitySchemes"].(map[string]any))
	out, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestJoinedTwilioHas300Operations(t *testing.T) {
	v := "AC1:token"
	res, err := openapitools.Build(&openapitools.Request{Document: joinedTwilio(t),
		Security: map[string]openapitools.Credential{"accountSid_authToken": {Value: &v}}}, openapitools.Options{Guard: quietGuard()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 300 || len(res.Skipped) != 0 {
		t.Fatalf("made %d, skipped %d", len(res.Tools), len(res.Skipped))
	}
}

// BenchmarkImport300 is an import of 300 operations: parsing, resolving and making the tools (not
// the DynamoDB writes). go test -run '^$' -bench Import300 -benchmem ./internal/openapitools
func BenchmarkImport300(b *testing.B) {
	doc := joinedTwilio(b)
	v := "AC1:token"
	req := &openapitools.Request{Document: doc, Security: map[string]openapitools.Credential{"accountSid_authToken": {Value: &v}}}
	b.SetBytes(int64(len(doc)))
	b.ResetTimer()
	for b.Loop() {
		res, err := openapitools.Build(req, openapitools.Options{Guard: quietGuard()})
		if err != nil || len(res.Tools) != 300 {
			b.Fatalf("%v, %d tools", err, len(res.Tools))
		}
	}
}
