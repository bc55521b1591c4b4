package remotebrowser

import (
	"context"
	"errors"
	"iter"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"sinew/internal/fault"
	"sinew/internal/netguard"
)

// pageGuard decides what the browser may load while sinew is connected to it: the same network
// guard as every outgoing connection of sinew (no loopback, private, link-local or metadata
// address unless the operator allows it), and only http, https, data:, blob: of a permitted origin
// and about:blank URLs (no file:, chrome:, view-source:, javascript: ...). The browser runs
// elsewhere and resolves names itself, so this is what a CDP client can enforce, not a
// confinement: the browser's own network must keep it from internal addresses
// (internal/sandbox/README.md).
type pageGuard struct {
	guard *netguard.Policy
	mu    sync.Mutex
	seen  map[string]error // host:port → the guard's decision, for this call

	downloads []string  // suggested names of the downloads denied during this call
	activity  time.Time // when the browser last asked about a request or began a download
}

func newPageGuard(g *netguard.Policy) *pageGuard {
	return &pageGuard{guard: g, seen: map[string]error{}}
}

// check is nil when the browser may load raw, else a fault.Forbidden saying why.
func (p *pageGuard) check(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fault.New(fault.Forbidden, "refused: the browser may load only http and https URLs, got an unreadable URL")
	}
	switch u.Scheme {
	case "data":
		return nil // made by the page itself, with an opaque origin; it reads nothing of the browser's host
	case "blob":
		// blob:ORIGIN/UUID holds what a document of ORIGIN made: judged as that origin.
		if inner, err := url.Parse(u.Opaque); err == nil && (inner.Scheme == "http" || inner.Scheme == "https") {
			return p.checkHost(ctx, inner)
		}
		if strings.HasPrefix(u.Opaque, "null/") {
			return nil // made by an opaque origin
		}
	case "about":
		if u.Opaque == "blank" || u.Opaque == "srcdoc" {
			return nil // what the frame's creator wrote there: checkFrame judges it by its origin
		}
	case "http", "https":
		return p.checkHost(ctx, u)
	}
	return fault.New(fault.Forbidden, "refused: the browser may load only http and https URLs, not %s: URLs", u.Scheme)
}

// checkHost asks the guard about the URL's host and port, by dialing it through the guard (which
// resolves the name with its own resolver): a refusal is the answer; a connection that fails for
// another reason is the browser's business.
func (p *pageGuard) checkHost(ctx context.Context, u *url.URL) error {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	p.mu.Lock()
	err, ok := p.seen[addr]
	p.mu.Unlock()
	if ok {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := p.guard.DialContext(dctx, "tcp", addr)
	if conn != nil {
		_ = conn.Close()
	}
	if !errors.Is(err, netguard.ErrRefused) {
		err = nil
	}
	p.mu.Lock()
	p.seen[addr] = err
	p.mu.Unlock()
	return err
}

// intercept makes the browser ask before each request while this call is connected (CDP's Fetch
// domain, enabled on the browser target for the documents that load during the call, out-of-process
// frames included): navigations, redirects, frames and subresources alike. A refused request fails
// as blocked by the client. What that misses (documents loaded before the call, workers' own
// requests, WebSockets) the side's sessions cover: the browser attaches every target to them,
// paused until it is set up. Downloads are denied outright, and noted for the call's answer. ctx is
// a browser context (chromedp.NewContext on the allocator).
func (p *pageGuard) intercept(ctx context.Context) error {
	// Subscribed before the domains are enabled, so that no event is missed (the first
	// subscription also connects chromedp to the browser).
	paused := chromedp.BrowserEvents(ctx, fetch.RequestPaused)
	begun := chromedp.BrowserEvents(ctx, browser.DownloadWillBegin)
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil {
		return errors.New("no browser connection")
	}
	go each(paused, func(e fetch.EventRequestPaused) { go p.decide(ctx, c.Browser, &e) })
	go each(begun, p.downloadBegun)
	events := true
	if _, err := cdp.Call(ctx, c.Browser, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny, EventsEnabled: &events}); err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, c.Browser, fetch.Enable, fetch.EnableParams{}); err != nil {
		return err
	}
	flat := true
	_, err := cdp.Call(ctx, c.Browser, target.SetAutoAttach, target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: &flat, Filter: topFilter})
	return err
}

// topFilter attaches every page, worker and service worker: every target but the browser itself,
// its tabs (whose pages are attached as pages) and its own UI.
var topFilter = target.Filter{{Type: "browser", Exclude: true}, {Type: "tab", Exclude: true}, {Type: "browser_ui", Exclude: true}, {}}

func each[E any](events iter.Seq2[E, error], f func(E)) {
	for e, err := range events {
		if err != nil {
			return
		}
		f(e)
	}
}

// caller sends a command on a CDP session: chromedp's browser, or one of the side's sessions.
type caller interface {
	Call(ctx context.Context, method string, params, res any) error
}

// decide lets a paused request go on, or fails it as blocked by the client.
func (p *pageGuard) decide(ctx context.Context, s caller, e *fetch.EventRequestPaused) {
	p.touch()
	if e.Request == nil || p.check(ctx, e.Request.URL) != nil {
		_ = s.Call(ctx, fetch.CommandFailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient}, nil)
		return
	}
	_ = s.Call(ctx, fetch.CommandContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID}, nil)
}

func (p *pageGuard) touch() {
	p.mu.Lock()
	p.activity = time.Now()
	p.mu.Unlock()
}

// downloadBegun notes a download that the browser began, and denies (the behaviour that intercept
// set): it saves nothing.
func (p *pageGuard) downloadBegun(e browser.EventDownloadWillBegin) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.activity = time.Now()
	p.downloads = append(p.downloads, e.SuggestedFilename)
}

// refusedDownloads names the downloads that the browser began, and was denied, during this call.
func (p *pageGuard) refusedDownloads() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.downloads)
}

// settle waits, after an action, until the browser has asked about no request and begun no
// download for quiet, for at most limit: what the action started (a navigation, a download) is then
// decided while sinew is connected and denying downloads, rather than after it leaves.
func (p *pageGuard) settle(ctx context.Context, quiet, limit time.Duration) {
	p.touch()
	deadline := time.Now().Add(limit)
	for {
		p.mu.Lock()
		wait := quiet - time.Since(p.activity)
		p.mu.Unlock()
		if wait <= 0 || !time.Now().Before(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(min(wait, time.Until(deadline))):
		}
	}
}

// checkPage refuses to act on a page that shows anything from an address the guard refuses
// (reached between calls, when no interception runs, by the page's own script or a link): its own
// document or any frame's, in its process or out of it (the iframe targets among targets below
// the page, id). Only navigate may take such a page elsewhere.
func (p *pageGuard) checkPage(ctx context.Context, id target.ID, targets []*target.Info) error {
	refused := func(err error) error {
		return fault.New(fault.Forbidden, "the page shows an address sinew may not show (%s); navigate to another page first", fault.Message(err))
	}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return err
	}
	for frames := []*page.FrameTree{tree.FrameTree}; len(frames) > 0; frames = frames[1:] {
		if f := frames[0]; f != nil && f.Frame != nil {
			frames = append(frames, f.ChildFrames...)
			if err := p.checkFrame(ctx, f.Frame); err != nil {
				return refused(err)
			}
		}
	}
	below := map[target.ID]bool{id: true}
	for grew := true; grew; { // frames of frames, whatever the order of targets
		grew = false
		for _, t := range targets {
			if t.Type == "iframe" && below[t.ParentID] && !below[t.TargetID] {
				below[t.TargetID], grew = true, true
				if err := p.check(ctx, t.URL); err != nil {
					return refused(err)
				}
			}
		}
	}
	return nil
}

// checkFrame judges one frame's document. A frame whose load failed shows the browser's error page.
// about:blank, about:srcdoc and a frame that never loaded (no URL: its initial empty document) hold
// what their creator wrote, so they are judged by the origin that the document has, which the
// browser's frame tree does not tell (it names the URL's).
func (p *pageGuard) checkFrame(ctx context.Context, f *cdp.Frame) error {
	switch f.URL {
	case "", "about:blank", "about:srcdoc":
	default:
		if f.UnreachableURL != "" {
			return nil
		}
		return p.check(ctx, f.URL+f.URLFragment)
	}
	origin, err := frameOrigin(ctx, f.ID)
	if err != nil {
		return err
	}
	if o, err := url.Parse(origin); err == nil && (o.Scheme == "http" || o.Scheme == "https") {
		return p.checkHost(ctx, o)
	}
	return nil
}

// frameOrigin asks the frame's document for its origin, in a world of sinew's own, where the
// page's scripts cannot answer in its stead.
func frameOrigin(ctx context.Context, id cdp.FrameID) (string, error) {
	w, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: id, WorldName: "sinew"})
	if err != nil {
		return "", err
	}
	byValue := true
	r, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "self.origin", ContextID: w.ExecutionContextID, ReturnByValue: &byValue})
	if err != nil {
		return "", err
	}
	var origin string
	if r.Result == nil || jsonv2.Unmarshal(r.Result.Value, &origin) != nil {
		return "", errors.New("the frame did not tell its origin")
	}
	return origin, nil
}
