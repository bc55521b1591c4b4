package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"sinew/internal/fault"
)

// FuzzServeEvent sends arbitrary methods, paths, queries and bodies: every answer is a status with a
// JSON body of the agreed shape, never a panic outside a handler.
func FuzzServeEvent(f *testing.F) {
	f.Add("GET", "/agents", "limit=5", "", false)
	f.Add("POST", "/agents", "", `{"name":"x","metadata":{"a":[1,{"b":2}]}}`, false)
	f.Add("POST", "/agents", "", `{"name":"x","metadata":{"a":`, false)
	f.Add("POST", "/agents", "", "eyJuYW1lIjoieCJ9", true)
	f.Add("GET", "/agents/%zz/tools/x", "cursor=%", "", false)
	f.Add("PATCH", "/prod//agents/", "limit=-1", "{}", false)
	rt := testRouter(&bytes.Buffer{})
	base := baseEvent(f)
	f.Fuzz(func(t *testing.T, method, path, query, body string, b64 bool) {
		ev := base
		withRequest(method, path, query, body)(&ev)
		ev.IsBase64Encoded = b64
		resp, err := rt.ServeEvent(context.Background(), ev)
		if err != nil {
			t.Fatalf("ServeEvent error: %v", err)
		}
		if resp.StatusCode < 200 || resp.StatusCode > 599 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if resp.Body != "" && !json.Valid([]byte(resp.Body)) {
			t.Fatalf("body is not JSON: %q", resp.Body)
		}
		if resp.StatusCode >= 400 {
			var eb ErrorBody
			if err := json.Unmarshal([]byte(resp.Body), &eb); err != nil || eb.Error.Type == "" || eb.Error.Message == "" {
				t.Fatalf("error body %q", resp.Body)
			}
		}
	})
}

// FuzzDecodeJSON: any body decodes or fails with a typed InvalidInput, never a panic.
func FuzzDecodeJSON(f *testing.F) {
	f.Add(`{"tools":[{"name":"a","arguments":{"x":1}}]}`)
	f.Add(`{"tools":[{"name":1}]}`)
	f.Add(`{"tools":[{"api_call":{"methd":1}}]}`)
	f.Add(`{"meta":{"k":{"extra":[1e400]}}}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, body string) {
		var v createIn
		err := DecodeJSON([]byte(body), &v)
		if err != nil && !fault.Is(err, fault.InvalidInput) {
			t.Fatalf("error of kind %s: %v", fault.KindOf(err), err)
		}
	})
}
