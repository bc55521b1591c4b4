package apicall_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"sinew/internal/apicall"
	"sinew/internal/fault"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
	"sinew/internal/tool"
)

// TestSSRF: every target of the SSRF table, as a definition URL, is refused as Forbidden with a clear
// message, and no connection is attempted (the tripwire counts attempts that passed the guard; the
// canaries count connections accepted).
func TestSSRF(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(echo))
	targets := netguardtest.Targets(e.canary)
	if len(targets) < 30 {
		t.Fatalf("the SSRF table has %d rows, want at least 30", len(targets))
	}
	for _, tt := range targets {
		t.Run(tt.Name, func(t *testing.T) {
			before := e.passed()
			_, err := e.ex.Execute(t.Context(), &tool.APICallDef{Method: "GET", URL: tt.URL}, apicall.Input{})
			if !fault.Is(err, fault.Forbidden) || !errors.Is(err, netguard.ErrRefused) {
				t.Fatalf("%s: err = %v (kind %s), want Forbidden", tt.URL, err, fault.KindOf(err))
			}
			if msg := fault.Message(err); !strings.HasPrefix(msg, "refused: ") || !strings.Contains(msg, tt.Want) {
				t.Errorf("message %q, want a refusal mentioning %q", msg, tt.Want)
			}
			if n := e.passed() - before; n != 0 {
				t.Errorf("%d connection attempts got past the guard", n)
			}
		})
	}
	if n := e.canary.Accepted(); n != 0 {
		t.Errorf("the canaries accepted %d connections, want 0", n)
	}
}

func TestRedirects(t *testing.T) {
	var served atomic.Int64
	var e *env
	mux := http.NewServeMux()
	mux.HandleFunc("/chain/{n}", func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			fmt.Fprint(w, `{"end": true}`)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/chain/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/to-canary", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+e.canary.V4.Addr.String()+"/", http.StatusFound)
	})
	mux.HandleFunc("/to-canary-decimal", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("http://2130706433:%d/", e.canary.V4.Addr.Port()), http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/to-metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/to-name", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("http://evil.test:%d/", e.canary.V4.Addr.Port()), http.StatusSeeOther)
	})
	mux.HandleFunc("/to-allowed-name", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://api.test:"+r.URL.Query().Get("port")+"/chain/0", http.StatusFound)
	})
	e = newEnv(t, mux)
	port := e.srv.URL[strings.LastIndex(e.srv.URL, ":")+1:]

	tests := []struct {
		name     string
		path     string
		defFR    *bool
		callFR   any
		status   int
		requests int64
		kind     fault.Kind
		msg      string
	}{
		{"off by default: the 3xx is the result", "/chain/3", nil, nil, 302, 1, "", ""},
		{"on in the definition", "/chain/3", ptr(true), nil, 200, 4, "", ""},
		{"on in the call is refused", "/chain/2", nil, true, 0, 0, fault.InvalidInput, "only by the tool's definition"},
		{"the call turns it off", "/chain/2", ptr(true), false, 302, 1, "", ""},
		{"five hops", "/chain/5", ptr(true), nil, 200, 6, "", ""},
		{"six hops is too many", "/chain/6", ptr(true), nil, 0, 6, fault.Provider, "redirected more than 5 times"},
		{"to an allowed name", "/to-allowed-name?port=" + port, ptr(true), nil, 200, 1, "", ""},
		{"to a loopback canary", "/to-canary", ptr(true), nil, 0, 0, fault.Forbidden, "is a loopback address"},
		{"to a decimal loopback", "/to-canary-decimal", ptr(true), nil, 0, 0, fault.Forbidden, "127.0.0.1 is a loopback address"},
		{"to the metadata address", "/to-metadata", ptr(true), nil, 0, 0, fault.Forbidden, "169.254.169.254 is the cloud metadata address"},
		{"to a name for loopback", "/to-name", ptr(true), nil, 0, 0, fault.Forbidden, "evil.test resolves to 127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			served.Store(0)
			d := e.def("GET", tt.path)
			d.FollowRedirects = tt.defFR
			call := map[string]any{}
			if tt.callFR != nil {
				call["follow_redirects"] = tt.callFR
			}
			res, err := e.ex.Execute(t.Context(), d, apicall.Input{Call: call})
			if tt.kind != "" {
				if !fault.Is(err, tt.kind) || !strings.Contains(fault.Message(err), tt.msg) {
					t.Fatalf("err = %v (kind %s), want %s mentioning %q", err, fault.KindOf(err), tt.kind, tt.msg)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if res.StatusCode != tt.status {
					t.Errorf("status = %d, want %d", res.StatusCode, tt.status)
				}
				if tt.status == 302 && res.Headers["location"] == "" {
					t.Error("a 3xx result lacks its location header")
				}
			}
			if tt.requests != 0 && served.Load() != tt.requests {
				t.Errorf("the chain served %d requests, want %d", served.Load(), tt.requests)
			}
		})
	}
	if n := e.canary.Accepted(); n != 0 {
		t.Errorf("the canaries accepted %d connections, want 0", n)
	}
}

// TestRedirectDropsBoundHeaders: a redirect to another origin carries none of the headers the
// definition or the metadata set (a resolved secret among them), nor Authorization or Cookie; the
// call's own headers go on. A redirect within the origin keeps them all.
func TestRedirectDropsBoundHeaders(t *testing.T) {
	var port string
	mux := http.NewServeMux()
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://api.test:"+port+"/land", http.StatusFound) // another host: another origin
	})
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/land", http.StatusFound) })
	mux.HandleFunc("/land", echo)
	e := newEnv(t, mux)
	port = e.srv.URL[strings.LastIndex(e.srv.URL, ":")+1:]
	in := apicall.Input{
		Call:      map[string]any{"headers": map[string]any{"X-Call": "call"}},
		MetaArgs:  map[string]any{"headers": map[string]any{"X-Args": "args"}},
		MetaSetup: map[string]any{"headers": map[string]any{"X-Setup": "setup-secret"}, "cookies": map[string]any{"sid": "cookie-secret"}},
	}
	bound := []string{"X-Api-Key", "Authorization", "X-Args", "X-Setup", "Cookie"}
	tests := []struct {
		path string
		keep bool
	}{{"/away", false}, {"/same", true}}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			d := e.def("GET", tt.path)
			d.FollowRedirects = ptr(true)
			d.Headers = map[string]string{"X-Api-Key": "def-secret", "Authorization": "Bearer def-secret"}
			seen := echoed(t, e, d, in)
			if seen["path"] != "/land" {
				t.Fatalf("the redirect was not followed: %v", seen)
			}
			for _, h := range bound {
				if got := header(seen, h); (got != "") != tt.keep {
					t.Errorf("%s = %q after the redirect to %s, want kept: %v", h, got, tt.path, tt.keep)
				}
			}
			if got := header(seen, "X-Call"); got != "call" {
				t.Errorf("the call's own header X-Call = %q, want it kept", got)
			}
		})
	}
}

// TestTimeouts: the call's own timeout gives Timeout; so does the caller's deadline, told apart.
// Nothing here asserts wall-clock time: the server holds each request until the client gives up.
func TestTimeouts(t *testing.T) {
	release := make(chan struct{})
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release) })

	t.Run("the call's timeout", func(t *testing.T) {
		_, err := e.ex.Execute(t.Context(), e.def("GET", "/slow"), apicall.Input{Call: map[string]any{"timeout": 0.05}})
		if !fault.Is(err, fault.Timeout) || !strings.Contains(fault.Message(err), "did not finish within its timeout of 50ms") {
			t.Fatalf("err = %v (kind %s), want Timeout", err, fault.KindOf(err))
		}
	})
	t.Run("the definition's timeout", func(t *testing.T) {
		d := e.def("GET", "/slow")
		d.Timeout = ptr(1)
		_, err := e.ex.Execute(t.Context(), d, apicall.Input{MetaArgs: map[string]any{"timeout": 0.05}})
		if !fault.Is(err, fault.Timeout) || !strings.Contains(fault.Message(err), "timeout of 50ms") {
			t.Fatalf("err = %v, want Timeout of the metadata's 50ms", err)
		}
	})
	t.Run("while reading the body", func(t *testing.T) {
		_, err := e.ex.Execute(t.Context(), e.def("GET", "/slow-body"), apicall.Input{Call: map[string]any{"timeout": 0.05}})
		if !fault.Is(err, fault.Timeout) {
			t.Fatalf("err = %v (kind %s), want Timeout", err, fault.KindOf(err))
		}
	})
	t.Run("the caller's deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := e.ex.Execute(ctx, e.def("GET", "/slow"), apicall.Input{})
		if !fault.Is(err, fault.Timeout) || !strings.Contains(fault.Message(err), "caller's time budget") {
			t.Fatalf("err = %v (kind %s), want Timeout of the caller's budget", err, fault.KindOf(err))
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := e.ex.Execute(ctx, e.def("GET", "/slow"), apicall.Input{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestSizeCap(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") != "" {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.(http.Flusher).Flush() // no Content-Length: the reader must stop at the cap itself
		} else {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		chunk := strings.Repeat("x", 4096)
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write([]byte(chunk[:k])); err != nil {
				return
			}
			n -= k
		}
	}), apicall.WithMaxResponseBytes(1000))
	full := newEnv(t, e.srv.Config.Handler)

	tests := []struct {
		name string
		env  *env
		n    int
		q    string
		ok   bool
	}{
		{"at the cap", e, 1000, "", true},
		{"over the cap (Content-Length)", e, 1001, "", false},
		{"over the cap (chunked)", e, 5000, "&chunked=1", false},
		{"at the cap (chunked)", e, 1000, "&chunked=1", true},
		{"2 MiB default cap", full, apicall.MaxResponseBytes, "", true},
		{"over the 2 MiB default cap", full, apicall.MaxResponseBytes + 1, "&chunked=1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.env.def("GET", "/big?n="+strconv.Itoa(tt.n)+tt.q)
			d.IncludeResponseContent = ptr(false)
			res, err := tt.env.ex.Execute(t.Context(), d, apicall.Input{})
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				if res.StatusCode != 200 {
					t.Errorf("status %d", res.StatusCode)
				}
				return
			}
			if !fault.Is(err, fault.TooLarge) || !strings.Contains(fault.Message(err), "larger than the") {
				t.Fatalf("err = %v (kind %s), want TooLarge", err, fault.KindOf(err))
			}
		})
	}
}

func TestStatusClassification(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if code >= 300 && code < 400 {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(code)
		if code != 204 && code != 304 {
			fmt.Fprintf(w, "body of %d: %s", code, strings.Repeat("é", 600))
		}
	}))
	tests := []struct {
		code int
		kind fault.Kind // "" for a result
	}{
		{200, ""}, {201, ""}, {204, ""}, {301, ""}, {302, ""}, {304, ""}, {307, ""},
		{400, fault.Provider}, {401, fault.Provider}, {403, fault.Provider}, {404, fault.Provider},
		{409, fault.Provider}, {418, fault.Provider}, {422, fault.Provider}, {501, fault.Provider}, {505, fault.Provider},
		{408, fault.Transient}, {429, fault.Transient}, {500, fault.Transient}, {502, fault.Transient},
		{503, fault.Transient}, {504, fault.Transient}, {524, fault.Transient},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			res, err := e.ex.Execute(t.Context(), e.def("GET", "/"+strconv.Itoa(tt.code)), apicall.Input{})
			if tt.kind == "" {
				if err != nil || res.StatusCode != tt.code {
					t.Fatalf("got %v, %v; want a result with status %d", res, err, tt.code)
				}
				return
			}
			if !fault.Is(err, tt.kind) {
				t.Fatalf("err = %v (kind %s), want %s", err, fault.KindOf(err), tt.kind)
			}
			var se *apicall.StatusError
			if !errors.As(err, &se) || se.StatusCode != tt.code {
				t.Fatalf("err = %v, want a StatusError with %d", err, tt.code)
			}
			want := fmt.Sprintf("body of %d: ", tt.code)
			want += strings.Repeat("é", 500-utf8.RuneCountInString(want))
			if se.Body != want {
				t.Errorf("body kept = %d chars, want the first 500", utf8.RuneCountInString(se.Body))
			}
			msg := fault.Message(err)
			if !strings.Contains(msg, "answered "+strconv.Itoa(tt.code)) || !strings.HasSuffix(msg, want) {
				t.Errorf("message %q, want the status and the first 500 characters", msg[:min(len(msg), 120)])
			}
		})
	}
}

func TestConnectionErrorsAreTransient(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	trip, _ := netguardtest.Tripwire(t)
	guard := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(closed)), netguard.WithResolver(netguardtest.Resolver()), trip)
	ex := apicall.New(guard)

	// A server that resets the connection after reading the request.
	rst, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rst.Close() })
	go func() {
		for {
			c, err := rst.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 1024)
			_, _ = c.Read(buf)
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	guardRST := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(rst.Addr().String())), trip)
	exRST := apicall.New(guardRST)

	for _, tt := range []struct {
		name string
		ex   *apicall.Executor
		url  string
		msg  string
	}{
		{"connection refused", ex, "http://" + closed + "/", "could not connect"},
		{"DNS failure", ex, "http://nowhere.test/", "could not resolve nowhere.test"},
		{"connection reset", exRST, "http://" + rst.Addr().String() + "/", "failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.ex.Execute(t.Context(), &tool.APICallDef{Method: "GET", URL: tt.url}, apicall.Input{})
			if !fault.Is(err, fault.Transient) || !strings.Contains(fault.Message(err), tt.msg) {
				t.Fatalf("err = %v (kind %s), want Transient mentioning %q", err, fault.KindOf(err), tt.msg)
			}
		})
	}
}
