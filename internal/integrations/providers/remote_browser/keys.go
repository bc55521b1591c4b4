package remotebrowser

import (
	"context"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"sinew/internal/fault"
)

// Keys: the names computer-use models and Julep send (xdotool's), their combinations, and the
// key events that press them.

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
