package awsjson

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func testService() *Service {
	return &Service{
		Name: "test", TargetPrefix: "TestService", ContentType: "application/x-amz-json-1.1",
		MaxBody: 64, TooLargeType: "TooLarge", InternalType: "InternalFailure",
		Log: slog.New(slog.DiscardHandler),
		Ops: map[string]Op{
			"Echo": func(ctx context.Context, body []byte) (any, error) {
				var in struct{ Name string }
				if err := Unmarshal(body, &in); err != nil {
					return nil, err
				}
				return map[string]string{"Name": in.Name}, nil
			},
			"Refuse": func(ctx context.Context, body []byte) (any, error) {
				return nil, fmt.Errorf("checking: %w", Validation("Name is wrong"))
			},
			"Fail": func(ctx context.Context, body []byte) (any, error) {
				return nil, errors.New("disk on fire at /secret/path")
			},
			"Panic": func(ctx context.Context, body []byte) (any, error) { panic("secret value") },
		},
	}
}

func TestService(t *testing.T) {
	tests := []struct {
		name, method, target, body string
		status                     int
		want                       string
	}{
		{"ok", "POST", "TestService.Echo", `{"Name":"a","Unknown":1}`, 200, `{"Name":"a"}`},
		{"empty body is {}", "POST", "TestService.Echo", ``, 200, `{"Name":""}`},
		{"typed error, wrapped", "POST", "TestService.Refuse", `{}`, 400, `{"__type":"ValidationException","message":"Name is wrong"}`},
		{"untyped error hidden", "POST", "TestService.Fail", `{}`, 500, `{"__type":"InternalFailure","message":"internal error"}`},
		{"panic hidden", "POST", "TestService.Panic", `{}`, 500, `{"__type":"InternalFailure","message":"internal error"}`},
		{"bad JSON", "POST", "TestService.Echo", `{"Name":`, 400, `{"__type":"SerializationException","message":"the request body is not valid JSON"}`},
		{"wrong type", "POST", "TestService.Echo", `{"Name":1}`, 400, `{"__type":"SerializationException","message":"member \"Name\" has the wrong type: expected string"}`},
		{"trailing data", "POST", "TestService.Echo", `{} {}`, 400, `{"__type":"SerializationException","message":"the request body has data after the JSON value"}`},
		{"too large", "POST", "TestService.Echo", `{"Name":"` + strings.Repeat("a", 64) + `"}`, 413, `{"__type":"TooLarge","message":"request must be smaller than 64 bytes for the Echo operation"}`},
		{"unknown op", "POST", "TestService.Nope", `{}`, 400, `{"__type":"UnknownOperationException","message":"unknown operation \"TestService.Nope\""}`},
		{"wrong prefix", "POST", "Other.Echo", `{}`, 400, `{"__type":"UnknownOperationException","message":"unknown operation \"Other.Echo\""}`},
		{"GET", "GET", "TestService.Echo", ``, 400, `{"__type":"UnknownOperationException","message":"the service accepts only POST requests"}`},
	}
	svc := testService()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "/", strings.NewReader(tc.body))
			req.Header.Set("X-Amz-Target", tc.target)
			rec := httptest.NewRecorder()
			svc.ServeHTTP(rec, req)
			if rec.Code != tc.status || rec.Body.String() != tc.want {
				t.Errorf("got %d %s, want %d %s", rec.Code, rec.Body.String(), tc.status, tc.want)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/x-amz-json-1.1" {
				t.Errorf("Content-Type %q", ct)
			}
			if rec.Code != 200 {
				var e struct {
					Type string `json:"__type"`
				}
				_ = json.Unmarshal(rec.Body.Bytes(), &e)
				if rec.Header().Get("X-Amzn-ErrorType") != e.Type {
					t.Errorf("X-Amzn-ErrorType %q, body type %q", rec.Header().Get("X-Amzn-ErrorType"), e.Type)
				}
			}
			if rec.Header().Get("X-Amzn-RequestId") == "" {
				t.Error("no request id")
			}
		})
	}
}

// Answers are flushed before the handler returns (ahead of the request's log line) and still carry
// their length: not chunked, so every SDK reads them as before.
func TestAnswerLength(t *testing.T) {
	srv := httptest.NewServer(testService())
	defer srv.Close()
	for _, target := range []string{"TestService.Echo", "TestService.Refuse"} {
		req, err := http.NewRequest("POST", srv.URL, strings.NewReader(`{"Name":"abc"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Target", target)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
			t.Errorf("%s: Content-Length %d, Transfer-Encoding %v, body of %d bytes", target, resp.ContentLength, resp.TransferEncoding, len(body))
		}
	}
}
