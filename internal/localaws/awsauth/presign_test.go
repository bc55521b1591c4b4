package awsauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

var sdkCreds = aws.Credentials{AccessKeyID: testCreds.AccessKeyID, SecretAccessKey: testCreds.SecretAccessKey}

// rawCase is a request signed by the SDK's signer outside a client: presigned (query form) or with
// an Authorization header, then optionally changed before it is sent.
type rawCase struct {
	name     string
	presign  bool
	path     string // default: a Lambda invoke
	query    url.Values
	header   http.Header
	body     string
	hash     string    // payload hash to sign with; default the body's
	at       time.Time // signing time; default now
	after    func(u *url.URL, h http.Header) (body string)
	code     string // "" for success
	msg      string
	wantBody string // what the handler must see on success; default body
}

var rawCases = []rawCase{
	{name: "presigned", presign: true, body: `{"presigned":true}`},
	{name: "presigned unsigned payload", presign: true, body: `{"x":1}`, hash: unsignedPayload},
	{name: "presigned unsigned payload declared", presign: true, body: `{"x":1}`, hash: unsignedPayload,
		header: http.Header{"X-Amz-Content-Sha256": {unsignedPayload}}},
	{name: "presigned GET with odd query", presign: true, path: "/2015-03-31/functions/",
		query: url.Values{"Marker": {"a b+c/d~é"}, "MaxItems": {"10", "2"}}},
	{name: "presigned, expired", presign: true, at: time.Now().Add(-time.Hour), query: url.Values{"X-Amz-Expires": {"300"}},
		code: codeInvalid, msg: "Signature expired"},
	{name: "presigned, long but valid", presign: true, at: time.Now().Add(-6 * 24 * time.Hour), query: url.Values{"X-Amz-Expires": {"604800"}}},
	{name: "presigned, over 7 days", presign: true, query: url.Values{"X-Amz-Expires": {"604801"}}, code: codeIncomplete, msg: "X-Amz-Expires"},
	{name: "presigned, in the future", presign: true, at: time.Now().Add(time.Hour), code: codeInvalid, msg: "not yet current"},
	{name: "presigned, body changed", presign: true, body: `{"a":1}`, code: codeInvalid, msg: "does not match",
		after: func(*url.URL, http.Header) string { return `{"a":2}` }},
	{name: "presigned, parameter added", presign: true, code: codeInvalid, msg: "does not match",
		after: func(u *url.URL, _ http.Header) string { u.RawQuery += "&Qualifier=2"; return "" }},
	{name: "presigned, date missing", presign: true, code: codeIncomplete, msg: "missing or repeated: X-Amz-Date",
		after: func(u *url.URL, _ http.Header) string {
			q := u.Query()
			q.Del("X-Amz-Date")
			u.RawQuery = q.Encode()
			return ""
		}},
	{name: "presigned, signature repeated", presign: true, code: codeIncomplete, msg: "X-Amz-Signature",
		after: func(u *url.URL, _ http.Header) string { u.RawQuery += "&X-Amz-Signature=00"; return "" }},
	{name: "presigned, bad escape", presign: true, code: codeIncomplete, msg: "percent-encoded",
		after: func(u *url.URL, _ http.Header) string { u.RawQuery += "&a=%zz"; return "" }},
	{name: "presigned, token", presign: true, code: codeUnrecognized,
		after: func(u *url.URL, _ http.Header) string { u.RawQuery += "&X-Amz-Security-Token=t"; return "" }},
	{name: "escaped path", path: "/2015-03-31/functions/a%20b%2Fc/invocations", body: `{}`},
	{name: "header values spaced and repeated", body: `{}`,
		header: http.Header{"X-Custom": {"  a   b  ", "c"}, "Content-Type": {"application/json"}}},
	{name: "repeated header reordered", body: `{}`, header: http.Header{"X-Custom": {"a", "c"}}, code: codeInvalid, msg: "does not match",
		after: func(_ *url.URL, h http.Header) string { h["X-Custom"] = []string{"c", "a"}; return `{}` }},
	{name: "query form header value", body: `{}`, query: url.Values{"Qualifier": {"$LATEST"}}},
}

func TestSignedOutsideClients(t *testing.T) {
	for _, tc := range rawCases {
		t.Run(tc.name, func(t *testing.T) {
			rec, srv := serve(t, Options{Region: testRegion})
			resp := sendRaw(t, srv.URL, tc)
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			if tc.code == "" {
				want := tc.body
				if tc.after != nil {
					want = tc.wantBody
				}
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("refused: %d %s", resp.StatusCode, data)
				}
				if seen := rec.seen(); len(seen) != 1 || seen[0] != want {
					t.Fatalf("handler saw %q, want %q", seen, want)
				}
				return
			}
			var e struct{ Message string }
			_ = json.Unmarshal(data, &e)
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Amzn-ErrorType") != tc.code || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("answer %d %s %s, want 403 %s with %q", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), data, tc.code, tc.msg)
			}
			if len(rec.seen()) != 0 {
				t.Error("a refused request reached the handler")
			}
		})
	}
}

// sendRaw signs tc's request with the SDK's signer and sends it.
func sendRaw(t *testing.T, base string, tc rawCase) *http.Response {
	t.Helper()
	path, method := tc.path, http.MethodPost
	if path == "" {
		path = "/2015-03-31/functions/f/invocations"
	}
	if tc.body == "" {
		method = http.MethodGet
	}
	query := url.Values{}
	for k, vs := range tc.query {
		query[k] = vs
	}
	if tc.presign && !query.Has("X-Amz-Expires") {
		// The SDK's presigner leaves the lifetime to its caller.
		query.Set("X-Amz-Expires", "900")
	}
	req, err := http.NewRequest(method, base+path+"?"+query.Encode(), strings.NewReader(tc.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range tc.header {
		req.Header[k] = vs
	}
	hash, at := tc.hash, tc.at
	if hash == "" {
		hash = sha256Hex([]byte(tc.body))
	}
	if at.IsZero() {
		at = time.Now()
	}
	signer := v4.NewSigner()
	if tc.presign {
		signed, headers, err := signer.PresignHTTP(t.Context(), sdkCreds, req, hash, "lambda", testRegion, at)
		if err != nil {
			t.Fatal(err)
		}
		if req.URL, err = url.Parse(signed); err != nil {
			t.Fatal(err)
		}
		req.Header = headers
	} else if err := signer.SignHTTP(t.Context(), sdkCreds, req, hash, "lambda", testRegion, at); err != nil {
		t.Fatal(err)
	}
	body := tc.body
	if tc.after != nil {
		body = tc.after(req.URL, req.Header)
	}
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
