package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/golang-jwt/jwt/v5"
)

var testKey = []byte("local-mode-test-key-0123456789abcdef")

func token(t *testing.T, key []byte, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loopbackServer serves h; httptest listens on 127.0.0.1.
func loopbackServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPHandler(t *testing.T) {
	var logs bytes.Buffer
	rt := testRouter(&logs)
	// A route that reports the event it got, to check the adapter builds what API Gateway sends.
	var seen events.APIGatewayV2HTTPRequest
	rt.Handle(Route{Method: "POST", Path: "/inspect/{id}", Handler: func(_ context.Context, r *Request) (*Response, error) {
		seen = *r.Event
		return OK(map[string]any{"id": r.Param("id"), "q": r.Query()["q"], "dev": r.DeveloperID, "len": len(r.Body())}), nil
	}})
	srv := loopbackServer(t, HTTPHandler(rt.ServeEvent, HMACClaims(testKey)))

	good := token(t, testKey, jwt.MapClaims{"sub": "dev-1", "exp": time.Now().Add(time.Hour).Unix()})
	expired := token(t, testKey, jwt.MapClaims{"sub": "dev-1", "exp": time.Now().Add(-time.Hour).Unix()})
	wrongKey := token(t, []byte("another-key-another-key-another-k"), jwt.MapClaims{"sub": "dev-1", "exp": time.Now().Add(time.Hour).Unix()})
	noExp := token(t, testKey, jwt.MapClaims{"sub": "dev-1"})
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "dev-1", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)

	binary := []byte{0xff, 0x00, 0xfe, 0x80}
	tests := []struct {
		name       string
		method     string
		path       string
		body       []byte
		headers    map[string]string
		wantStatus int
		wantBody   string
		wantHeader map[string]string
	}{
		{"healthz", "GET", "/healthz", nil, nil, 200, `{"status":"ok"}`, map[string]string{"Content-Type": "application/json"}},
		{"no token", "GET", "/agents", nil, nil, 401, "", map[string]string{"Www-Authenticate": "Bearer"}},
		{"good token", "GET", "/agents/a1", nil, map[string]string{"Authorization": "Bearer " + good}, 200, `{"developer":"dev-1","id":"a1"}`, nil},
		{"expired token", "GET", "/agents/a1", nil, map[string]string{"Authorization": "Bearer " + expired}, 401, "", nil},
		{"wrong key", "GET", "/agents/a1", nil, map[string]string{"Authorization": "Bearer " + wrongKey}, 401, "", nil},
		{"token without expiry", "GET", "/agents/a1", nil, map[string]string{"Authorization": "Bearer " + noExp}, 401, "", nil},
		{"alg none", "GET", "/agents/a1", nil, map[string]string{"Authorization": "Bearer " + none}, 401, "", nil},
		{"not bearer", "GET", "/agents/a1", nil, map[string]string{"Authorization": "Basic abc"}, 401, "", nil},
		{"public route ignores no token", "GET", "/openapi.json", nil, nil, 200, "", nil},
		{"405", "PUT", "/agents", nil, map[string]string{"Authorization": "Bearer " + good}, 405, "", map[string]string{"Allow": "GET, POST"}},
		{"create", "POST", "/agents", []byte(`{"name":"x"}`), map[string]string{"Authorization": "Bearer " + good}, 201, `{"developer":"dev-1","metadata":null,"name":"x"}`, nil},
		{"strict decode", "POST", "/agents", []byte(`{"name":"x","extra":1}`), map[string]string{"Authorization": "Bearer " + good}, 400,
			`{"error":{"type":"Sinew.InvalidInput","message":"unknown field \"extra\"","field":"extra"}}`, nil},
		{"too large", "POST", "/small", []byte(`"this is too long"`), map[string]string{"Authorization": "Bearer " + good}, 413, "", nil},
		{"binary body travels base64", "POST", "/echo-bytes", binary, map[string]string{"Authorization": "Bearer " + good}, 200,
			`{"b64":"` + base64.StdEncoding.EncodeToString(binary) + `"}`, nil},
		{"event shape", "POST", "/inspect/a%20b?q=1&q=2", []byte("hi"), map[string]string{"Authorization": "Bearer " + good, "X-Custom": "v", "Cookie": "a=1; b=2"}, 200,
			`{"dev":"dev-1","id":"a b","len":2,"q":["1","2"]}`, nil},
		{"delete", "DELETE", "/agents/x", nil, map[string]string{"Authorization": "Bearer " + good}, 204, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, bytes.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantBody != "" && !jsonEqual(string(body), tt.wantBody) {
				t.Errorf("body %s, want %s", body, tt.wantBody)
			}
			if resp.StatusCode >= 400 {
				var eb ErrorBody
				if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Type == "" || eb.Error.Message == "" {
					t.Errorf("error body %s is not the agreed shape", body)
				}
			}
			for k, v := range tt.wantHeader {
				if resp.Header.Get(k) != v {
					t.Errorf("header %s = %q, want %q", k, resp.Header.Get(k), v)
				}
			}
		})
	}

	// The event the adapter built, as API Gateway would have.
	if seen.Version != "2.0" || seen.RouteKey != "$default" || seen.RawPath != "/inspect/a%20b" || seen.RequestContext.HTTP.Path != "/inspect/a b" {
		t.Errorf("event basics: %+v", seen)
	}
	if seen.RawQueryString != "q=1&q=2" || seen.QueryStringParameters["q"] != "1,2" {
		t.Errorf("query: %q %v", seen.RawQueryString, seen.QueryStringParameters)
	}
	if seen.Headers["x-custom"] != "v" || seen.Headers["cookie"] != "" || strings.Join(seen.Cookies, ";") != "a=1;b=2" {
		t.Errorf("headers %v cookies %v", seen.Headers, seen.Cookies)
	}
	if seen.RequestContext.HTTP.Method != "POST" || seen.RequestContext.HTTP.SourceIP != "127.0.0.1" || seen.RequestContext.RequestID == "" {
		t.Errorf("request context %+v", seen.RequestContext)
	}
	if seen.Body != "hi" || seen.IsBase64Encoded {
		t.Errorf("text body %q base64 %v", seen.Body, seen.IsBase64Encoded)
	}
	if seen.RequestContext.Authorizer.JWT.Claims["sub"] != "dev-1" || seen.RequestContext.Authorizer.JWT.Claims["exp"] == "" {
		t.Errorf("claims %v", seen.RequestContext.Authorizer.JWT.Claims)
	}
}

func TestHTTPHandlerBodyOverEventLimit(t *testing.T) {
	rt := testRouter(&bytes.Buffer{})
	srv := loopbackServer(t, HTTPHandler(rt.ServeEvent, nil))
	resp, err := srv.Client().Post(srv.URL+"/echo-bytes", "application/octet-stream", bytes.NewReader(make([]byte, MaxEventBody+1)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("status %d, want 413", resp.StatusCode)
	}
}
