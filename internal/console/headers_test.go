package console_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// cspDirectives parses a Content-Security-Policy into its directives' sources.
func cspDirectives(policy string) map[string][]string {
	out := map[string][]string{}
	for _, d := range strings.Split(policy, ";") {
		if f := strings.Fields(d); len(f) > 0 {
			out[strings.ToLower(f[0])] = f[1:]
		}
	}
	return out
}

// Every answer under /console/ tells the browser to run only the console's own script file
// (no inline script, no eval, no markup built from strings), never to guess a content type,
// never to be framed and never to tell another site its address.
func TestConsoleSendsSecurityHeaders(t *testing.T) {
	h := local(t)
	const dev = "headers-dev"
	for _, tc := range []struct {
		name, path, dev, host string
		status                int
	}{
		{"the console without its slash", "/console", "", "", http.StatusMovedPermanently},
		{"the page", "/console/", "", "", http.StatusOK},
		{"the page by its file name", "/console/index.html", "", "", http.StatusMovedPermanently},
		{"the script", "/console/app.js", "", "", http.StatusOK},
		{"the style sheet", "/console/app.css", "", "", http.StatusOK},
		{"a file that is not there", "/console/nothing.html", "", "", http.StatusNotFound},
		{"a JSON route without a token", "/console/api/machines", "", "", http.StatusUnauthorized},
		{"a JSON route", "/console/api/machines", dev, "", http.StatusOK},
		{"a JSON route's error", "/console/api/executions/tool_call/nope", dev, "", http.StatusNotFound},
		{"another host's name", "/console/", "", "attacker.example", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, h.Endpoints["http"]+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.dev != "" {
				req.Header.Set("Authorization", "Bearer "+h.token(t, tc.dev))
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.host != "" {
				// Local mode's guard answers another host before the console sees the request,
				// with a policy that lets nothing run at all.
				checkRefusalHeaders(t, resp.Header)
				return
			}
			checkSecurityHeaders(t, resp.Header)
		})
	}
}

func checkRefusalHeaders(t *testing.T, hd http.Header) {
	t.Helper()
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
		if got := hd.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	csp := cspDirectives(hd.Get("Content-Security-Policy"))
	for _, d := range []string{"default-src", "frame-ancestors", "base-uri"} {
		if !slices.Equal(csp[d], []string{"'none'"}) {
			t.Errorf("Content-Security-Policy %s: %q, want 'none' (policy %q)", d, csp[d], hd.Get("Content-Security-Policy"))
		}
	}
}

func checkSecurityHeaders(t *testing.T, hd http.Header) {
	t.Helper()
	if got := hd.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options: %q, want nosniff", got)
	}
	if got := hd.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("X-Frame-Options: %q, want DENY", got)
	}
	if got := hd.Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("Referrer-Policy: %q, want no-referrer", got)
	}
	csp := cspDirectives(hd.Get("Content-Security-Policy"))
	for _, want := range []struct {
		directive string
		sources   []string
	}{
		{"script-src", []string{"'self'"}},
		{"style-src", []string{"'self'"}},
		{"object-src", []string{"'none'"}},
		{"base-uri", []string{"'none'"}},
		{"frame-ancestors", []string{"'none'"}},
		{"require-trusted-types-for", []string{"'script'"}},
		{"trusted-types", []string{"'none'"}},
	} {
		if got, ok := csp[want.directive]; !ok || !slices.Equal(got, want.sources) {
			t.Errorf("Content-Security-Policy %s: %q, want %q (policy %q)", want.directive, got, want.sources, hd.Get("Content-Security-Policy"))
		}
	}
}

// The browser holds the console to its policy: script that the page did not load from its own
// file does not run, in any form an injection could take.
func TestConsolePolicyStopsInlineScript(t *testing.T) {
	h := local(t)
	b := h.browser(t)
	b.open("policy-dev", "/agents")
	b.until("the agents page", `document.querySelector('main h1') !== null && document.querySelector('main h1').textContent === 'Agents'`)
	b.run("inject", chromedp.Evaluate[chromedp.Void](`(() => {
		window.__tried = {};
		const s = document.createElement('script');
		try { s.textContent = 'window.__ran_inline = 1'; } catch (e) { window.__tried.inline = e.name; }
		document.body.append(s);
		const d = document.createElement('div');
		try { d.setAttribute('onclick', 'window.__ran_handler = 1'); } catch (e) { window.__tried.handler = e.name; }
		document.body.append(d);
		d.click();
		const a = document.createElement('a');
		try { a.href = 'javascript:window.__ran_url = 1'; } catch (e) { window.__tried.url = e.name; }
		document.body.append(a);
		a.click();
		const div = document.createElement('div');
		try { div.innerHTML = '<img src=x onerror="window.__ran_html = 1">'; } catch (e) { window.__tried.html = e.name; }
		document.body.append(div);
		try { setTimeout('window.__ran_timer = 1', 0); } catch (e) { window.__tried.timer = e.name; }
		try { eval('window.__ran_eval = 1'); } catch (e) { window.__tried.eval = e.name; }
		try { new Function('window.__ran_function = 1')(); } catch (e) { window.__tried.function = e.name; }
	})()`, func(p *runtime.EvaluateParams) { p.AllowUnsafeEvalBlockedByCSP = new(false) }))
	time.Sleep(500 * time.Millisecond) // the timer's and the link's turn
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	ran, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Object.keys(window).filter(k => k.startsWith('__ran_'))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) > 0 {
		t.Errorf("script the page did not load ran: %v", ran)
	}
	// Trusted Types refuse markup and handlers built from strings before the policy has to stop
	// them from running.
	for what, want := range map[string]string{"eval": "EvalError", "function": "EvalError", "html": "TypeError", "handler": "TypeError", "inline": "TypeError"} {
		if got := eval[string](b, `window.__tried.`+what+` || ''`); got != want {
			t.Errorf("%s: %q, want a %s", what, got, want)
		}
	}
}
