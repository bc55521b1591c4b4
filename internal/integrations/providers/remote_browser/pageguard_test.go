package remotebrowser_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/integrations/providers/remote_browser"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
	"sinew/internal/testenv/chromium"
)

// TestBrowserLoadsNoRefusedAddress points a real Chromium, through perform_action, at an internal
// address (a loopback server on a port no allowlist names) every way a caller can while sinew is
// connected: navigate to it, navigate to a page that redirects to it, a page that embeds it in an
// image and a frame, and non-http schemes. No request may reach it, and each refusal is typed.
// (Chromium may still open a TCP connection ahead of time, a preconnect, that carries no request:
// the interception sees requests, not sockets.)
func TestBrowserLoadsNoRefusedAddress(t *testing.T) {
	b := chromium.Start(t)
	var hits atomic.Int64
	internalSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "internal secret")
	}))
	t.Cleanup(internalSrv.Close)
	internal := internalSrv.URL + "/secret"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, internal, http.StatusFound)
		case "/embed":
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, `<html><body><iframe src="`+internal+`"></iframe><p>hello</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	env := browserAndSiteOnly(t, b, site)
	setup := remotebrowser.Setup{ConnectURL: b.HTTPURL}
	navigate := func(u string) (remotebrowser.PerformActionOutput, error) {
		return remotebrowser.PerformAction(context.Background(), env, setup, remotebrowser.PerformActionArguments{Action: remotebrowser.ActionNavigate, Text: &u})
	}
	tests := []struct {
		name string
		url  string
		kind fault.Kind // "" when the page loads (its parts refused inside it)
		says string
	}{
		{"the internal address itself", internal, fault.InvalidInput, "refused"},
		{"a redirect to it", site.URL + "/redirect", fault.Provider, "ERR_BLOCKED_BY_CLIENT"},
		{"an image and a frame of it", site.URL + "/embed", "", ""},
		{"a file", "file:///etc/passwd", fault.InvalidInput, "http or https"},
		{"view-source", "view-source:" + internal, fault.InvalidInput, "http or https"},
		{"chrome://", "chrome://settings", fault.InvalidInput, "http or https"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := navigate(tc.url)
			if tc.kind == "" && err != nil {
				t.Fatalf("navigate %s: %v", tc.url, err)
			}
			if tc.kind != "" && (!fault.Is(err, tc.kind) || !strings.Contains(fault.Message(err), tc.says)) {
				t.Fatalf("navigate %s: err = %v (kind %s), want %s saying %q", tc.url, err, fault.KindOf(err), tc.kind, tc.says)
			}
			// A screenshot waits for the page to settle; the internal server must still be untouched.
			if _, err := remotebrowser.PerformAction(context.Background(), env, setup, remotebrowser.PerformActionArguments{Action: remotebrowser.ActionScreenshot}); err != nil && tc.kind == "" {
				t.Fatalf("screenshot: %v", err)
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the browser's requests reached the internal address %d time(s)", n)
			}
		})
	}
}

// browserAndSiteOnly is an Env whose guard permits the browser's and the site's loopback ports only.
func browserAndSiteOnly(t *testing.T, b *chromium.Browser, site *httptest.Server) remotebrowser.Env {
	hostPort := func(raw string) string { u, _ := url.Parse(raw); return u.Host }
	trip, _ := netguardtest.Tripwire(t)
	return remotebrowser.Env{Timeout: 30 * time.Second, Guard: netguard.New(trip,
		netguard.WithAllowlist(netguard.MustParseAllowlist(hostPort(b.HTTPURL)+","+hostPort(site.URL))))}
}

// TestNoActionOnARefusedPage: a page whose own script moves to an internal address after the call
// that loaded it (between calls nothing intercepts) gets no screenshot, click or key from sinew:
// only navigate may take it elsewhere.
func TestNoActionOnARefusedPage(t *testing.T) {
	b := chromium.Start(t)
	internalSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "internal secret")
	}))
	t.Cleanup(internalSrv.Close)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<html><body><script>setTimeout(() => { location = "`+internalSrv.URL+`/secret"; }, 300)</script></body></html>`)
	}))
	t.Cleanup(site.Close)
	env := browserAndSiteOnly(t, b, site)
	setup := remotebrowser.Setup{ConnectURL: b.HTTPURL}
	ctx := context.Background()
	u := site.URL + "/"
	if _, err := remotebrowser.PerformAction(ctx, env, setup, remotebrowser.PerformActionArguments{Action: remotebrowser.ActionNavigate, Text: &u}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second) // a guard against a hang only
	for {
		_, err := remotebrowser.PerformAction(ctx, env, setup, remotebrowser.PerformActionArguments{Action: remotebrowser.ActionScreenshot})
		if fault.Is(err, fault.Forbidden) && strings.Contains(fault.Message(err), "navigate to another page") {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("screenshot of a page that moved to an internal address: err = %v, want Forbidden", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	back := site.URL + "/"
	if _, err := remotebrowser.PerformAction(ctx, env, setup, remotebrowser.PerformActionArguments{Action: remotebrowser.ActionNavigate, Text: &back}); err != nil {
		t.Fatalf("navigate away from the refused page: %v", err)
	}
}
