package awsauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestKnownAnswers checks requests whose signatures were not made by this package's code: a
// known-answer vector, and a Date-header request (no SDK signs with Date) signed step by step here.
func TestKnownAnswers(t *testing.T) {
	vectorCreds := Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}
	at := time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		auth   string
	}{
		{
			name:   "vanilla GET",
			header: http.Header{"X-Amz-Date": {"20150830T123600Z"}},
			auth: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, " +
				"Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
		},
		{
			name:   "Date header",
			header: http.Header{"Date": {"Sun, 30 Aug 2015 12:36:00 GMT"}},
			auth: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=date;host, " +
				"Signature=" + signByHand(vectorCreds.SecretAccessKey, "20150830T123600Z", "20150830/us-east-1/service/aws4_request",
				"GET\n/\n\ndate:Sun, 30 Aug 2015 12:36:00 GMT\nhost:example.amazonaws.com\n\ndate;host\n"+sha256Hex(nil)),
		},
	}
	v := New(vectorCreds, Options{Region: "us-east-1", Services: []string{"service"}, Now: func() time.Time { return at }, Logger: quiet()})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reached := false
			h := v.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
			r := httptest.NewRequest(http.MethodGet, "http://example.amazonaws.com/", nil)
			r.Header = tc.header
			r.Header.Set("Authorization", tc.auth)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if !reached {
				t.Fatalf("refused: %d %s", rec.Code, rec.Body.Bytes())
			}
		})
	}
}

// signByHand signs a canonical request written out in full, deriving the key as SigV4 describes.
func signByHand(secret, amzDate, scope, canonical string) string {
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	key := []byte("AWS4" + secret)
	for _, part := range []string{scope[:8], "us-east-1", "service", "aws4_request"} {
		key = mac(key, part)
	}
	return hex.EncodeToString(mac(key, "AWS4-HMAC-SHA256\n"+amzDate+"\n"+scope+"\n"+sha256Hex([]byte(canonical))))
}
