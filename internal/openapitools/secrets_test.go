package openapitools_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sinew/internal/apicall"
	"sinew/internal/fault"
	"sinew/internal/netguard"
	"sinew/internal/openapitools"
)

// TestCredentialsNeverShown: a credential given as a value goes into the setup and the request
// only: never into a tool, a skip reason, an error of the import or of a call, or a log line.
func TestCredentialsNeverShown(t *testing.T) {
	const secret = "s3cret-7f1d9a"
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "https://api.example.com"}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
    jar: {type: apiKey, in: cookie, name: sid}
    basic: {type: http, scheme: basic}
paths:
  /a: {get: {operationId: a, security: [{key: []}], responses: {"200": {description: ok}}}}
  /b: {get: {operationId: b, security: [{jar: []}], responses: {"200": {description: ok}}}}
  /c: {get: {operationId: c, security: [{basic: []}], responses: {"200": {description: ok}}}}
`
	shown := func(what, s string) {
		t.Helper()
		if strings.Contains(s, secret) || strings.Contains(s, base64.StdEncoding.EncodeToString([]byte("u:"+secret))) {
			t.Errorf("%s shows the credential: %s", what, s)
		}
	}
	for _, bad := range []string{secret + "\n", strings.Repeat(secret, 1000)} {
		_, err := openapitools.Build(&openapitools.Request{Document: []byte(doc), Security: map[string]openapitools.Credential{"key": {Value: &bad}}}, openapitools.Options{Guard: quietGuard()})
		if !fault.Is(err, fault.InvalidInput) {
			t.Fatalf("a bad value: %v", err)
		}
		shown("the import's error", err.Error())
	}
	cookie, plain, basic := "a;"+secret, secret, "u:"+secret
	res, err := openapitools.Build(&openapitools.Request{Document: []byte(doc), Security: map[string]openapitools.Credential{
		"key": {Value: &plain}, "jar": {Value: &cookie}, "basic": {Value: &basic}}}, openapitools.Options{Guard: quietGuard()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 2 || len(res.Skipped) != 1 || res.Skipped[0].Operation != "b" {
		t.Fatalf("tools %d, skipped %v", len(res.Tools), res.Skipped)
	}
	out, _ := json.Marshal(map[string]any{"tools": res.Tools, "skipped": res.Skipped})
	shown("the import's answer", string(out))

	// A call the API refuses: its error and the executor's log leave the credential out.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Key") != secret && r.Header.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte(basic)) {
			t.Errorf("the credential did not arrive: %v", r.Header)
		}
		http.Error(w, "denied", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(strings.TrimPrefix(srv.URL, "http://"))), netguard.WithLogger(logger))
	ex := apicall.New(g, apicall.WithLogger(logger))
	for _, tl := range res.Tools {
		def := *tl.APICall
		def.URL = srv.URL + "/" + tl.Name
		_, err := ex.Execute(t.Context(), &def, apicall.Input{Call: map[string]any{}, MetaSetup: res.Setup[tl.Name]})
		if !fault.Is(err, fault.Provider) {
			t.Fatalf("%s: %v, want the API's refusal", tl.Name, err)
		}
		shown("the call's error", err.Error())
	}
	shown("the log", logs.String())
}
