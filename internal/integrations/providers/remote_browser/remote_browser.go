// Package remotebrowser is the remote_browser integration, after Julep's
// (https://github.com/julep-ai/julep/blob/929a6d7fffffbe3459dc8a86d84d600f3c9f9521/integrations-service/integrations/utils/integrations/remote_browser.py).
//
// Method perform_action drives a browser that runs elsewhere, over the Chrome DevTools Protocol,
// with the actions of Anthropic's computer-use tool (key, type, mouse_move, left_click,
// left_click_drag, right_click, middle_click, double_click, screenshot, cursor_position) and
// Julep's navigate and refresh. It uses chromedp on a websocket that the network guard dials, so
// connect_url, its /json/version lookup and the websocket are all checked like any other outgoing
// connection.
//
// As in Julep (Playwright's connect_over_cdp), each call connects, uses the browser's first page,
// installs a mouse tracker in the page (the mouse position lives in the page, window.mouseX/Y, so it
// survives between calls), moves the mouse to the centre of a page it has not set up yet, performs
// the action and disconnects, leaving the page open. Where sinew differs: the viewport size for the
// centre comes from the page when setup has no width and height (Julep fails); a browser with no
// page gets one; navigate accepts only http and https URLs; the screenshot's cursor is drawn by
// sinew; failures are typed errors rather than re-raised text, and there is no retry loop of the
// provider's own.
//
// What the browser itself loads is guarded too (pageguard.go, sessions.go): navigate takes only
// http and https URLs whose address the network guard permits; while a call is connected, every
// request of every page, frame, worker and service worker (redirects and subresources included) is
// paused through CDP's Fetch domain and fails unless the guard permits it, no WebSocket opens, and
// downloads are denied (the call's answer names them); an action that may start a navigation or a
// download waits for the browser to settle before the call leaves; and no action but navigate runs
// on a page that shows, in any frame, a document of a refused address or scheme (judged by origin
// where the URL does not tell it: about:blank, about:srcdoc, blob:). Between calls sinew is not
// connected, and the browser resolves names itself: the browser's own network must keep it from
// internal addresses.
package remotebrowser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"sinew/internal/fault"
	"sinew/internal/netguard"
)

// Setup is the provider's setup (all optional).
type Setup struct {
	ConnectURL string `json:"connect_url,omitempty" jsonschema_description:"the browser's DevTools endpoint: ws://host:port/devtools/browser/ID, or http(s)://host:port whose /json/version names it" sinew:"endpoint"`
	Width      *int   `json:"width,omitempty" jsonschema:"minimum=1,maximum=10000" jsonschema_description:"viewport width in CSS pixels"`
	Height     *int   `json:"height,omitempty" jsonschema:"minimum=1,maximum=10000" jsonschema_description:"viewport height in CSS pixels"`
}

// The actions, in Julep's order.
const (
	ActionKey            = "key"
	ActionType           = "type"
	ActionMouseMove      = "mouse_move"
	ActionLeftClick      = "left_click"
	ActionLeftClickDrag  = "left_click_drag"
	ActionRightClick     = "right_click"
	ActionMiddleClick    = "middle_click"
	ActionDoubleClick    = "double_click"
	ActionScreenshot     = "screenshot"
	ActionCursorPosition = "cursor_position"
	ActionNavigate       = "navigate"
	ActionRefresh        = "refresh"
)

// Actions lists every action.
var Actions = []string{ActionKey, ActionType, ActionMouseMove, ActionLeftClick, ActionLeftClickDrag, ActionRightClick,
	ActionMiddleClick, ActionDoubleClick, ActionScreenshot, ActionCursorPosition, ActionNavigate, ActionRefresh}

// PerformActionArguments are perform_action's arguments.
type PerformActionArguments struct {
	ConnectURL string  `json:"connect_url,omitempty" jsonschema_description:"the browser's DevTools endpoint, when setup has none"`
	Action     string  `json:"action" jsonschema:"enum=key,enum=type,enum=mouse_move,enum=left_click,enum=left_click_drag,enum=right_click,enum=middle_click,enum=double_click,enum=screenshot,enum=cursor_position,enum=navigate,enum=refresh" jsonschema_description:"the action to perform"`
	Text       *string `json:"text,omitempty" jsonschema_description:"key: a key or combination such as ctrl+a or Return; type: the text; navigate: the URL"`
	Coordinate []int   `json:"coordinate,omitempty" jsonschema:"minItems=2,maxItems=2" jsonschema_description:"[x, y] in CSS pixels, for mouse_move and left_click_drag"`
}

// PerformActionOutput is Julep's RemoteBrowserOutput; unset fields are null.
type PerformActionOutput struct {
	Output      *string `json:"output"`
	Error       *string `json:"error"`
	Base64Image *string `json:"base64_image"`
	System      *string `json:"system"`
}

// Env is what the provider takes from its surroundings.
type Env struct {
	// Guard dials every connection (required).
	Guard *netguard.Policy
	// DefaultConnectURL is used when neither setup nor arguments name a browser
	// (SINEW_REMOTE_BROWSER_BASE_URL).
	DefaultConnectURL string
	// Timeout bounds one call (default 60 s). It is the provider's bound, not the caller's: running
	// out of it is Sinew.Transient; the caller's context running out is Sinew.Timeout.
	Timeout time.Duration
	// MaxMessageBytes bounds one DevTools message, screenshots included (default 64 MiB).
	MaxMessageBytes int64
	Log             *slog.Logger
}

// Validate checks the arguments against the action, naming the field at fault.
func (a PerformActionArguments) Validate() error {
	known := false
	for _, x := range Actions {
		known = known || x == a.Action
	}
	if !known {
		return fault.Invalid("action", "action must be one of %s, got %q", strings.Join(Actions, ", "), a.Action)
	}
	switch a.Action {
	case ActionKey, ActionType, ActionNavigate:
		if a.Text == nil || *a.Text == "" {
			return fault.Invalid("text", "text is required for the %s action", a.Action)
		}
	case ActionMouseMove, ActionLeftClickDrag:
		if len(a.Coordinate) != 2 {
			return fault.Invalid("coordinate", "coordinate [x, y] is required for the %s action", a.Action)
		}
		if a.Coordinate[0] < 0 || a.Coordinate[1] < 0 || a.Coordinate[0] > 100000 || a.Coordinate[1] > 100000 {
			return fault.Invalid("coordinate", "coordinate must hold two non-negative pixel positions, got %v", a.Coordinate)
		}
	}
	if a.Action == ActionNavigate {
		u, err := url.Parse(*a.Text)
		if *a.Text != "about:blank" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			return fault.Invalid("text", "text must be an absolute http or https URL for navigate")
		}
	}
	if a.Action == ActionKey {
		if _, err := parseCombo(*a.Text); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the setup.
func (s Setup) Validate() error {
	if s.Width != nil && (*s.Width < 1 || *s.Width > 10000) {
		return fault.Invalid("setup.width", "setup.width must be from 1 to 10000")
	}
	if s.Height != nil && (*s.Height < 1 || *s.Height > 10000) {
		return fault.Invalid("setup.height", "setup.height must be from 1 to 10000")
	}
	if (s.Width == nil) != (s.Height == nil) {
		return fault.Invalid("setup.width", "setup.width and setup.height go together: give both or neither")
	}
	return nil
}

// PerformAction connects to the browser, performs one action on its first page, and disconnects.
func PerformAction(ctx context.Context, env Env, setup Setup, args PerformActionArguments) (PerformActionOutput, error) {
	if env.Guard == nil {
		return PerformActionOutput{}, fault.New(fault.Internal, "remote_browser: no network guard configured")
	}
	if err := setup.Validate(); err != nil {
		return PerformActionOutput{}, err
	}
	if err := args.Validate(); err != nil {
		return PerformActionOutput{}, err
	}
	// Julep's order: setup's connect_url wins over the argument's.
	field, connectURL := "setup.connect_url", setup.ConnectURL
	if connectURL == "" {
		field, connectURL = "connect_url", args.ConnectURL
	}
	if connectURL == "" {
		field, connectURL = "connect_url", env.DefaultConnectURL
	}
	if connectURL == "" {
		return PerformActionOutput{}, fault.Invalid("connect_url", "connect_url is required (in setup or arguments): the browser's DevTools endpoint")
	}
	timeout := env.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := withBound(ctx, timeout)
	defer cancel()
	log := env.Log
	if log == nil {
		log = slog.Default()
	}

	wsURL, err := resolveWS(ctx, env.Guard, field, connectURL)
	if err != nil {
		return PerformActionOutput{}, err
	}
	maxMsg := env.MaxMessageBytes
	if maxMsg <= 0 {
		maxMsg = 64 << 20
	}
	conn, err := dialCDP(ctx, env.Guard, wsURL, maxMsg)
	if err != nil {
		return PerformActionOutput{}, err
	}
	guard := newPageGuard(env.Guard)
	sideCtx, cancelSide := context.WithCancel(ctx)
	side := newSessions(sideCtx, conn, guard, log) // before chromedp reads a message
	defer func() { cancelSide(); side.stop() }()
	quiet := func(string, ...any) {}
	logErr := func(format string, a ...any) { log.DebugContext(ctx, "chromedp: "+fmt.Sprintf(format, a...)) }
	alloc := &allocator{conn: conn, opts: []chromedp.BrowserOption{chromedp.WithBrowserLogf(quiet), chromedp.WithBrowserErrorf(logErr)}}
	allocCtx, cancelAlloc := chromedp.NewAllocatorContext(ctx, alloc)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	if args.Action == ActionNavigate {
		if err := guard.check(ctx, *args.Text); err != nil {
			return PerformActionOutput{}, fault.Invalid("text", "text: %s", fault.Message(err))
		}
	}
	out, err := act(ctx, bctx, guard, side, setup, args)
	if err != nil {
		return PerformActionOutput{}, err
	}
	log.InfoContext(ctx, "remote_browser action", "action", args.Action)
	return out, nil
}

// Settling after an action that may start a navigation or a download: how long the browser must
// ask about nothing, and the most that it waits.
const (
	settleQuiet = 300 * time.Millisecond
	settleLimit = 3 * time.Second
)

// act guards the browser (bctx) and performs the action on its first page. ctx is the call's.
func act(ctx, bctx context.Context, guard *pageGuard, side *sessions, setup Setup, args PerformActionArguments) (PerformActionOutput, error) {
	if err := guard.intercept(bctx); err != nil {
		return PerformActionOutput{}, actionError(ctx, "connect", err)
	}
	if err := side.ready(ctx); err != nil {
		return PerformActionOutput{}, actionError(ctx, "connect", err)
	}
	targets, err := chromedp.Targets(bctx)
	if err != nil {
		return PerformActionOutput{}, actionError(ctx, "connect", err)
	}
	opts := []chromedp.ContextOption{chromedp.WithDetachOnCancel()}
	var pageID target.ID
	for _, t := range targets {
		if t.Type == "page" && !strings.HasPrefix(t.URL, "devtools://") {
			pageID = t.TargetID
			opts = append(opts, chromedp.WithTargetID(pageID))
			break
		}
	}
	// Without a page, NewContext opens one; WithDetachOnCancel leaves it open for the next call.
	pctx, cancelPage := chromedp.NewContext(bctx, opts...)
	defer cancelPage()

	if args.Action != ActionNavigate {
		if err := guard.checkPage(pctx, pageID, targets); err != nil {
			return PerformActionOutput{}, actionError(ctx, args.Action, err)
		}
	}
	s := &pageState{setup: setup}
	if err := s.init(pctx); err != nil {
		return PerformActionOutput{}, actionError(ctx, args.Action, err)
	}
	out, err := s.perform(pctx, args)
	switch args.Action {
	case ActionScreenshot, ActionCursorPosition, ActionMouseMove:
	default:
		guard.settle(ctx, settleQuiet, settleLimit)
	}
	if names := guard.refusedDownloads(); len(names) > 0 {
		refusal := fmt.Sprintf("refused to download %s: the browser may save no files while sinew drives it", quoteAll(names))
		var le *chromedp.LoadError
		if errors.As(err, &le) && strings.Contains(le.ErrorText, "ERR_ABORTED") {
			return PerformActionOutput{}, fault.New(fault.Forbidden, "%s", refusal) // the page loaded was the download
		}
		if err == nil {
			out.Error = &refusal
		}
	}
	if err != nil {
		return PerformActionOutput{}, actionError(ctx, args.Action, err)
	}
	return out, nil
}
