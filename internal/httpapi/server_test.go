package httpapi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"sinew/internal/httpapi"
)

// countingBody is a request body that counts the bytes read from it.
type countingBody struct {
	r    io.Reader
	read atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}
func (b *countingBody) Close() error { return nil }

func okHandler(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "ok"}, nil
}

func claimsFor(token string) httpapi.ClaimsFunc {
	return func(r *http.Request) (map[string]string, error) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			return nil, errors.New("bad token")
		}
		return map[string]string{"sub": "dev"}, nil
	}
}

// A body that cannot be served (no token, a refused token, a declared size over the limit) is
// refused without a byte of it read.
func TestRefusedBeforeTheBodyIsRead(t *testing.T) {
	const size = 10 << 20
	tests := []struct {
		name   string
		auth   string
		length int64
		want   int
	}{
		{"no token, 10 MB", "", size, http.StatusUnauthorized},
		{"no token, chunked", "", -1, http.StatusUnauthorized},
		{"refused token", "Bearer wrong", size, http.StatusUnauthorized},
		{"over the limit", "Bearer good", httpapi.MaxEventBody + 1, http.StatusRequestEntityTooLarge},
	}
	h := httpapi.HTTPHandler(okHandler, claimsFor("good"))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := &countingBody{r: strings.NewReader(strings.Repeat("x", size))}
			r := httptest.NewRequest(http.MethodPost, "/agents", nil)
			r.Body, r.ContentLength = body, tc.length
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tc.want || body.read.Load() != 0 {
				t.Errorf("status %d after reading %d bytes; want %d after none", rec.Code, body.read.Load(), tc.want)
			}
		})
	}
	// An authenticated body is read.
	body := &countingBody{r: strings.NewReader(`{"a":1}`)}
	r := httptest.NewRequest(http.MethodPost, "/agents", nil)
	r.Body, r.ContentLength = body, 7
	r.Header.Set("Authorization", "Bearer good")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != 200 || body.read.Load() != 7 {
		t.Errorf("authenticated: status %d, %d bytes read", rec.Code, body.read.Load())
	}
}

// serve runs NewServer on a loopback listener under lim until the test ends.
func serve(t *testing.T, h http.Handler, lim httpapi.Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(h, lim)
	go func() { _ = srv.Serve(httpapi.LimitListener(ln, lim)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// dial opens a connection whose reads give up after a guard against a hang (not a bound on speed).
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	return c
}

// readToEOF reads what the server sends until it closes the connection.
func readToEOF(t *testing.T, c net.Conn, what string) string {
	t.Helper()
	b, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the server kept the connection open (read %q)", what, b)
	}
	return string(b)
}

// The server does not wait for a body it will refuse: a request that declares 10 MB and sends
// none gets its 401 at once over a real connection.
func TestUnauthenticatedBodyRefusedUnreadOverTheWire(t *testing.T) {
	addr := serve(t, httpapi.HTTPHandler(okHandler, claimsFor("good")), httpapi.DefaultLimits)
	c := dial(t, addr)
	fmt.Fprintf(c, "POST /agents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 10<<20)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer while the body was unsent: %v", err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("status %d, want 401", resp.StatusCode)
	}
}

// A client that sends its headers and then trickles (or stops sending) its body is cut off once
// the body's time is up; an idle kept-alive connection is closed too.
func TestSlowAndIdleConnectionsAreClosed(t *testing.T) {
	lim := httpapi.DefaultLimits
	lim.BodyTimeout, lim.IdleTimeout = 300*time.Millisecond, 300*time.Millisecond
	addr := serve(t, httpapi.HTTPHandler(okHandler, claimsFor("good")), lim)

	slow := dial(t, addr)
	fmt.Fprint(slow, "POST /agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\nContent-Length: 100\r\n\r\n{\"a\":")
	if got := readToEOF(t, slow, "slow body"); strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Errorf("a body that never arrived was answered 200: %q", got)
	}

	idle := dial(t, addr)
	fmt.Fprint(idle, "GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := readToEOF(t, idle, "idle"); !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Errorf("the request before idling: %q", got)
	}
}

// Connections past MaxConns wait unserved until one of those served ends.
func TestConnectionLimitHolds(t *testing.T) {
	lim := httpapi.DefaultLimits
	lim.MaxConns = 2
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }), lim)
	get := func(c net.Conn) (*http.Response, error) {
		fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		return http.ReadResponse(bufio.NewReader(c), nil)
	}
	var held []net.Conn
	for range lim.MaxConns {
		c := dial(t, addr)
		if _, err := get(c); err != nil {
			t.Fatal(err)
		}
		held = append(held, c) // kept alive: still counted
	}
	extra := dial(t, addr)
	_ = extra.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if resp, err := get(extra); err == nil {
		t.Fatalf("a connection past the limit was served: %s", resp.Status)
	} else if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past the limit: %v, want no answer yet", err)
	}
	_ = held[0].Close()
	_ = extra.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(extra), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after a served connection ended: %v %v", resp, err)
	}
}
