package remotebrowser

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"sinew/internal/fault"
	"sinew/internal/netguard"
)

// resolveWS turns connect_url into the browser's DevTools websocket URL. A ws(s) URL naming
// /devtools/browser/ is used as it is; otherwise, as Playwright's connect_over_cdp does, the
// browser's /json/version (over http(s), through the guard) names it.
func resolveWS(ctx context.Context, guard *netguard.Policy, field, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fault.Invalid(field, "%s must be an absolute ws, wss, http or https URL", field)
	}
	switch u.Scheme {
	case "ws", "wss":
		if strings.Contains(u.Path, "/devtools/browser/") {
			return u.String(), nil
		}
	case "http", "https":
	default:
		return "", fault.Invalid(field, "%s must be a ws, wss, http or https URL, got scheme %q", field, u.Scheme)
	}
	v := *u
	v.Scheme = map[string]string{"ws": "http", "wss": "https", "http": "http", "https": "https"}[u.Scheme]
	v.Path = strings.TrimSuffix(v.Path, "/") + "/json/version"
	tr := guard.NewTransport()
	tr.DisableKeepAlives = true // one request; an idle connection would outlive the call
	client := netguard.NewClient(tr, 0)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.String(), nil)
	if err != nil {
		return "", fault.Invalid(field, "%s: %v", field, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", connError(ctx, redact(u), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", connError(ctx, redact(u), err)
	}
	if resp.StatusCode != http.StatusOK {
		kind := fault.Provider
		if resp.StatusCode == 429 || resp.StatusCode >= 500 {
			kind = fault.Transient
		}
		return "", fault.New(kind, "the browser at %s answered HTTP %d for /json/version; give its DevTools websocket URL (ws://.../devtools/browser/...) instead", redact(u), resp.StatusCode)
	}
	var info struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := json.Unmarshal(body, &info); err != nil || info.WS == "" {
		return "", fault.New(fault.Provider, "the browser at %s did not name its DevTools websocket in /json/version", redact(u))
	}
	return info.WS, nil
}

// dialCDP opens the DevTools websocket through the guard.
func dialCDP(ctx context.Context, guard *netguard.Policy, wsURL string, maxMessage int64) (*wsConn, error) {
	d := websocket.Dialer{
		NetDialContext:   guard.DialContext,
		Proxy:            nil, // a proxy would hide the real target from the guard
		HandshakeTimeout: 15 * time.Second,
		TLSClientConfig:  &tls.Config{MinVersion: tls.VersionTLS12},
		ReadBufferSize:   64 << 10,
		WriteBufferSize:  64 << 10,
	}
	u, _ := url.Parse(wsURL)
	ws, resp, err := d.DialContext(ctx, wsURL, nil)
	if err != nil {
		if resp != nil {
			kind := fault.Provider
			if resp.StatusCode == 429 || resp.StatusCode >= 500 {
				kind = fault.Transient
			}
			return nil, fault.Wrap(kind, err, "the browser at %s refused the DevTools connection with HTTP %d", redact(u), resp.StatusCode)
		}
		return nil, connError(ctx, redact(u), err)
	}
	// Screenshots come back as one message of a few megabytes; bound it all the same.
	ws.SetReadLimit(maxMessage)
	return &wsConn{ws: ws}, nil
}

func connError(ctx context.Context, where string, err error) error {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err // the guard's own refusal or connection failure, already typed
	}
	if e := deadlineError(ctx, "connecting to the browser at "+where, err); e != nil {
		return e
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fault.Wrap(fault.Transient, err, "could not reach the browser at %s", where)
	}
	return fault.Wrap(fault.Provider, err, "could not connect to the browser at %s", where)
}

// boundKey carries the caller's context and the provider's own bound under the operation's context.
type boundKey struct{}

type bound struct {
	parent context.Context
	limit  time.Duration
}

// withBound derives the operation's context: the provider's bound under the caller's context.
func withBound(parent context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, limit)
	return context.WithValue(ctx, boundKey{}, bound{parent, limit}), cancel
}

// deadlineError types a failure once ctx has run out: the caller's deadline is a Timeout; the
// provider's own bound is Transient (a browser or page that stops answering may answer later).
// It is nil while ctx is alive.
func deadlineError(ctx context.Context, what string, err error) error {
	var ne net.Error
	if !passed(ctx) && !(errors.As(err, &ne) && ne.Timeout()) {
		return nil
	}
	if b, ok := ctx.Value(boundKey{}).(bound); ok && !passed(b.parent) {
		return fault.Wrap(fault.Transient, err, "%s: no answer within %s", what, b.limit)
	}
	return fault.Wrap(fault.Timeout, err, "%s: the call ran out of time", what)
}

// passed reports whether ctx is done or its deadline has come: a socket deadline set from it can
// fire a moment before the context's own timer does.
func passed(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// wsConn is a chromedp.Transport over a gorilla websocket whose TCP connection the guard dialed.
// side, when set, sees every message first and keeps those of the sessions sinew drives itself.
type wsConn struct {
	ws   *websocket.Conn
	mu   sync.Mutex // one writer at a time
	side *sessions
}

var _ chromedp.Transport = (*wsConn)(nil)

func (c *wsConn) Read(_ context.Context, msg *cdproto.Message) error {
	for {
		typ, data, err := c.ws.ReadMessage()
		if err != nil {
			return err
		}
		if typ != websocket.TextMessage {
			return fmt.Errorf("unexpected websocket message type %d", typ)
		}
		// Each message gets its own value: the side keeps those it takes beyond this call.
		m := new(cdproto.Message)
		if err := jsonv2.Unmarshal(data, m, chromedp.DefaultUnmarshalOptions); err != nil {
			return err
		}
		if c.side == nil || !c.side.take(m) {
			*msg = *m
			return nil
		}
	}
}

func (c *wsConn) Write(_ context.Context, msg *cdproto.Message) error {
	if c.side != nil {
		c.side.sent(msg)
	}
	return c.write(msg)
}

func (c *wsConn) write(msg *cdproto.Message) error {
	b, err := jsonv2.Marshal(msg, chromedp.DefaultMarshalOptions)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *wsConn) Close() error { return c.ws.Close() }

// allocator hands chromedp the connection dialed above: it attaches to a browser that runs already
// and never starts or stops one.
type allocator struct {
	conn *wsConn
	opts []chromedp.BrowserOption
	wg   sync.WaitGroup
}

func (a *allocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	// The websocket lives on its own context, so the tab contexts detach before it closes.
	wctx, cancel := context.WithCancel(context.Background())
	a.wg.Go(func() {
		<-ctx.Done()
		_ = chromedp.Cancel(ctx)
		cancel()
	})
	return chromedp.NewBrowserTransport(wctx, a.conn, append(a.opts, opts...)...)
}

func (a *allocator) Wait()          { a.wg.Wait() }
func (a *allocator) Attaches() bool { return true }

// redact drops userinfo, query and fragment (tokens of hosted browsers) from a URL for messages.
func redact(u *url.URL) string {
	if u == nil {
		return "(none)"
	}
	v := *u
	v.User, v.RawQuery, v.ForceQuery, v.Fragment = nil, "", false, ""
	return v.String()
}
