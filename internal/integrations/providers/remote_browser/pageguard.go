package remotebrowser

import (
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"sinew/internal/fault"
	"sinew/internal/netguard"
)

// pageGuard decides what the browser may load while sinew is connected to it: the same network
// guard as every outgoing connection of sinew (no loopback, private, link-local or metadata
// address unless the operator allows it), and only http, https, data: and blob: URLs (no file:,
// chrome:, view-source: ...). The browser runs elsewhere and resolves names itself, so this is what
// a CDP client can enforce, not a confinement: the browser's own network must keep it from
// internal addresses (see the README).
type pageGuard struct {
	guard *netguard.Policy
	mu    sync.Mutex
	seen  map[string]error // host:port → the guard's decision, for this call
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
	case "data", "blob":
		return nil // made by the page itself; they read nothing of the browser's host
	case "about":
		if u.Opaque == "blank" {
			return nil
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
// domain, https://chromedevtools.github.io/devtools-protocol/tot/Fetch/, enabled on the browser
// target so that it covers every page and frame, out-of-process frames included): navigations,
// redirects, frames and subresources alike. A refused request fails as blocked by the client.
// ctx is a browser context (chromedp.NewContext on the allocator).
func (p *pageGuard) intercept(ctx context.Context) error {
	c := chromedp.FromContext(ctx)
	paused := chromedp.BrowserEvents(ctx, fetch.RequestPaused) // subscribed before Fetch is enabled
	if c == nil || c.Browser == nil {
		return errors.New("no browser connection")
	}
	go func() {
		for e, err := range paused {
			if err != nil {
				return
			}
			go p.decide(ctx, c.Browser, e)
		}
	}()
	_, err := cdp.Call(ctx, c.Browser, fetch.Enable, fetch.EnableParams{})
	return err
}

// decide lets a paused request go on, or fails it as blocked by the client.
func (p *pageGuard) decide(ctx context.Context, b cdp.Session, e fetch.EventRequestPaused) {
	if e.Request == nil || p.check(ctx, e.Request.URL) != nil {
		_, _ = cdp.Call(ctx, b, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		return
	}
	_, _ = cdp.Call(ctx, b, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
}

// checkPage refuses to act on a page whose address the guard refuses (reached between calls, when
// no interception runs, by the page's own script or a link): only navigate may take it elsewhere.
func (p *pageGuard) checkPage(ctx context.Context) error {
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return err
	}
	if err := p.check(ctx, loc); err != nil {
		return fault.New(fault.Forbidden, "the page is at an address sinew may not show (%s); navigate to another page first", fault.Message(err))
	}
	return nil
}
