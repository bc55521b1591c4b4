package remotebrowser_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	remotebrowser "sinew/internal/integrations/providers/remote_browser"
	"sinew/internal/testenv/chromium"
)

// sites is a browser and two loopback servers: site, which the guard permits (as it permits the
// browser's port), and internal, on a port that no allowlist names, which counts every request that
// reaches it. Pages and scripts may say {site}, {internal}, {internal-by-name} (as localhost, another
// site, so that a frame of it runs in a process of its own) and {ws} (internal as a ws: URL).
type sites struct {
	b        *chromium.Browser
	site     *httptest.Server
	internal *httptest.Server
	env      remotebrowser.Env
	hits     atomic.Int64

	events eventLog // what the pages reported to site's /event

	mu    sync.Mutex
	pages map[string]string // site's paths
	inner map[string]string // internal's paths
}

func newSites(t *testing.T, b *chromium.Browser) *sites {
	s := &sites{b: b, pages: map[string]string{}, inner: map[string]string{}}
	s.internal = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.serve(w, r, s.inner, "internal secret")
	}))
	t.Cleanup(s.internal.Close)
	s.site = httptest.NewServer(http.HandlerFunc(s.serveSite))
	t.Cleanup(s.site.Close)
	s.env = browserAndSiteOnly(t, b, s.site)
	return s
}

// serveSite serves the pages, and: /event records the body the page posts; /hold?for=P answers
// once a reported event starts with P (a page that embeds it holds its load event, and so the
// navigate call, until its script has acted); /redirect?to=U redirects to U; /attach is a download.
func (s *sites) serveSite(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/event":
		s.events.record(r)
	case "/hold":
		s.wait(r.URL.Query().Get("for"), 10*time.Second)
		w.WriteHeader(http.StatusNoContent)
	case "/redirect":
		http.Redirect(w, r, s.fill(r.URL.Query().Get("to")), http.StatusFound)
	case "/attach":
		w.Header().Set("Content-Disposition", `attachment; filename="`+downloadName+`"`)
		_, _ = io.WriteString(w, downloadBody)
	default:
		s.serve(w, r, s.pages, "")
	}
}

// The download that the pages offer: a name and content no other file has.
const (
	downloadName = "sinew-download-canary.txt"
	downloadBody = "sinew download canary 5f1d0c"
)

func (s *sites) serve(w http.ResponseWriter, r *http.Request, pages map[string]string, fallback string) {
	s.mu.Lock()
	body, ok := pages[r.URL.Path]
	s.mu.Unlock()
	if !ok && fallback == "" {
		http.NotFound(w, r)
		return
	}
	if !ok {
		body = fallback
	}
	typ := "text/html"
	if strings.HasSuffix(r.URL.Path, ".js") {
		typ = "text/javascript"
	}
	w.Header().Set("Content-Type", typ)
	_, _ = io.WriteString(w, s.fill(body))
}

func (s *sites) fill(body string) string {
	return strings.NewReplacer("{site}", s.site.URL, "{internal}", s.internal.URL,
		"{internal-by-name}", strings.Replace(s.internal.URL, "127.0.0.1", "localhost", 1),
		"{ws}", "ws"+strings.TrimPrefix(s.internal.URL, "http")).Replace(body)
}

// set serves body at path on site, or on internal when path starts with "internal:".
func (s *sites) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := strings.CutPrefix(path, "internal:"); ok {
		s.inner[p] = body
		return
	}
	s.pages[path] = body
}

// wait waits until a reported event starts with prefix, and returns the events.
func (s *sites) wait(prefix string, limit time.Duration) []string {
	return s.events.waitFor(func(e string) bool { return strings.HasPrefix(e, prefix) }, limit)
}

// eventLog is what test pages report to their site's /event, in order.
type eventLog struct {
	mu  sync.Mutex
	evs []string
}

func (l *eventLog) record(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	l.evs = append(l.evs, string(b))
	l.mu.Unlock()
}

func (l *eventLog) clear() {
	l.mu.Lock()
	l.evs = nil
	l.mu.Unlock()
}

// waitFor waits until an event matches, for at most limit, and returns the events.
func (l *eventLog) waitFor(match func(string) bool, limit time.Duration) []string {
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		l.mu.Lock()
		evs := slices.Clone(l.evs)
		l.mu.Unlock()
		if slices.ContainsFunc(evs, match) || time.Now().After(deadline) {
			return evs
		}
	}
}

// reset forgets the events and hits, and closes the pages if an earlier case left more than one
// (windows it opened), so that the next call opens a new one.
func (s *sites) reset(t *testing.T) {
	t.Helper()
	s.events.clear()
	s.hits.Store(0)
	if len(pageIDs(t, s.b)) > 1 {
		s.closePages(t, func(string, string) bool { return true })
	}
}

// targetInfo is one of the browser's targets, as its HTTP endpoint lists them.
type targetInfo struct{ ID, Type, URL, WebSocketDebuggerURL string }

func listTargets(t *testing.T, b *chromium.Browser) []targetInfo {
	t.Helper()
	resp, err := http.Get(b.HTTPURL + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var targets []targetInfo
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		t.Fatal(err)
	}
	return targets
}

// targetAt reports whether a target of the type (page, iframe) is at a URL that starts with prefix.
func (s *sites) targetAt(t *testing.T, typ, prefix string) bool {
	t.Helper()
	return slices.ContainsFunc(listTargets(t, s.b), func(tg targetInfo) bool {
		return tg.Type == typ && strings.HasPrefix(tg.URL, prefix)
	})
}

// closePagesAt closes the pages whose URL starts with prefix.
func (s *sites) closePagesAt(t *testing.T, prefix string) {
	t.Helper()
	s.closePages(t, func(id, u string) bool { return strings.HasPrefix(u, prefix) })
}

// closePagesBut closes every page but keep.
func (s *sites) closePagesBut(t *testing.T, keep string) {
	t.Helper()
	s.closePages(t, func(id, _ string) bool { return id != keep })
}

func (s *sites) closePages(t *testing.T, close func(id, url string) bool) {
	t.Helper()
	var closed []string
	for _, tg := range listTargets(t, s.b) {
		if tg.Type == "page" && close(tg.ID, tg.URL) {
			r, err := http.Get(s.b.HTTPURL + "/json/close/" + tg.ID)
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			closed = append(closed, tg.ID)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for slices.ContainsFunc(pageIDs(t, s.b), func(id string) bool { return slices.Contains(closed, id) }) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// do performs one action through the provider.
func (s *sites) do(action, text string) (remotebrowser.PerformActionOutput, error) {
	args := remotebrowser.PerformActionArguments{Action: action}
	if text != "" {
		args.Text = &text
	}
	return remotebrowser.PerformAction(context.Background(), s.env, remotebrowser.Setup{ConnectURL: s.b.HTTPURL}, args)
}

// frame is what the browser says of one frame of a page.
type frame struct {
	URL            string `json:"url"`
	SecurityOrigin string `json:"securityOrigin"`
	UnreachableURL string `json:"unreachableUrl"`
}

// frames lists every frame of every page by page id, asking each page's own DevTools endpoint, so
// that the provider's connection is not involved.
func (s *sites) frames(t *testing.T) map[string][]frame {
	t.Helper()
	all := map[string][]frame{}
	for _, tg := range listTargets(t, s.b) {
		if tg.Type == "page" {
			all[tg.ID] = pageFrames(t, tg.WebSocketDebuggerURL)
		}
	}
	return all
}

func pageFrames(t *testing.T, wsURL string) []frame {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(wsURL, nil)
	if err != nil {
		t.Fatalf("page endpoint %s: %v", wsURL, err)
	}
	defer ws.Close()
	if err := ws.WriteJSON(map[string]any{"id": 1, "method": "Page.getFrameTree"}); err != nil {
		t.Fatal(err)
	}
	type tree struct {
		Frame       frame  `json:"frame"`
		ChildFrames []tree `json:"childFrames"`
	}
	var reply struct {
		ID     int
		Result struct{ FrameTree tree }
	}
	for reply.ID != 1 {
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := ws.ReadJSON(&reply); err != nil {
			t.Fatal(err)
		}
	}
	var out []frame
	for todo := []tree{reply.Result.FrameTree}; len(todo) > 0; todo = todo[1:] {
		out = append(out, todo[0].Frame)
		todo = append(todo, todo[0].ChildFrames...)
	}
	return out
}

// shown finds a page with a frame that shows a document it should not: of a scheme other than
// http(s), data: and about:blank/srcdoc, or of the internal server's origin. A frame whose load
// failed shows an error page, and one without a URL its initial empty document: both are fine if
// their origin is. It returns "" when every frame of every page is fine.
func (s *sites) shown(t *testing.T) (pageID string, f frame) {
	t.Helper()
	internal, _ := url.Parse(s.internal.URL)
	for id, frames := range s.frames(t) {
		for _, f := range frames {
			u, err := url.Parse(f.URL)
			ok := f.UnreachableURL != "" || f.URL == "" || f.URL == "about:blank" || f.URL == "about:srcdoc" ||
				(err == nil && (u.Scheme == "data" || ((u.Scheme == "http" || u.Scheme == "https") && u.Host != internal.Host)))
			if !ok || strings.Contains(f.SecurityOrigin, internal.Host) {
				return id, f
			}
		}
	}
	return "", frame{}
}
