package lambdaapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// FuzzInvoke sends arbitrary paths, invocation types and payloads to an endpoint with an echo
// function: every answer is a success or one of Lambda's error shapes, never a service failure or a
// panic, and a success echoes the payload exactly.
func FuzzInvoke(f *testing.F) {
	svc := New(Options{Logger: quiet()})
	if err := svc.Register("echo", echo); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = svc.Close(context.Background()) })
	f.Add("/2015-03-31/functions/echo/invocations", "", []byte(`{}`))
	f.Fuzz(func(t *testing.T, target, invType string, body []byte) {
		u, err := url.ParseRequestURI(target)
		if err != nil || u.Host != "" || u.Scheme != "" {
			t.Skip()
		}
		// The URL is set after construction: NewRequest refuses request lines a client could still send.
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.URL = u
		req.Header.Set("X-Amz-Invocation-Type", invType)
		rec := httptest.NewRecorder()
		svc.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			want := body
			if len(bytes.TrimSpace(body)) == 0 {
				want = []byte("{}")
			}
			if !bytes.Equal(rec.Body.Bytes(), want) || rec.Header().Get("X-Amz-Function-Error") != "" {
				t.Fatalf("200 without the echo: %q", rec.Body.Bytes())
			}
			return
		case http.StatusAccepted, http.StatusNoContent:
			return
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q %q", rec.Code, target, invType)
		}
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Type == "" || e.Type != rec.Header().Get("X-Amzn-ErrorType") {
			t.Fatalf("error answer %q with header %q", rec.Body.Bytes(), rec.Header().Get("X-Amzn-ErrorType"))
		}
	})
}
