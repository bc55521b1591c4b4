package remotebrowser_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
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

// TestNoActionOnARefusedPage: a page whose own script, after the call that loaded it (between calls
// nothing intercepts), shows an internal address's document gets no screenshot, click or key from
// sinew: only navigate may take it elsewhere. The document may be the page itself, one of its
// frames (in the page's process or, under another site's name, in its own), or one that carries
// the internal origin under another scheme: a blob: URL the internal page made of itself, or
// about:blank filled by it.
func TestNoActionOnARefusedPage(t *testing.T) {
	s := newSites(t, chromium.Start(t))
	const later = 2000 // ms: after the call that set the script off has settled and left
	s.set("internal:/blob", `<script>location = URL.createObjectURL(new Blob(["<p>internal secret</p>"], {type: "text/html"}))</script>`)
	s.set("internal:/writer", `<script>
const w = window.open("about:blank", "pop");
const put = () => { try { w.document.body.innerHTML = "<p>internal secret</p>"; fetch("{site}/event", {method: "POST", mode: "no-cors", body: "written"}); } catch (e) { setTimeout(put, 50); } };
put();</script>`)
	full := `style="position:fixed;inset:0;width:100%;height:100%"`
	internal, byName := s.internal.URL, s.fill("{internal-by-name}")
	frameAt := func(t *testing.T, prefix string) bool {
		for _, frames := range s.frames(t) {
			if slices.ContainsFunc(frames, func(f frame) bool { return strings.HasPrefix(f.URL, prefix) }) {
				return true
			}
		}
		return false
	}
	tests := []struct {
		name  string
		page  string
		click bool                  // a click opens a window and sets the script off in the tab
		moved func(*testing.T) bool // the browser, asked directly, shows the script done
	}{
		{"the internal address", `<script>setTimeout(() => { location = "{internal}/secret"; }, later)</script>`, false,
			func(t *testing.T) bool { return s.targetAt(t, "page", internal) }},
		{"a frame of it", `<script>setTimeout(() => { const f = document.createElement("iframe"); f.src = "{internal}/secret"; document.body.append(f); }, later)</script>`, false,
			func(t *testing.T) bool { return frameAt(t, internal) }},
		{"a frame of it in a process of its own", `<script>setTimeout(() => { const f = document.createElement("iframe"); f.src = "{internal-by-name}/secret"; document.body.append(f); }, later)</script>`, false,
			func(t *testing.T) bool { return s.targetAt(t, "iframe", byName) }},
		{"a blob: of its origin", `<script>setTimeout(() => { location = "{internal}/blob"; }, later)</script>`, false,
			func(t *testing.T) bool { return s.targetAt(t, "page", "blob:"+internal) }},
		{"about:blank filled by it", `<button ` + full + ` onclick="window.open('about:blank', 'pop'); setTimeout(() => { location = '{internal}/writer'; }, later)">open</button>`, true,
			func(t *testing.T) bool { return slices.Contains(s.wait("written", 0), "written") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.reset(t)
			s.set("/", strings.ReplaceAll("<html><body>"+tc.page+"</body></html>", "later", strconv.Itoa(later)))
			if _, err := s.do(remotebrowser.ActionNavigate, s.site.URL+"/"); err != nil {
				t.Fatal(err)
			}
			if tc.click {
				if _, err := s.do(remotebrowser.ActionLeftClick, ""); err != nil {
					t.Fatal(err)
				}
			}
			// No call until the script is done: a call's interception would stop it.
			for deadline := time.Now().Add(20 * time.Second); !tc.moved(t); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the page's script never got there: %+v", s.frames(t))
				}
			}
			if tc.click {
				s.closePagesAt(t, internal) // the written window is then the tool's page
			}
			_, err := s.do(remotebrowser.ActionScreenshot, "")
			if !fault.Is(err, fault.Forbidden) || !strings.Contains(fault.Message(err), "navigate to another page") {
				t.Fatalf("screenshot of a page that shows an internal address: err = %v, want Forbidden (%+v)", err, s.frames(t))
			}
			if _, err := s.do(remotebrowser.ActionNavigate, s.site.URL+"/"); err != nil {
				t.Fatalf("navigate away from the refused page: %v", err)
			}
		})
	}
}

// TestBrowserShowsNoRefusedScheme takes the browser, every way a page can while sinew is
// connected, to URLs of schemes that read the browser's own host or another origin (file:,
// chrome:, view-source:, devtools:, about: pages, javascript:, blob: and filesystem: of the internal
// origin) or to a data: document that loads the internal address: navigate refuses them outright;
// a redirect, a link, a window opened by a click and a frame must leave no page or frame showing
// them, and nothing may reach the internal address.
func TestBrowserShowsNoRefusedScheme(t *testing.T) {
	s := newSites(t, chromium.Start(t))
	schemes := []string{
		"file:///etc/passwd",
		"chrome://version/",
		"chrome-extension://aapocclcgogkmnckokdopfmhonfmgoek/manifest.json",
		"view-source:{internal}/",
		"devtools://devtools/bundled/inspector.html",
		"about:version",
		"data:text/html,<p>data</p><img src='{internal}/data-img'><iframe src='{internal}/data-frame'></iframe>",
		"javascript:fetch('{internal}/javascript');void 0",
		"blob:{internal}/6a3e1f4e-6a0e-4d8e-9d9a-1d2c3b4a5f60",
		"filesystem:{internal}/temporary/x",
	}
	full := `style="position:fixed;inset:0;width:100%;height:100%;display:block"`
	routes := []struct {
		name  string
		page  string // the site's page at /route, given the URL as {to} (HTML-escaped)
		click bool
	}{
		{"a redirect", "", false},
		{"a link", `<a ` + full + ` href="{to}">go</a>`, true},
		{"a window opened by a click", `<button ` + full + ` data-to="{to}" onclick="window.open(this.dataset.to)">open</button>`, true},
		{"a frame", `<iframe src="{to}"></iframe>`, false},
	}
	for _, raw := range schemes {
		to := s.fill(raw)
		t.Run("navigate to "+raw, func(t *testing.T) {
			if _, err := s.do(remotebrowser.ActionNavigate, to); !fault.Is(err, fault.InvalidInput) {
				t.Fatalf("err = %v (kind %s), want InvalidInput", err, fault.KindOf(err))
			}
		})
		for _, r := range routes {
			t.Run(r.name+" to "+raw, func(t *testing.T) {
				s.reset(t)
				start := s.site.URL + "/redirect?to=" + url.QueryEscape(to)
				if r.page != "" {
					s.set("/route", "<html><body>"+strings.ReplaceAll(r.page, "{to}", html.EscapeString(to))+"</body></html>")
					start = s.site.URL + "/route"
				}
				_, _ = s.do(remotebrowser.ActionNavigate, start) // a refused redirect fails the navigation
				if r.click {
					if _, err := s.do(remotebrowser.ActionLeftClick, ""); err != nil {
						t.Fatalf("left_click: %v", err)
					}
				}
				time.Sleep(150 * time.Millisecond) // for a late request to land, should one be let through
				if n := s.hits.Load(); n != 0 {
					t.Fatalf("the browser's requests reached the internal address %d time(s)", n)
				}
				// What the browser itself lets a page show (an about: page in a frame, say) sinew
				// must not show in turn: on that page, alone, it refuses to act.
				if id, f := s.shown(t); id != "" {
					s.closePagesBut(t, id)
					if _, err := s.do(remotebrowser.ActionScreenshot, ""); !fault.Is(err, fault.Forbidden) {
						t.Fatalf("a frame shows %s (origin %s), and a screenshot of its page gives err = %v, want Forbidden", f.URL, f.SecurityOrigin, err)
					}
				}
			})
		}
	}
}
