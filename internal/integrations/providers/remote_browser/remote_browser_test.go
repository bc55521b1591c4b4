package remotebrowser_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	remotebrowser "sinew/internal/integrations/providers/remote_browser"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
	"sinew/internal/testenv/chromium"
)

const testPage = `<!doctype html><html><head><title>sinew test</title><style>
body { margin: 0 }
#in { position: absolute; left: 10px; top: 10px; width: 300px; height: 40px }
#pad { position: absolute; left: 300px; top: 200px; width: 300px; height: 200px; background: #00aa00 }
</style></head><body>
<input id="in"><div id="pad"></div>
<script>
const send = (s) => fetch('/event', {method: 'POST', body: s});
const inp = document.getElementById('in');
const pad = document.getElementById('pad');
inp.addEventListener('input', () => send('input:' + inp.value));
inp.addEventListener('click', () => send('inputclick'));
document.addEventListener('keydown', (e) => {
  send('keydown:' + e.key + (e.ctrlKey ? ':ctrl' : '') + (e.shiftKey ? ':shift' : ''));
  if (e.key === 'Enter') send('enter:' + inp.value);
});
pad.addEventListener('mousedown', (e) => send('mousedown:' + e.button + ':' + e.clientX + ',' + e.clientY));
pad.addEventListener('mouseup', (e) => send('mouseup:' + e.button + ':' + e.clientX + ',' + e.clientY));
pad.addEventListener('click', (e) => send('click:' + e.clientX + ',' + e.clientY));
pad.addEventListener('dblclick', () => send('dblclick'));
pad.addEventListener('auxclick', (e) => send('auxclick:' + e.button));
pad.addEventListener('contextmenu', (e) => { e.preventDefault(); send('contextmenu'); });
</script></body></html>`

// site serves the test page and records what its script reports.
type site struct {
	srv   *httptest.Server
	log   eventLog
	loads atomic.Int64
}

func newSite(t *testing.T) *site {
	s := &site{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/event":
			s.log.record(r)
		case "/":
			s.loads.Add(1)
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, testPage)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// waitEvent waits until the page reported ev (the reports are asynchronous fetches).
func (s *site) waitEvent(t *testing.T, ev string) {
	t.Helper()
	if evs := s.log.waitFor(func(e string) bool { return e == ev }, 15*time.Second); !slices.Contains(evs, ev) {
		t.Fatalf("the page never reported %q; it reported %q", ev, evs)
	}
}

func (s *site) pageLoads() int { return int(s.loads.Load()) }

func loopbackEnv(t testing.TB) remotebrowser.Env {
	trip, _ := netguardtest.Tripwire(t)
	return remotebrowser.Env{Guard: netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.1/32")), trip), Timeout: 30 * time.Second}
}

func sp(s string) *string { return &s }
func ip(n int) *int       { return &n }

// TestEveryAction drives Debian's headless Chromium over CDP through every action, each call a new
// connection as in production, and checks each action's effect on the page.
func TestEveryAction(t *testing.T) {
	b := chromium.Start(t)
	s := newSite(t)
	env := loopbackEnv(t)
	setup := remotebrowser.Setup{ConnectURL: b.HTTPURL, Width: ip(800), Height: ip(600)}
	ctx := context.Background()
	do := func(t *testing.T, args remotebrowser.PerformActionArguments) remotebrowser.PerformActionOutput {
		t.Helper()
		out, err := remotebrowser.PerformAction(ctx, env, setup, args)
		if err != nil {
			t.Fatalf("%s: %v", args.Action, err)
		}
		if out.Error != nil {
			t.Fatalf("%s: error field %q", args.Action, *out.Error)
		}
		return out
	}
	output := func(t *testing.T, args remotebrowser.PerformActionArguments, want string) {
		t.Helper()
		out := do(t, args)
		if out.Output == nil || *out.Output != want {
			t.Fatalf("%s: output %v, want %q", args.Action, out.Output, want)
		}
	}
	act := func(a string) remotebrowser.PerformActionArguments {
		return remotebrowser.PerformActionArguments{Action: a}
	}
	withText := func(a, text string) remotebrowser.PerformActionArguments {
		return remotebrowser.PerformActionArguments{Action: a, Text: sp(text)}
	}
	at := func(a string, x, y int) remotebrowser.PerformActionArguments {
		return remotebrowser.PerformActionArguments{Action: a, Coordinate: []int{x, y}}
	}
	pageURL := s.srv.URL + "/"

	t.Run("navigate by websocket URL", func(t *testing.T) {
		wsSetup := setup
		wsSetup.ConnectURL = b.WSURL
		out, err := remotebrowser.PerformAction(ctx, env, wsSetup, withText(remotebrowser.ActionNavigate, pageURL))
		if err != nil || out.Output == nil || *out.Output != pageURL {
			t.Fatalf("navigate: %v %v", out.Output, err)
		}
		if s.pageLoads() != 1 {
			t.Fatalf("the page was loaded %d times", s.pageLoads())
		}
	})
	t.Run("cursor starts at the centre", func(t *testing.T) { output(t, act(remotebrowser.ActionCursorPosition), "X=400, Y=300") })
	t.Run("mouse_move", func(t *testing.T) {
		output(t, at(remotebrowser.ActionMouseMove, 50, 30), "Moved mouse to [50, 30]")
		output(t, act(remotebrowser.ActionCursorPosition), "X=50, Y=30")
	})
	t.Run("left_click focuses the input", func(t *testing.T) {
		output(t, act(remotebrowser.ActionLeftClick), "Left clicked")
		s.waitEvent(t, "inputclick")
	})
	t.Run("type", func(t *testing.T) {
		output(t, withText(remotebrowser.ActionType, "hello"), "Typed hello")
		s.waitEvent(t, "input:hello")
	})
	t.Run("key combination selects all", func(t *testing.T) {
		output(t, withText(remotebrowser.ActionKey, "ctrl+a"), "Pressed ctrl+a")
		s.waitEvent(t, "keydown:a:ctrl")
		output(t, withText(remotebrowser.ActionType, "bye"), "Typed bye")
		s.waitEvent(t, "input:bye") // the selection was replaced
	})
	t.Run("key Return", func(t *testing.T) {
		output(t, withText(remotebrowser.ActionKey, "Return"), "Pressed Return")
		s.waitEvent(t, "enter:bye")
	})
	t.Run("right_click", func(t *testing.T) {
		output(t, at(remotebrowser.ActionMouseMove, 400, 300), "Moved mouse to [400, 300]")
		output(t, act(remotebrowser.ActionRightClick), "Right clicked")
		s.waitEvent(t, "mousedown:2:400,300")
		s.waitEvent(t, "contextmenu")
	})
	t.Run("middle_click", func(t *testing.T) {
		output(t, act(remotebrowser.ActionMiddleClick), "Middle clicked")
		s.waitEvent(t, "mousedown:1:400,300")
		s.waitEvent(t, "auxclick:1")
	})
	t.Run("double_click", func(t *testing.T) {
		output(t, act(remotebrowser.ActionDoubleClick), "Double clicked")
		s.waitEvent(t, "dblclick")
	})
	t.Run("left_click on the pad", func(t *testing.T) {
		output(t, act(remotebrowser.ActionLeftClick), "Left clicked")
		s.waitEvent(t, "click:400,300")
	})
	t.Run("left_click_drag", func(t *testing.T) {
		output(t, at(remotebrowser.ActionLeftClickDrag, 500, 350), "Left clicked and dragged to [500, 350]")
		s.waitEvent(t, "mouseup:0:500,350")
		output(t, act(remotebrowser.ActionCursorPosition), "X=500, Y=350")
	})
	t.Run("screenshot", func(t *testing.T) {
		out := do(t, act(remotebrowser.ActionScreenshot))
		if out.System == nil || *out.System != "take_screenshot" || out.Base64Image == nil {
			t.Fatalf("screenshot output %+v", out)
		}
		data, ok := strings.CutPrefix(*out.Base64Image, "data:image/png;base64,")
		if !ok {
			t.Fatalf("base64_image is not a PNG data URL: %.40s", *out.Base64Image)
		}
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
		if bd := img.Bounds(); bd.Dx() != 800 || bd.Dy() != 600 {
			t.Fatalf("screenshot is %v, want 800x600", bd)
		}
		if r, g, bl, _ := img.At(560, 250).RGBA(); r>>8 > 30 || g>>8 < 150 || bl>>8 > 30 {
			t.Errorf("the pad is not green in the screenshot: %d,%d,%d", r>>8, g>>8, bl>>8)
		}
		// The cursor is drawn with its tip at the mouse position: black outline, white inside.
		if r, g, bl, _ := img.At(500, 350).RGBA(); r|g|bl != 0 {
			t.Errorf("no cursor tip at 500,350")
		}
		if r, _, _, _ := img.At(501, 355).RGBA(); r>>8 != 255 {
			t.Errorf("no cursor fill at 501,355")
		}
	})
	t.Run("refresh", func(t *testing.T) {
		before := s.pageLoads()
		output(t, act(remotebrowser.ActionRefresh), "Refreshed page")
		if s.pageLoads() != before+1 {
			t.Fatalf("refresh did not reload the page (%d loads)", s.pageLoads())
		}
		output(t, act(remotebrowser.ActionCursorPosition), "X=400, Y=300") // a new page is set up again
	})
	t.Run("every call used the one page", func(t *testing.T) {
		resp, err := http.Get(b.HTTPURL + "/json/list")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var targets []struct{ Type, URL string }
		if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
			t.Fatal(err)
		}
		var pages []string
		for _, tg := range targets {
			if tg.Type == "page" {
				pages = append(pages, tg.URL)
			}
		}
		if len(pages) != 1 || pages[0] != pageURL {
			t.Fatalf("pages %v, want only %s", pages, pageURL)
		}
	})
	t.Run("through the registry, browser from the base URL", func(t *testing.T) {
		vars := map[string]string{integrations.EnvName("remote_browser", "BASE_URL"): b.HTTPURL}
		r := integrations.New(env.Guard, integrations.WithGetenv(func(k string) string { return vars[k] }))
		if err := r.Register(remotebrowser.Provider); err != nil {
			t.Fatal(err)
		}
		out, err := r.Execute(ctx, "remote_browser", "", map[string]any{"width": int64(800), "height": int64(600)}, map[string]any{"action": "cursor_position"})
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		want := map[string]any{"output": "X=400, Y=300", "error": nil, "base64_image": nil, "system": nil}
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("output %v, want %v", out, want)
		}
		_, err = r.Execute(ctx, "remote_browser", "perform_action", nil, map[string]any{"action": "wait_for_load"})
		if !fault.Is(err, fault.InvalidInput) || !strings.Contains(fault.FieldOf(err)+fault.Message(err), "action") {
			t.Fatalf("unknown action: err = %v", err)
		}
	})
	t.Run("calls leave no goroutines behind", func(t *testing.T) {
		// A warm Lambda runs many calls: each must release its connection and goroutines.
		do(t, act(remotebrowser.ActionCursorPosition))
		before := runtime.NumGoroutine()
		for range 5 {
			do(t, act(remotebrowser.ActionCursorPosition))
		}
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before+2 {
			t.Fatalf("%d goroutines after 5 calls, %d before", n, before)
		}
	})
	t.Run("a browser without a page gets one", func(t *testing.T) {
		for _, id := range pageIDs(t, b) {
			resp, err := http.Get(b.HTTPURL + "/json/close/" + id)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(pageIDs(t, b)) != 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		output(t, act(remotebrowser.ActionCursorPosition), "X=400, Y=300")
		if n := len(pageIDs(t, b)); n != 1 {
			t.Fatalf("%d pages after the call, want the one it opened", n)
		}
	})
	t.Run("navigate to a refused address is the provider's error", func(t *testing.T) {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + ln.Addr().String() + "/"
		_ = ln.Close()
		_, err = remotebrowser.PerformAction(ctx, env, setup, withText(remotebrowser.ActionNavigate, closed))
		if !fault.Is(err, fault.Provider) || !strings.Contains(fault.Message(err), "ERR_CONNECTION_REFUSED") {
			t.Fatalf("err = %v (kind %s)", err, fault.KindOf(err))
		}
	})
}

// pageIDs lists the browser's pages through its own HTTP endpoint.
func pageIDs(t *testing.T, b *chromium.Browser) []string {
	t.Helper()
	var ids []string
	for _, tg := range listTargets(t, b) {
		if tg.Type == "page" {
			ids = append(ids, tg.ID)
		}
	}
	return ids
}

func TestConnectFailuresAreTyped(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	notBrowser := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notBrowser.Close)
	tests := []struct {
		name string
		url  string
		kind fault.Kind
		msg  string
	}{
		{"connection refused (http)", "http://" + closed, fault.Transient, "could not connect"},
		{"connection refused (ws)", "ws://" + closed + "/devtools/browser/x", fault.Transient, "could not connect"},
		{"not a browser", notBrowser.URL, fault.Provider, "HTTP 404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := remotebrowser.PerformAction(context.Background(), loopbackEnv(t), remotebrowser.Setup{ConnectURL: tc.url}, remotebrowser.PerformActionArguments{Action: remotebrowser.ActionScreenshot})
			if !fault.Is(err, tc.kind) || !strings.Contains(fault.Message(err), tc.msg) {
				t.Fatalf("err = %v (kind %s), want %s saying %q", err, fault.KindOf(err), tc.kind, tc.msg)
			}
		})
	}
}

func TestRefusedByGuard(t *testing.T) {
	canary := netguardtest.NewCanary(t)
	trip, dialed := netguardtest.Tripwire(t)
	env := remotebrowser.Env{Guard: netguard.New(netguard.WithResolver(netguardtest.Resolver()), trip)}
	for _, target := range netguardtest.Targets(canary) {
		for _, u := range []string{target.URL, strings.Replace(target.URL, "http", "ws", 1) + "devtools/browser/x"} {
			_, err := remotebrowser.PerformAction(context.Background(), env, remotebrowser.Setup{}, remotebrowser.PerformActionArguments{ConnectURL: u, Action: remotebrowser.ActionScreenshot})
			if !fault.Is(err, fault.Forbidden) {
				t.Errorf("%s (%s): err = %v (kind %s), want Forbidden", target.Name, u, err, fault.KindOf(err))
			}
		}
	}
	if canary.Accepted() != 0 || dialed.Load() != 0 {
		t.Fatalf("refused targets were reached: %d accepted, %d dialed", canary.Accepted(), dialed.Load())
	}
}

func TestValidationNamesTheField(t *testing.T) {
	tests := []struct {
		name  string
		setup remotebrowser.Setup
		args  remotebrowser.PerformActionArguments
		field string
	}{
		{"unknown action", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "wait_for_load", ConnectURL: "ws://b.example/devtools/browser/x"}, "action"},
		{"type without text", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "type", ConnectURL: "ws://b.example/devtools/browser/x"}, "text"},
		{"key without text", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "key", Text: sp("")}, "text"},
		{"unknown key", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "key", Text: sp("ctrl+nosuchkey")}, "text"},
		{"empty key part", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "key", Text: sp("ctrl++")}, "text"},
		{"navigate to a file", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "navigate", Text: sp("file:///etc/passwd")}, "text"},
		{"navigate to javascript", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "navigate", Text: sp("javascript:alert(1)")}, "text"},
		{"mouse_move without coordinate", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "mouse_move"}, "coordinate"},
		{"drag with one number", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "left_click_drag", Coordinate: []int{1}}, "coordinate"},
		{"negative coordinate", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "mouse_move", Coordinate: []int{-1, 5}}, "coordinate"},
		{"width without height", remotebrowser.Setup{Width: ip(100)}, remotebrowser.PerformActionArguments{Action: "screenshot"}, "setup.width"},
		{"no connect_url", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "screenshot"}, "connect_url"},
		{"bad setup connect_url", remotebrowser.Setup{ConnectURL: "ftp://b.example/"}, remotebrowser.PerformActionArguments{Action: "screenshot"}, "setup.connect_url"},
		{"bad connect_url", remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "screenshot", ConnectURL: "b.example:9222"}, "connect_url"},
	}
	env := remotebrowser.Env{Guard: netguard.New()}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := remotebrowser.PerformAction(context.Background(), env, tc.setup, tc.args)
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field {
				t.Fatalf("err = %v (kind %s, field %q), want InvalidInput on %s", err, fault.KindOf(err), fault.FieldOf(err), tc.field)
			}
		})
	}
}

func TestSilentBrowser(t *testing.T) {
	// A "browser" that accepts the connection and never answers the websocket handshake.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	wsURL := "ws://" + ln.Addr().String() + "/devtools/browser/x"
	tests := []struct {
		name   string
		limit  time.Duration
		caller time.Duration
		kind   fault.Kind
	}{
		{"provider bound", 300 * time.Millisecond, time.Minute, fault.Transient},
		{"caller deadline", time.Minute, 300 * time.Millisecond, fault.Timeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.caller)
			defer cancel()
			env := loopbackEnv(t)
			env.Timeout = tc.limit
			_, err := remotebrowser.PerformAction(ctx, env, remotebrowser.Setup{ConnectURL: wsURL}, remotebrowser.PerformActionArguments{Action: remotebrowser.ActionScreenshot})
			if !fault.Is(err, tc.kind) {
				t.Fatalf("err = %v (kind %s), want %s", err, fault.KindOf(err), tc.kind)
			}
		})
	}
}

func TestKeyNames(t *testing.T) {
	// xdotool's names (what computer-use models send), Julep's three, DOM names and single
	// characters are all keys; validation passes them and stops only at the missing browser.
	env := remotebrowser.Env{Guard: netguard.New()}
	for _, text := range []string{"Return", "ctrl+a", "ctrl+shift+Page_Down", "super+l", "alt+Tab", "F5", "KP_Enter", "Escape", "BackSpace", "space", "Up", "ArrowLeft", "+", "shift+=", "ä"} {
		_, err := remotebrowser.PerformAction(context.Background(), env, remotebrowser.Setup{}, remotebrowser.PerformActionArguments{Action: "key", Text: sp(text)})
		if fault.FieldOf(err) != "connect_url" {
			t.Errorf("key %q: err = %v, want only the missing connect_url", text, err)
		}
	}
}
