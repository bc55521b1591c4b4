package netguard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
)

// newPolicy is netguard.New with the refusal log lines silenced.
func newPolicy(opts ...netguard.Option) *netguard.Policy {
	return netguard.New(append(opts, netguard.WithLogger(slog.New(slog.DiscardHandler)))...)
}

// server starts a loopback HTTP server and gives an allowlist entry for exactly its host:port.
func server(t *testing.T, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

func get(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	return resp, err
}

// TestSSRFTable dials every SSRF target through a guarded client: each must be refused as
// Forbidden with a message naming the address and why, before any connection is made.
func TestSSRFTable(t *testing.T) {
	canary := netguardtest.NewCanary(t)
	trip, passed := netguardtest.Tripwire(t)
	p := newPolicy(netguard.WithResolver(netguardtest.Resolver()), trip)
	client := netguard.NewClient(p.NewTransport(), 5)
	targets := netguardtest.Targets(canary)
	if len(targets) < 30 {
		t.Fatalf("the SSRF table has %d rows, want at least 30", len(targets))
	}
	for _, tt := range targets {
		t.Run(tt.Name, func(t *testing.T) {
			before := passed.Load()
			_, err := get(t.Context(), client, tt.URL)
			if !fault.Is(err, fault.Forbidden) || !errors.Is(err, netguard.ErrRefused) {
				t.Fatalf("GET %s: err = %v (kind %s), want a Forbidden refusal", tt.URL, err, fault.KindOf(err))
			}
			msg := fault.Message(err)
			if !strings.HasPrefix(msg, "refused: ") || !strings.Contains(msg, tt.Want) {
				t.Errorf("message %q, want a refusal mentioning %q", msg, tt.Want)
			}
			if n := passed.Load() - before; n != 0 {
				t.Errorf("%d connection attempts got past the guard", n)
			}
		})
	}
	if n := canary.Accepted(); n != 0 {
		t.Errorf("the canary listeners accepted %d connections, want 0", n)
	}
}

func TestAllowlistReachesLoopbackServer(t *testing.T) {
	_, hostport := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	port := hostport[strings.LastIndex(hostport, ":")+1:]
	tests := []struct {
		name  string
		allow string
		url   string
		ok    bool
	}{
		{"no allowlist", "", "http://" + hostport + "/", false},
		{"host:port entry", hostport, "http://" + hostport + "/", true},
		{"host:port entry, other port", "127.0.0.1:1", "http://" + hostport + "/", false},
		{"cidr entry", "127.0.0.0/8", "http://" + hostport + "/", true},
		{"ip entry", "127.0.0.1", "http://" + hostport + "/", true},
		{"name entry", "evil.test:" + port, "http://evil.test:" + port + "/", true},
		{"name entry does not allow the IP", "evil.test:" + port, "http://" + hostport + "/", false},
		{"ip entry matches a decimal form", hostport, "http://2130706433:" + port + "/", true},
		// A loopback name resolves to loopback without the resolver (netguardtest.Resolver knows none).
		{"localhost by its ip entry", hostport, "http://localhost:" + port + "/", true},
		{"localhost. by a name entry", "localhost:" + port, "http://localhost.:" + port + "/", true},
		{"localhost without an entry", "", "http://localhost.:" + port + "/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trip, passed := netguardtest.Tripwire(t)
			p := newPolicy(netguard.WithAllowlist(netguard.MustParseAllowlist(tt.allow)),
				netguard.WithResolver(netguardtest.Resolver()), trip)
			resp, err := get(t.Context(), netguard.NewClient(p.NewTransport(), 0), tt.url)
			if tt.ok {
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("GET %s: %v", tt.url, err)
				}
				if passed.Load() == 0 {
					t.Error("the Control hook never ran")
				}
				return
			}
			if !fault.Is(err, fault.Forbidden) {
				t.Fatalf("GET %s: err = %v, want Forbidden", tt.url, err)
			}
		})
	}
}

// askedResolver answers as DNS does for a name it does not know, and records every name asked.
type askedResolver struct{ asked []string }

func (r *askedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.asked = append(r.asked, host)
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestLoopbackNamesRefusedByName: every spelling of a loopback name is refused as loopback, like
// localhost, without asking a resolver; a DNS answer of "no such host" for localhost. would be a
// Transient error, retried.
func TestLoopbackNamesRefusedByName(t *testing.T) {
	for _, host := range []string{"localhost", "localhost.", "LOCALHOST", "LocalHost.", "localhost..", "foo.localhost",
		"a.b.LOCALHOST.", "ip6-localhost", "ip6-loopback", "localhost.localdomain", "localhost6", "localhost4.localdomain4"} {
		for _, network := range []string{"tcp", "tcp4", "tcp6"} {
			res := &askedResolver{}
			trip, passed := netguardtest.Tripwire(t)
			p := newPolicy(netguard.WithResolver(res), trip)
			_, err := p.DialContext(t.Context(), network, net.JoinHostPort(host, "80"))
			if !fault.Is(err, fault.Forbidden) || !strings.Contains(fault.Message(err), "a loopback address") {
				t.Errorf("%s %s: err = %v (kind %s), want a loopback refusal", network, host, err, fault.KindOf(err))
			}
			if len(res.asked) != 0 || passed.Load() != 0 {
				t.Errorf("%s %s: the resolver was asked %v and %d connections passed", network, host, res.asked, passed.Load())
			}
		}
		if !netguard.IsLoopbackName(host) {
			t.Errorf("IsLoopbackName(%q) = false", host)
		}
	}
	for _, host := range []string{"localhost.example.com", "notlocalhost", "localhostx", "example.com"} {
		if netguard.IsLoopbackName(host) {
			t.Errorf("IsLoopbackName(%q) = true", host)
		}
	}
}

func TestRedirects(t *testing.T) {
	canary := netguardtest.NewCanary(t)
	var hops atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/chain/{n}", func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			fmt.Fprint(w, "end")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/chain/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/to-canary", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+canary.V4.Addr.String()+"/", http.StatusFound)
	})
	mux.HandleFunc("/to-metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("/to-evil-name", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("http://evil.test:%d/", canary.V4.Addr.Port()), http.StatusMovedPermanently)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///proc/self/environ", http.StatusFound)
	})
	srv, hostport := server(t, mux)

	tests := []struct {
		name     string
		path     string
		max      int
		status   int
		hops     int64
		wantKind fault.Kind
		wantMsg  string
	}{
		{"not followed", "/chain/2", 0, http.StatusFound, 1, "", ""},
		{"followed", "/chain/3", 5, 200, 4, "", ""},
		{"exactly the bound", "/chain/5", 5, 200, 6, "", ""},
		{"over the bound", "/chain/6", 5, 0, 6, "too many", "stopped after 5 redirects"},
		{"to a loopback canary", "/to-canary", 5, 0, 0, fault.Forbidden, canary.V4.Addr.Addr().String() + " is a loopback address"},
		{"to the metadata address", "/to-metadata", 5, 0, 0, fault.Forbidden, "169.254.169.254 is the cloud metadata address"},
		{"to a name for loopback", "/to-evil-name", 5, 0, 0, fault.Forbidden, "evil.test resolves to 127.0.0.1"},
		{"to a file URL", "/to-file", 5, 0, 0, fault.Forbidden, `a "file" URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hops.Store(0)
			trip, _ := netguardtest.Tripwire(t)
			p := newPolicy(netguard.WithAllowlist(netguard.MustParseAllowlist(hostport)),
				netguard.WithResolver(netguardtest.Resolver()), trip)
			resp, err := get(t.Context(), netguard.NewClient(p.NewTransport(), tt.max), srv.URL+tt.path)
			switch {
			case tt.wantKind == "too many":
				var tm *netguard.TooManyRedirectsError
				if !errors.As(err, &tm) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("err = %v, want too many redirects", err)
				}
			case tt.wantKind != "":
				if !fault.Is(err, tt.wantKind) || !strings.Contains(fault.Message(err), tt.wantMsg) {
					t.Fatalf("err = %v, want %s mentioning %q", err, tt.wantKind, tt.wantMsg)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != tt.status {
					t.Errorf("status = %d, want %d", resp.StatusCode, tt.status)
				}
			}
			if tt.hops != 0 && hops.Load() != tt.hops {
				t.Errorf("the server saw %d requests, want %d", hops.Load(), tt.hops)
			}
		})
	}
	if n := canary.Accepted(); n != 0 {
		t.Errorf("the canary accepted %d connections, want 0", n)
	}
}

func TestDialErrorsAreTyped(t *testing.T) {
	// A port nobody listens on: bind one, note it, close it.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()

	trip, _ := netguardtest.Tripwire(t)
	p := newPolicy(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.0/8")),
		netguard.WithResolver(netguardtest.Resolver()), trip)
	tests := []struct {
		name    string
		network string
		address string
		kind    fault.Kind
		msg     string
	}{
		{"connection refused", "tcp", closed, fault.Transient, "could not connect to " + closed},
		{"unknown name", "tcp", "nowhere.test:80", fault.Transient, "could not resolve nowhere.test"},
		{"udp", "udp", "8.8.8.8:53", fault.Forbidden, `network "udp" is not TCP`},
		{"bad address", "tcp", "no-port", fault.InvalidInput, "invalid address"},
		{"refused before resolving", "tcp", "10.0.0.1:80", fault.Forbidden, "10.0.0.1 is a private address (RFC 1918); an operator may allow it with SINEW_APICALL_ALLOW"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := p.DialContext(t.Context(), tt.network, tt.address)
			if err == nil {
				_ = conn.Close()
				t.Fatal("dial succeeded")
			}
			if !fault.Is(err, tt.kind) || !strings.Contains(fault.Message(err), tt.msg) {
				t.Fatalf("err = %v (kind %s), want %s mentioning %q", err, fault.KindOf(err), tt.kind, tt.msg)
			}
		})
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.DialContext(ctx, "tcp", closed); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: err = %v, want context.Canceled", err)
	}
}

// TestCheckIsTheDecision shows the pure decision for public and refused targets, with no dialing.
func TestCheckIsTheDecision(t *testing.T) {
	p := newPolicy(netguard.WithAllowlist(netguard.MustParseAllowlist("10.9.0.0/16,db.internal:5432")))
	tests := []struct {
		host string
		ap   string
		ok   bool
		msg  string
	}{
		{"", "8.8.8.8:443", true, ""},
		{"example.com", "93.184.215.14:80", true, ""},
		{"", "[2606:4700:4700::1111]:443", true, ""},
		{"", "10.9.1.1:80", true, ""},
		{"db.internal", "10.0.0.7:5432", true, ""},
		{"db.internal", "10.0.0.7:5433", false, "refused: db.internal resolves to 10.0.0.7, a private address (RFC 1918); an operator may allow it with SINEW_APICALL_ALLOW"},
		{"", "10.0.0.1:80", false, "refused: 10.0.0.1 is a private address (RFC 1918); an operator may allow it with SINEW_APICALL_ALLOW"},
		{"", "[fe80::1%eth0]:80", false, "refused: fe80::1 is a link-local address (fe80::/10); an operator may allow it with SINEW_APICALL_ALLOW"},
		{"2130706433", "127.0.0.1:80", false, "refused: 127.0.0.1 is a loopback address; an operator may allow it with SINEW_APICALL_ALLOW"},
		{"evil.test", "[::ffff:127.0.0.1]:80", false, "refused: evil.test resolves to ::ffff:127.0.0.1, an IPv4-mapped form of 127.0.0.1, a loopback address; an operator may allow it with SINEW_APICALL_ALLOW"},
	}
	for _, tt := range tests {
		t.Run(tt.host+" "+tt.ap, func(t *testing.T) {
			err := p.Check(tt.host, netip.MustParseAddrPort(tt.ap))
			if tt.ok {
				if err != nil {
					t.Fatalf("Check = %v, want permitted", err)
				}
				return
			}
			if !fault.Is(err, fault.Forbidden) || fault.Message(err) != tt.msg {
				t.Fatalf("Check = %q, want %q", fault.Message(err), tt.msg)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(netguard.EnvAllow, "127.0.0.1:8080, 10.0.0.0/8")
	p, err := netguard.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check("", netip.MustParseAddrPort("10.1.1.1:80")); err != nil {
		t.Errorf("10.1.1.1 should be allowed: %v", err)
	}
	if err := p.Check("", netip.MustParseAddrPort("127.0.0.1:8081")); err == nil {
		t.Error("127.0.0.1:8081 should be refused")
	}
	t.Setenv(netguard.EnvAllow, "not an entry")
	if _, err := netguard.FromEnv(); err == nil || !strings.Contains(err.Error(), netguard.EnvAllow) {
		t.Errorf("err = %v, want one naming %s", err, netguard.EnvAllow)
	}
}
