package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// echoHandler answers what it sees of a request in its answer's body; conns counts the
// requests that came over loopback.
func echoHandler(conns *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RemoteAddr != "127.0.0.1:0" {
			conns.Add(1) // over loopback
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		switch r.URL.Query().Get("answer") {
		case "panic":
			panic("the handler fails")
		case "untyped":
			_, _ = w.Write([]byte(`{"no":"type"}`))
			return
		case "empty":
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("X-Amzn-RequestId", "r-1")
		w.WriteHeader(http.StatusBadRequest)
		_, deadline := r.Context().Deadline()
		fmt.Fprintf(w, "%s %s %s host=%s uri=%s url=%s len=%d cl=%q target=%q value=%v deadline=%v body=%s", r.Method, r.Proto,
			r.URL.Path, r.Host, r.RequestURI, r.URL, r.ContentLength, r.Header.Get("Content-Length"), r.Header.Get("X-Amz-Target"),
			r.Context().Value(callerKey{}), deadline, body)
	})
}

// callerKey is a value of the caller's context, which a server's request does not carry.
type callerKey struct{}

// answer is what a client reads of a response.
func answer(resp *http.Response, err error) string {
	if err != nil {
		return "no answer"
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%s type=%q length=%d id=%q %s", resp.Status, resp.Header.Get("Content-Type"), resp.ContentLength,
		resp.Header.Get("X-Amzn-RequestId"), body)
}

// TestSelfCallsAsOverLoopback: a request served in-process looks to the handler as it does
// served over loopback, and its answer looks the same to the client; with envInProcessAWS=0, or
// to a host that is not local mode's own, the request goes over loopback.
func TestSelfCallsAsOverLoopback(t *testing.T) {
	var conns atomic.Int64
	h := echoHandler(&conns)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the panic case's, expected
	srv.Start()
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	cases := []struct{ name, method, query, body string }{
		{"json post", http.MethodPost, "", `{"taskToken":"t"}`},
		{"get with a query", http.MethodGet, "?Qualifier=%24LATEST&x=a+b", ""},
		{"no content type", http.MethodPost, "?answer=untyped", "{}"},
		{"no body", http.MethodPost, "?answer=empty", ""},
		{"panic", http.MethodPost, "?answer=panic", "{}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			send := func(client interface {
				Do(*http.Request) (*http.Response, error)
			}) string {
				var body io.Reader
				if c.body != "" {
					body = strings.NewReader(c.body)
				}
				ctx, cancel := context.WithTimeout(context.WithValue(t.Context(), callerKey{}, "caller"), time.Minute)
				defer cancel()
				req, err := http.NewRequestWithContext(ctx, c.method, srv.URL+"/2015-03-31/functions/f/invocations"+c.query, body)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("X-Amz-Target", "AWSStepFunctions.SendTaskSuccess")
				return answer(client.Do(req))
			}
			wire := send(http.DefaultClient)
			self := &selfCalls{next: http.DefaultClient}
			self.serve(map[string]http.Handler{host: h})
			before := conns.Load()
			if got := send(self); got != wire {
				t.Errorf("in-process answer\n%s\nover loopback\n%s", got, wire)
			}
			if n := conns.Load() - before; n != 0 {
				t.Errorf("%d requests went over loopback", n)
			}
		})
	}
	for _, c := range []struct {
		name, env, host string
	}{{"turned off", "0", host}, {"another host", "", "127.0.0.1:1"}} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(envInProcessAWS, c.env)
			self := &selfCalls{next: http.DefaultClient}
			self.serve(map[string]http.Handler{c.host: h})
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			before := conns.Load()
			resp, err := self.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if conns.Load()-before != 1 {
				t.Errorf("the request did not go over loopback")
			}
		})
	}
}
