package kms

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzServe sends arbitrary operations and bodies: every answer is a success or one of AWS's error
// shapes, never an internal error (a recovered panic answers 500, so it fails here too).
func FuzzServe(f *testing.F) {
	svc, err := Open(Options{Dir: f.TempDir(), Logger: quiet()})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("GenerateDataKey", []byte(`{"KeyId":"alias/sinew-secrets","NumberOfBytes":16}`))
	f.Add("Decrypt", []byte(`{"CiphertextBlob":"AQ=="}`))
	f.Fuzz(func(t *testing.T, op string, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("X-Amz-Target", "TrentService."+op)
		rec := httptest.NewRecorder()
		svc.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("200 with a body that is not JSON: %q", rec.Body.Bytes())
			}
			return
		case http.StatusBadRequest, http.StatusPreconditionFailed, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %s %q: %s", rec.Code, op, body, rec.Body.Bytes())
		}
		var e struct {
			Type string `json:"__type"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Type == "" {
			t.Fatalf("error answer without __type: %q", rec.Body.Bytes())
		}
	})
}
