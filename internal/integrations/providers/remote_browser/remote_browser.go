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
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"log/slog"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gorilla/websocket"

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

// trackerJS installs Julep's mouse tracker (same window variables, so a page Julep set up keeps its
// position) at once rather than on the next DOMContentLoaded, and reports whether the page was set up.
const trackerJS = `(() => {
  if (!window.$$julep$$_mouseListenerInitialized) {
    const update = (e) => { window.mouseX = e.clientX; window.mouseY = e.clientY; };
    for (const t of ['mousemove', 'mouseup', 'mousedown', 'click', 'dblclick']) window.addEventListener(t, update, true);
    window.$$julep$$_mouseListenerInitialized = true;
  }
  return !!window.$$julep$$_initialized;
})()`

type pageState struct {
	setup  Setup
	width  float64
	height float64
}

// init sizes the viewport, installs the tracker and centres the mouse on a page not yet set up.
func (s *pageState) init(ctx context.Context) error {
	if s.setup.Width != nil && s.setup.Height != nil {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(*s.setup.Width), int64(*s.setup.Height))); err != nil {
			return err
		}
	}
	// Pages loaded during this call get the tracker too.
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: trackerJS})
		return err
	})); err != nil {
		return err
	}
	return s.resetMouse(ctx)
}

func (s *pageState) resetMouse(ctx context.Context) error {
	initialised, err := chromedp.Run(ctx, chromedp.Evaluate[bool](trackerJS))
	if err != nil {
		return err
	}
	size, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[window.innerWidth, window.innerHeight]`))
	if err != nil {
		return err
	}
	if len(size) == 2 {
		s.width, s.height = size[0], size[1]
	}
	if initialised {
		return nil
	}
	x, y := math.Floor(s.width/2), math.Floor(s.height/2)
	if err := chromedp.Do(ctx, chromedp.MouseEvent(chromedp.MouseMoved, x, y)); err != nil {
		return err
	}
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(
		`window.$$julep$$_initialized = true; if (window.mouseX === undefined) { window.mouseX = %v; window.mouseY = %v; } true`, x, y)))
	return err
}

func (s *pageState) mouse(ctx context.Context) (float64, float64, error) {
	xy, err := chromedp.Run(ctx, chromedp.Evaluate[[]*float64](`[window.mouseX ?? null, window.mouseY ?? null]`))
	if err != nil {
		return 0, 0, err
	}
	if len(xy) != 2 || xy[0] == nil || xy[1] == nil {
		return math.Floor(s.width / 2), math.Floor(s.height / 2), nil
	}
	return *xy[0], *xy[1], nil
}

func str(s string) *string { return &s }

func (s *pageState) perform(ctx context.Context, a PerformActionArguments) (PerformActionOutput, error) {
	switch a.Action {
	case ActionKey:
		combo, _ := parseCombo(*a.Text)
		if err := chromedp.Do(ctx, pressCombo(combo)); err != nil {
			return PerformActionOutput{}, err
		}
		return PerformActionOutput{Output: str("Pressed " + *a.Text)}, nil
	case ActionType:
		if err := chromedp.Do(ctx, chromedp.KeyEvent(*a.Text)); err != nil {
			return PerformActionOutput{}, err
		}
		return PerformActionOutput{Output: str("Typed " + *a.Text)}, nil
	case ActionMouseMove:
		x, y := float64(a.Coordinate[0]), float64(a.Coordinate[1])
		if err := chromedp.Do(ctx, chromedp.MouseEvent(chromedp.MouseMoved, x, y)); err != nil {
			return PerformActionOutput{}, err
		}
		return PerformActionOutput{Output: str(fmt.Sprintf("Moved mouse to [%d, %d]", a.Coordinate[0], a.Coordinate[1]))}, nil
	case ActionLeftClick, ActionRightClick, ActionMiddleClick, ActionDoubleClick:
		return s.click(ctx, a.Action)
	case ActionLeftClickDrag:
		return s.drag(ctx, a.Coordinate)
	case ActionScreenshot:
		return s.screenshot(ctx)
	case ActionCursorPosition:
		x, y, err := s.mouse(ctx)
		if err != nil {
			return PerformActionOutput{}, err
		}
		return PerformActionOutput{Output: str(fmt.Sprintf("X=%s, Y=%s", num(x), num(y)))}, nil
	case ActionNavigate:
		return s.load(ctx, chromedp.Navigate(*a.Text), *a.Text)
	case ActionRefresh:
		return s.load(ctx, chromedp.Reload(), "Refreshed page")
	}
	return PerformActionOutput{}, fault.Invalid("action", "unknown action %q", a.Action)
}

// click presses a mouse button where the mouse is (twice for a double click).
func (s *pageState) click(ctx context.Context, action string) (PerformActionOutput, error) {
	x, y, err := s.mouse(ctx)
	if err != nil {
		return PerformActionOutput{}, err
	}
	button, buttons, label := input.MouseButtonLeft, int64(1), "Left clicked"
	switch action {
	case ActionRightClick:
		button, buttons, label = input.MouseButtonRight, 2, "Right clicked"
	case ActionMiddleClick:
		button, buttons, label = input.MouseButtonMiddle, 4, "Middle clicked"
	case ActionDoubleClick:
		label = "Double clicked"
	}
	steps := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(chromedp.MouseMoved, x, y)}
	clicks := 1
	if action == ActionDoubleClick {
		clicks = 2
	}
	// A double click is two presses, the second with clickCount 2, as a real mouse sends them.
	for n := 1; n <= clicks; n++ {
		steps = append(steps,
			chromedp.MouseEvent(chromedp.MousePressed, x, y, chromedp.Button(string(button)), withButtons(buttons), chromedp.ClickCount(n)),
			chromedp.MouseEvent(chromedp.MouseReleased, x, y, chromedp.Button(string(button)), chromedp.ClickCount(n)))
	}
	if err := chromedp.Do(ctx, steps...); err != nil {
		return PerformActionOutput{}, err
	}
	return PerformActionOutput{Output: str(label)}, nil
}

// drag presses the left button where the mouse is, moves to to and releases it there.
func (s *pageState) drag(ctx context.Context, to []int) (PerformActionOutput, error) {
	x, y, err := s.mouse(ctx)
	if err != nil {
		return PerformActionOutput{}, err
	}
	tx, ty := float64(to[0]), float64(to[1])
	left := chromedp.Button(string(input.MouseButtonLeft))
	if err := chromedp.Do(ctx,
		chromedp.MouseEvent(chromedp.MousePressed, x, y, left, withButtons(1), chromedp.ClickCount(1)),
		chromedp.MouseEvent(chromedp.MouseMoved, tx, ty, withButtons(1)),
		chromedp.MouseEvent(chromedp.MouseReleased, tx, ty, left, chromedp.ClickCount(1)),
	); err != nil {
		return PerformActionOutput{}, err
	}
	return PerformActionOutput{Output: str(fmt.Sprintf("Left clicked and dragged to [%d, %d]", to[0], to[1]))}, nil
}

// screenshot is the page as a PNG data URL, with the cursor drawn where the mouse is.
func (s *pageState) screenshot(ctx context.Context) (PerformActionOutput, error) {
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		return PerformActionOutput{}, err
	}
	x, y, err := s.mouse(ctx)
	if err != nil {
		return PerformActionOutput{}, err
	}
	withCursor, err := overlayCursor(shot, int(x), int(y))
	if err != nil {
		return PerformActionOutput{}, fault.Wrap(fault.Provider, err, "the browser's screenshot is not a PNG")
	}
	img := "data:image/png;base64," + base64.StdEncoding.EncodeToString(withCursor)
	return PerformActionOutput{Base64Image: &img, System: str("take_screenshot")}, nil
}

// load navigates or reloads with act, then puts the mouse back in the page's middle.
func (s *pageState) load(ctx context.Context, act chromedp.Action[chromedp.Void], out string) (PerformActionOutput, error) {
	if err := chromedp.Do(ctx, act); err != nil {
		return PerformActionOutput{}, err
	}
	if err := s.resetMouse(ctx); err != nil {
		return PerformActionOutput{}, err
	}
	return PerformActionOutput{Output: str(out)}, nil
}

// quoteAll lists names quoted, comma-separated, each cut to a readable length (a page names its
// downloads).
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(firstLine(n, 100))
	}
	return strings.Join(q, ", ")
}

func withButtons(b int64) chromedp.MouseOption {
	return func(p *input.DispatchMouseEventParams) { p.Buttons = b }
}

// num prints a coordinate as Python prints Julep's: integers without a fraction.
func num(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%g", v)
}

// actionError types a failure during the CDP session.
func actionError(ctx context.Context, action string, err error) error {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	if e := deadlineError(ctx, "the browser's "+action, err); e != nil {
		return e
	}
	var le *chromedp.LoadError
	if errors.As(err, &le) {
		return fault.Wrap(fault.Provider, err, "the browser could not load the page: %s", le.ErrorText)
	}
	var ne net.Error
	var ce *websocket.CloseError
	if errors.As(err, &ne) || errors.As(err, &ce) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.Canceled) {
		return fault.Wrap(fault.Transient, err, "the connection to the browser was lost during %s", action)
	}
	return fault.Wrap(fault.Provider, err, "the browser failed %s: %s", action, firstLine(err.Error(), 300))
}

func firstLine(s string, max int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// keyAliases maps xdotool's names (which computer-use models send) and Julep's three to DOM key
// names; names are matched without regard to case.
var keyAliases = map[string]string{
	"return": "Enter", "enter": "Enter", "kp_enter": "Enter", "ctrl": "Control", "control": "Control",
	"alt": "Alt", "shift": "Shift", "super": "Meta", "cmd": "Meta", "command": "Meta", "meta": "Meta", "win": "Meta",
	"page_down": "PageDown", "pagedown": "PageDown", "next": "PageDown", "page_up": "PageUp", "pageup": "PageUp", "prior": "PageUp",
	"backspace": "Backspace", "tab": "Tab", "escape": "Escape", "esc": "Escape", "space": " ", "delete": "Delete", "del": "Delete",
	"insert": "Insert", "home": "Home", "end": "End", "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
	"arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft", "arrowright": "ArrowRight",
}

// keyRunes finds chromedp's key definition by DOM key name. Several keys share a name (ControlLeft
// and ControlRight, Digit1 and Numpad1); the main keyboard's left-hand one wins, whatever the map's
// order.
var keyRunes = func() map[string]rune {
	rank := func(code string) int {
		switch {
		case strings.HasSuffix(code, "Left"):
			return 0
		case strings.HasPrefix(code, "Numpad"):
			return 2
		case strings.HasSuffix(code, "Right"):
			return 3
		}
		return 1
	}
	m := map[string]rune{}
	for r, k := range kb.Keys {
		if k.Key == "" {
			continue
		}
		if old, ok := m[k.Key]; ok {
			ro, rn := rank(kb.Keys[old].Code), rank(k.Code)
			if ro < rn || (ro == rn && old < r) {
				continue
			}
		}
		m[k.Key] = r
	}
	return m
}()

type combo struct {
	mods []rune // held in order
	key  rune
	bits int64
}

var modifierBits = map[string]int64{"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}

func lookupKey(name string) (string, rune, bool) {
	dom := name
	if a, ok := keyAliases[strings.ToLower(name)]; ok {
		dom = a
	} else if len([]rune(name)) > 1 {
		// F1..F12 and other DOM names as they are, else a capitalised form (e.g. "escape" → "Escape").
		if _, ok := keyRunes[name]; !ok {
			dom = strings.ToUpper(name[:1]) + name[1:]
		}
	}
	r, ok := keyRunes[dom]
	if !ok && len([]rune(dom)) == 1 {
		r, ok = []rune(dom)[0], true // any single character types itself
	}
	return dom, r, ok
}

func parseCombo(text string) (combo, error) {
	parts := strings.Split(text, "+")
	if text == "+" {
		parts = []string{"+"}
	}
	var c combo
	for i, p := range parts {
		if p == "" {
			return combo{}, fault.Invalid("text", "text %q is not a key combination such as ctrl+a", text)
		}
		dom, r, ok := lookupKey(p)
		if !ok {
			return combo{}, fault.Invalid("text", "text names the unknown key %q", p)
		}
		if i < len(parts)-1 {
			c.mods = append(c.mods, r)
			c.bits |= modifierBits[dom]
		} else {
			c.key = r
		}
	}
	return c, nil
}

// pressCombo holds the modifiers down, presses the key with them, and releases them in reverse.
func pressCombo(c combo) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var bits int64
		for _, m := range c.mods {
			k := kb.Keys[m]
			if k == nil {
				continue
			}
			bits |= modifierBits[k.Key]
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeRawKeyDown, Key: k.Key, Code: k.Code, WindowsVirtualKeyCode: k.Windows, NativeVirtualKeyCode: k.Native, Modifiers: bits}); err != nil {
				return err
			}
		}
		if _, err := chromedp.KeyEvent(string(c.key), chromedp.KeyModifiers(chromedp.Modifier(c.bits)))(ctx, t); err != nil {
			return err
		}
		for i := len(c.mods) - 1; i >= 0; i-- {
			k := kb.Keys[c.mods[i]]
			if k == nil {
				continue
			}
			bits &^= modifierBits[k.Key]
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: k.Key, Code: k.Code, WindowsVirtualKeyCode: k.Windows, NativeVirtualKeyCode: k.Native, Modifiers: bits}); err != nil {
				return err
			}
		}
		return nil
	})
}

// cursorShape is an arrow pointer: B outline, W fill.
var cursorShape = []string{
	"B", "BB", "BWB", "BWWB", "BWWWB", "BWWWWB", "BWWWWWB", "BWWWWWWB", "BWWWWWWWB", "BWWWWWWWWB",
	"BWWWWWWWWWB", "BWWWWWWBBBBB", "BWWWBWWB", "BWWBBWWB", "BWB  BWWB", "BB   BWWB", "B     BWWB", "      BWWB", "       BB",
}

// overlayCursor draws the pointer with its tip at (x, y), as Julep pastes its cursor image.
func overlayCursor(shot []byte, x, y int) ([]byte, error) {
	src, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		return nil, err
	}
	img := image.NewNRGBA(src.Bounds())
	draw.Draw(img, img.Bounds(), src, src.Bounds().Min, draw.Src)
	for dy, row := range cursorShape {
		for dx, c := range row {
			p := image.Pt(x+dx, y+dy)
			if !p.In(img.Bounds()) {
				continue
			}
			switch c {
			case 'B':
				img.Set(p.X, p.Y, color.Black)
			case 'W':
				img.Set(p.X, p.Y, color.White)
			}
		}
	}
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&out, img); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
