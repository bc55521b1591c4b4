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
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"sinew/internal/fault"
)

// The actions on a page: the mouse tracker, clicks, drags, typing, screenshots (with the cursor
// drawn in), navigation, and the errors a failed action answers.

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
