package awsauth

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// FuzzVerify sends arbitrary Authorization headers, dates, query strings and bodies: none may
// panic or reach the handler, and every refusal is one of the AWS error shapes.
func FuzzVerify(f *testing.F) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v := New(testCreds, Options{Region: testRegion, Now: func() time.Time { return at }, MaxBody: 1 << 10, Logger: quiet()})
	h := v.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("a request without a valid signature reached the handler")
	}))

	// A well-formed header, signed with a secret other than the Verifier's so no mutation can pass.
	seed := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:4599/", bytes.NewReader([]byte(`{}`)))
	other := sdkCreds
	other.SecretAccessKey = "another-secret"
	if err := v4.NewSigner().SignHTTP(f.Context(), other, seed, sha256Hex([]byte(`{}`)), "kms", testRegion, at); err != nil {
		f.Fatal(err)
	}
	amzDate := seed.Header.Get("X-Amz-Date")
	f.Add(seed.Header.Get("Authorization"), amzDate, "", []byte(`{}`))
	f.Add("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260102/us-east-1/kms/aws4_request, SignedHeaders=host, Signature=00",
		amzDate, "", []byte(`{}`))
	f.Add("", amzDate, "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260102%2Fus-east-1%2Flambda%2Faws4_request"+
		"&X-Amz-Date="+amzDate+"&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=00", []byte{})
	f.Add("AWS4-HMAC-SHA256 ,,==,Credential=/////", "x", "a=%zz&&=", bytes.Repeat([]byte("x"), 2<<10))

	f.Fuzz(func(t *testing.T, auth, date, query string, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:4599/", bytes.NewReader(body))
		req.URL.RawQuery = query
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		req.Header.Set("X-Amz-Date", date)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusBadRequest, http.StatusForbidden, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		}
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Message == "" || rec.Header().Get("X-Amzn-ErrorType") == "" {
			t.Fatalf("refusal not in an AWS shape: %q", rec.Body.Bytes())
		}
		if bytes.Contains(rec.Body.Bytes(), []byte(testCreds.SecretAccessKey)) {
			t.Fatal("a refusal shows the secret")
		}
	})
}
