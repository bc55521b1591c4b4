package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go/middleware"
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

// inProcess is a client that serves every request with h in-process.
type inProcess struct{ h http.Handler }

func (c inProcess) Do(r *http.Request) (*http.Response, error) { return serveInProcess(c.h, r) }

// TestServeInProcessAsOverLoopback: a request served in-process looks to the handler as it does
// served over loopback, and its answer looks the same to the client.
func TestServeInProcessAsOverLoopback(t *testing.T) {
	var conns atomic.Int64
	h := echoHandler(&conns)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the panic case's, expected
	srv.Start()
	defer srv.Close()
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
			before := conns.Load()
			if got := send(inProcess{h}); got != wire {
				t.Errorf("in-process answer\n%s\nover loopback\n%s", got, wire)
			}
			if n := conns.Load() - before; n != 0 {
				t.Errorf("%d requests went over loopback", n)
			}
		})
	}
}

// TestSelfCallsMiddleware: through the AWS SDK, an Invoke to local mode's own endpoint is served
// in-process with the answer it gets over loopback; with envInProcessAWS=0, or to a host that is
// not local mode's own, it goes over loopback.
func TestSelfCallsMiddleware(t *testing.T) {
	var conns atomic.Int64
	h := echoHandler(&conns)
	srv := httptest.NewServer(h)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	invoke := func(t *testing.T, self *selfCalls) string {
		t.Helper()
		c := lambda.New(lambda.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1,
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
			APIOptions:  []func(*middleware.Stack) error{self.Register}})
		out, err := c.Invoke(t.Context(), &lambda.InvokeInput{FunctionName: aws.String("f"), Payload: []byte(`{"a":1}`)})
		var re *awshttp.ResponseError
		if !errors.As(err, &re) { // the echo answers 400
			t.Fatalf("Invoke = %v, %v", out, err)
		}
		return fmt.Sprint(re.HTTPStatusCode(), re.ServiceRequestID())
	}
	wire := invoke(t, &selfCalls{})
	tests := []struct {
		name, env, host string
		loopback        int64
	}{{"own endpoint", "", host, 0}, {"turned off", "0", host, 1}, {"another host", "", "127.0.0.1:1", 1}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(envInProcessAWS, tc.env)
			self := &selfCalls{}
			self.serve(map[string]http.Handler{tc.host: h})
			before := conns.Load()
			if got := invoke(t, self); got != wire {
				t.Errorf("answer %s, over loopback %s", got, wire)
			}
			if n := conns.Load() - before; n != tc.loopback {
				t.Errorf("%d requests went over loopback, want %d", n, tc.loopback)
			}
		})
	}
}

// BenchmarkSelfCall: one SendTaskSuccess through the AWS SDK to a handler that reads the request
// and answers {}, over loopback and in-process (the client's and the server's sides both count):
//
//	go test -run '^$' -bench SelfCall -benchmem ./infra/local/
func BenchmarkSelfCall(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{}`))
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, inProcess := range []bool{false, true} {
		name := "loopback"
		self := &selfCalls{}
		if inProcess {
			name = "in-process"
			self.serve(map[string]http.Handler{strings.TrimPrefix(srv.URL, "http://"): h})
		}
		b.Run(name, func(b *testing.B) {
			c := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
				Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
				APIOptions:  []func(*middleware.Stack) error{self.Register}})
			in := &sfn.SendTaskSuccessInput{TaskToken: aws.String(strings.Repeat("t", 200)), Output: aws.String(`{"result":"` + strings.Repeat("x", 100) + `"}`)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.SendTaskSuccess(b.Context(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
