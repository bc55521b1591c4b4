package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"sinew/internal/config"
	"sinew/internal/testenv/chromium"
	"sinew/internal/testenv/localmode"
)

// Local mode (./infra/local) built and started once for the package's tests, with the scripted
// model, and driven as a person would: headless Chromium on its console, and the HTTP API.

// EnvScreenshots names the directory that keeps a screenshot of each page the tests visit
// (a temporary directory when unset; its path is logged).
const EnvScreenshots = "SINEW_CONSOLE_SCREENSHOTS"

var (
	localOnce sync.Once
	localProc *harness
	localErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if localProc != nil {
		localProc.Kill()
		_ = os.RemoveAll(localProc.tmp)
	}
	os.Exit(code)
}

type harness struct {
	*localmode.Proc
	tmp    string
	bin    string
	root   string
	tokMu  sync.Mutex
	tokens map[string]string
}

func local(t *testing.T) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("starts local mode (a child process and DynamoDB Local) and Chromium")
	}
	localOnce.Do(func() { localProc, localErr = startLocal() })
	if localErr != nil {
		t.Fatal(localErr)
	}
	return localProc
}

func startLocal() (*harness, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "sinew-console-")
	if err != nil {
		return nil, err
	}
	h := &harness{tmp: tmp, root: root, tokens: map[string]string{}}
	if h.bin, err = localmode.Build(root, filepath.Join(tmp, "local")); err != nil {
		return nil, err
	}
	// The scripted model: nothing here may reach a real model endpoint. DynamoDB Local is make
	// test's shared one when SINEW_TEST_DYNAMODB_ENDPOINT names it (each test has developers of
	// its own), else local mode's own.
	script, err := modelScript(root, tmp)
	if err != nil {
		return nil, err
	}
	env := os.Environ()
	env = append(env, config.EnvModel+"=scripted:"+script)
	if h.Proc, err = localmode.Start(h.bin, filepath.Join(tmp, "data"), []string{"--in-memory", "--root", root}, env); err != nil {
		return nil, err
	}
	return h, nil
}

// modelScript writes the scripted model's script: echo_demo's turns (the chat tests' first turn
// and its answer), then payloadTurns, which a session's next message plays.
func modelScript(root, tmp string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "events/models/echo_demo.json"))
	if err != nil {
		return "", err
	}
	var script map[string]any
	if err := json.Unmarshal(b, &script); err != nil {
		return "", fmt.Errorf("echo_demo.json: %w", err)
	}
	turns, _ := script["turns"].([]any)
	script["turns"] = append(turns, payloadTurns()...)
	if b, err = json.Marshal(script); err != nil {
		return "", err
	}
	p := filepath.Join(tmp, "model.json")
	return p, os.WriteFile(p, b, 0o644)
}

// token is a JWT for developer dev from local mode's own signer.
func (h *harness) token(t *testing.T, dev string) string {
	t.Helper()
	h.tokMu.Lock()
	defer h.tokMu.Unlock()
	if tok, ok := h.tokens[dev]; ok {
		return tok
	}
	out, err := exec.Command(h.bin, "token", "--dir", h.Dir, dev).Output()
	if err != nil {
		t.Fatalf("local token %s: %v", dev, err)
	}
	h.tokens[dev] = strings.TrimSpace(string(out))
	return h.tokens[dev]
}

// call sends one HTTP request as dev ("" for no token) and gives the status and decoded body.
func (h *harness) call(t *testing.T, dev, method, path string, body any, hdr ...string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.Endpoints["http"]+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if dev != "" {
		req.Header.Set("Authorization", "Bearer "+h.token(t, dev))
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// must sends a request that must succeed.
func (h *harness) must(t *testing.T, dev, method, path string, body any) map[string]any {
	t.Helper()
	status, out := h.call(t, dev, method, path, body)
	if status/100 != 2 {
		t.Fatalf("%s %s as %s: %d %v", method, path, dev, status, out)
	}
	return out
}

// agent makes an agent of dev's with the echo integration and the ask_user function tool.
func (h *harness) agent(t *testing.T, dev string, metadata map[string]any) string {
	t.Helper()
	a := h.must(t, dev, "POST", "/agents", map[string]any{"name": "helper of " + dev, "metadata": metadata})
	id := a["id"].(string)
	h.must(t, dev, "POST", "/agents/"+id+"/tools", map[string]any{"name": "echo", "type": "integration",
		"integration": map[string]any{"provider": "dummy", "method": "echo"}})
	h.must(t, dev, "POST", "/agents/"+id+"/tools", map[string]any{"name": "ask_user", "type": "function",
		"function": map[string]any{"description": "ask the user a question", "parameters": map[string]any{"type": "object"}}})
	return id
}

// toolCall starts a tool call on tool_call (Prefer: respond-async), whose history the console
// draws, and gives its execution id.
func (h *harness) toolCall(t *testing.T, dev, agent, tool string, args map[string]any) string {
	t.Helper()
	status, out := h.call(t, dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": tool, "arguments": args}, "Prefer", "respond-async")
	if status != http.StatusAccepted {
		t.Fatalf("POST /tool-calls as %s: %d %v", dev, status, out)
	}
	return out["execution_id"].(string)
}

// waitExecution waits until the API says the execution has the status (a guard against a hang,
// not a time bound), and gives the execution.
func (h *harness) waitExecution(t *testing.T, dev, id, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		x := h.must(t, dev, "GET", "/executions/"+id, nil)
		if x["status"] == status {
			return x
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s is %v, not %s, after 2 minutes", id, x["status"], status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pendingCall waits for the execution's one pending call and gives its id.
func (h *harness) pendingCall(t *testing.T, dev, id string) string {
	t.Helper()
	x := h.waitExecution(t, dev, id, "awaiting_input")
	calls, _ := x["pending_calls"].([]any)
	if len(calls) != 1 {
		t.Fatalf("execution %s has pending calls %v, want one", id, calls)
	}
	return calls[0].(map[string]any)["call_id"].(string)
}

// ---- the browser ----

var (
	shotsOnce sync.Once
	shotsDir  string
)

func screenshots(t *testing.T) string {
	shotsOnce.Do(func() {
		shotsDir = os.Getenv(EnvScreenshots)
		if shotsDir == "" {
			shotsDir, _ = os.MkdirTemp("", "sinew-console-screenshots-")
		}
		_ = os.MkdirAll(shotsDir, 0o755)
	})
	return shotsDir
}

type tab struct {
	t     *testing.T
	h     *harness
	ctx   context.Context
	loads int // openAnew's documents
}

// browser opens a tab of a new headless Chromium, for the test's length.
func (h *harness) browser(t *testing.T) *tab {
	t.Helper()
	b := chromium.Start(t)
	actx, cancelA := remote.NewAllocator(context.Background(), b.WSURL, remote.NoModifyURL)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1500, 1000)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return &tab{t: t, h: h, ctx: ctx}
}

// open shows a console page (a hash route) as dev.
func (b *tab) open(dev, route string) {
	b.t.Helper()
	b.navigate(dev, route, "")
}

// openAnew shows a console page in a document of its own: open, on a tab already on the
// console, changes only the address's fragment, and the page's window lives on.
func (b *tab) openAnew(dev, route string) {
	b.t.Helper()
	b.loads++
	b.navigate(dev, route, fmt.Sprintf("?load=%d", b.loads))
}

func (b *tab) navigate(dev, route, query string) {
	b.t.Helper()
	sep := "?"
	if strings.Contains(route, "?") {
		sep = "&"
	}
	u := b.h.Endpoints["http"] + "/console/" + query + "#" + route + sep + "token=" + b.h.token(b.t, dev)
	b.run("open "+route, chromedp.Navigate(u))
}

// run runs browser actions, bounded so that a missing element fails the test instead of hanging it.
func (b *tab) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fail(what, err)
	}
}

func (b *tab) fail(what string, err error) {
	b.t.Helper()
	text, _ := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("main")))
	b.shot("failed-" + strings.NewReplacer("/", "_", " ", "_").Replace(what))
	b.t.Fatalf("%s: %v\npage: %.1500s", what, err, text)
}

// until waits until a JavaScript expression is true on the page.
func (b *tab) until(what, expr string) {
	b.t.Helper()
	_, err := reevaluated(b, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(90*time.Second)))
	})
	if err != nil {
		b.fail(what, err)
	}
}

// eval evaluates a JavaScript expression on the page.
func eval[T any](b *tab, expr string) T {
	b.t.Helper()
	v, err := reevaluated(b, func(ctx context.Context) (T, error) {
		return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	})
	if err != nil {
		b.fail("evaluate "+expr, err)
	}
	return v
}

// reevaluated runs f, which only reads the page, again when the page's document was replaced
// under it (a navigation that had not settled: Chromium's "Cannot find context with specified
// id"), a few times at most.
func reevaluated[T any](b *tab, f func(context.Context) (T, error)) (T, error) {
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
		v, err := f(ctx)
		cancel()
		if err == nil || try == 3 || !strings.Contains(err.Error(), "Cannot find context with specified id") {
			return v, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// text is the text of the first element a CSS selector matches.
func (b *tab) text(css string) string {
	b.t.Helper()
	return eval[string](b, fmt.Sprintf(`(document.querySelector(%s) || {}).innerText || ''`, jsString(css)))
}

func (b *tab) click(css string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(css))
}

func (b *tab) set(css, value string) chromedp.Action[chromedp.Void] {
	return chromedp.SetValue(chromedp.CSS(css), value)
}

// shot keeps a screenshot of the whole page.
func (b *tab) shot(name string) string {
	b.t.Helper()
	return b.capture(name, chromedp.FullScreenshot(100))
}

// viewShot keeps a screenshot of what the window shows (the page's top), as a person sees it.
func (b *tab) viewShot(name string) string {
	b.t.Helper()
	eval[bool](b, `(window.scrollTo(0, 0), true)`)
	return b.capture(name, chromedp.CaptureScreenshot())
}

func (b *tab) capture(name string, shoot chromedp.Action[[]byte]) string {
	b.t.Helper()
	buf, err := chromedp.Run(b.ctx, shoot)
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	p := filepath.Join(screenshots(b.t), name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
	}
	b.t.Logf("screenshot: %s", p)
	return p
}

// nodeStatuses are the graph's states and how each is coloured.
func (b *tab) nodeStatuses() map[string]string {
	return eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('#graph g.node, #graph g.box')].map(g => [g.dataset.state, g.dataset.status]))`)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func sel(format string, args ...any) string { return fmt.Sprintf(format, args...) }
