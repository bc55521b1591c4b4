package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Stored XSS: each field the console renders holds payloads that run script (setting
// window.__xss) if a page turned text into markup, a URL into a link or closed an attribute early.
// Every page that shows the field must show the payload as text, run none of it and grow no
// element or attribute from it: the page's CSP would stop an injected handler from running, so
// markup that grew is a failure of its own.

// payloads, each short enough for a state's name (80 characters).
var payloads = []string{
	`<img src=x onerror="window.__xss=1">`,
	`"><svg onload=window.__xss=1>`,
	`javascript:window.__xss=1`,
	`</script><script>window.__xss=1</script>`,
	`'}*{color:red}' style='animation:pulse 1s' onanimationstart='window.__xss=1`, // pulse is app.css's
}

// namePayload breaks a quoted attribute with what Step Functions takes in a machine's or an
// execution's name (no whitespace, brackets, double quotes or colons).
const namePayload = `'onfocus='window.__xss=1'autofocus='`

// tagged is the payloads after a field's name, so that each field's text is told from the others'.
func tagged(field string) string { return field + ": " + strings.Join(payloads, " ") }

// payloadTurns are the scripted model's turns after echo_demo's: asked for the payloads, the model
// says them, calls echo with them and calls tools named after them, which it does not have; then
// it says them again.
func payloadTurns() []any {
	calls := []any{map[string]any{"id": "tc_payload_echo", "name": "echo", "arguments": map[string]any{"text": tagged("model's call arguments")}}}
	for i, p := range payloads {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("tc_payload_%d", i), "name": p, "arguments": map[string]any{}})
	}
	return []any{
		map[string]any{"expect": map[string]any{"last_role": "user", "contains": "payloads"},
			"reply": map[string]any{"content": tagged("model's reply"), "tool_calls": calls}},
		map[string]any{"expect": map[string]any{"last_role": "tool"},
			"reply": map[string]any{"content": tagged("model's last reply")}},
	}
}

// shown is a field and where a page shows it.
type shown struct {
	field string
	scope string   // CSS: the elements whose text shows it
	want  []string // each must be in their text, as it is or as JSON shows it
}

// payloadPage is a console page that shows fields holding payloads.
type payloadPage struct {
	dev    string
	route  string // "" for the page the tab is on
	ready  string // JavaScript, true once the page has drawn the fields
	click  string // a graph state to click first
	fields []shown
}

// payloadResult is what a page makes of a field (resultJS's answer, less shown: what the poll waits for).
type payloadResult struct {
	XSS   string   `json:"xss"`   // typeof window.__xss
	Grown []string `json:"grown"` // elements and attributes no console page makes
	Text  string   `json:"text"`  // the text of the field's elements
}

// resultJS gives a payloadResult for a field. Every <details> is opened first, and only elements
// drawn count (an SVG's titles are its tooltips); a page's own elements are one script (app.js),
// links within the page, and no inline handler, style or autofocus.
const resultJS = `((scope, wants) => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const text = [...document.querySelectorAll(scope)].filter(e => !(e instanceof HTMLElement) || e.checkVisibility()).map(e => e.textContent).join('\n');
  const grown = [];
  for (const e of document.querySelectorAll('*')) {
    const tag = e.tagName.toLowerCase();
    if (['img', 'iframe', 'object', 'embed', 'base', 'style', 'b'].includes(tag) || (tag === 'script' && e.getAttribute('src') !== 'app.js')) grown.push('<' + tag + '>');
    for (const a of e.attributes) {
      if (a.name.startsWith('on') || ['style', 'autofocus', 'srcdoc', 'formaction'].includes(a.name)) grown.push(tag + '[' + a.name + ']');
    }
    if (tag !== 'link' && e.hasAttribute('href') && !e.getAttribute('href').startsWith('#')) grown.push(tag + '[href=' + e.getAttribute('href') + ']');
  }
  const shown = wants.every(w => text.includes(w) || text.includes(JSON.stringify(w).slice(1, -1)));
  return { xss: typeof window.__xss, grown, text, shown };
})`

func fieldJS(f shown) string {
	wants, _ := json.Marshal(f.want)
	return fmt.Sprintf("%s(%s, %s)", resultJS, jsString(f.scope), wants)
}

// checkPayloads opens a page and checks each of its fields: shown as text, nothing run or grown.
func (b *tab) checkPayloads(p payloadPage) {
	b.t.Helper()
	if p.route != "" {
		// A document of its own for each page, so that what ran is the page's own doing.
		b.openAnew(p.dev, p.route)
	}
	b.until(p.route+" drawn", p.ready)
	if p.click != "" {
		b.clickState(p.click)
	}
	for _, f := range p.fields {
		// Wait until the field shows; what it shows is judged below.
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		_ = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](fieldJS(f)+".shown", chromedp.WithPollingTimeout(20*time.Second)))
		cancel()
	}
	time.Sleep(300 * time.Millisecond) // an injected image's error or animation's start fires late
	for _, f := range p.fields {
		r := eval[payloadResult](b, fieldJS(f))
		where := fmt.Sprintf("%s on %q (%s)", f.field, p.route, f.scope)
		if r.XSS != "undefined" {
			b.t.Errorf("%s: a payload ran: window.__xss is %s", where, r.XSS)
		}
		if len(r.Grown) > 0 {
			b.t.Errorf("%s: the page grew markup from a payload: %v", where, r.Grown)
		}
		for _, w := range f.want {
			if !strings.Contains(r.Text, w) && !strings.Contains(r.Text, jsonText(w)) {
				b.t.Errorf("%s: %q is not shown as text; the text is %.800q", where, w, r.Text)
			}
		}
	}
	b.shot(shotName(p.dev + p.route))
}

// shotName is a screenshot's file name for a page: its letters and digits, clipped.
func shotName(page string) string {
	name := []rune("payloads-" + strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, page))
	return string(name[:min(len(name), 120)])
}

// jsonText is s as a JSON string shows it, without its quotes and without HTML escapes.
func jsonText(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(strings.TrimSpace(buf.String()), `"`)[1:]
}

// clickState clicks a state of the graph, found by its name.
func (b *tab) clickState(state string) {
	b.t.Helper()
	b.until("click "+state, sel(`(() => { const g = [...document.querySelectorAll('#graph g.node, #graph g.box')].find(g => g.dataset.state === %s);
		if (!g) return false; g.querySelector('rect').dispatchEvent(new MouseEvent('click', { bubbles: true })); return true; })()`, jsString(state)))
}

func TestConsoleShowsStoredPayloadsAsText(t *testing.T) {
	h := local(t)
	for _, tc := range []struct {
		name  string
		pages func(t *testing.T, h *harness, b *tab) []payloadPage
	}{
		{"developer", developerPayloads},
		{"agent and its tools", agentPayloads},
		{"tool calls", toolCallPayloads},
		{"a user's state machine", machinePayloads},
		{"chat", chatPayloads},
		{"addresses", addressPayloads},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := h.browser(t)
			for _, p := range tc.pages(t, h, b) {
				b.checkPayloads(p)
			}
		})
	}
}

// developerPayloads: the developer id, from the token, in the page's header.
func developerPayloads(t *testing.T, h *harness, b *tab) []payloadPage {
	dev := tagged("developer")
	return []payloadPage{{dev: dev, route: "/agents", ready: `document.getElementById('developer').textContent.includes('developer:')`,
		fields: []shown{{"developer id", "#developer", []string{dev}}}}}
}

// agentPayloads: an agent's name, about, instructions, model and metadata, and its tools'
// descriptions, parameters, arguments, headers and the names of the secrets they use, on the
// agents list, the agent's page and the chat.
func agentPayloads(t *testing.T, h *harness, b *tab) []payloadPage {
	const dev = "payload-agent"
	a := h.must(t, dev, "POST", "/agents", map[string]any{"name": tagged("name"), "about": tagged("about"),
		"instructions": tagged("instructions"), "model": tagged("model"), "default_settings": map[string]any{"stop": []any{tagged("default settings")}},
		"metadata": map[string]any{"note": tagged("metadata value"), "key " + payloads[0]: "a metadata key"}})
	id := a["id"].(string)
	h.must(t, dev, "POST", "/agents/"+id+"/tools", map[string]any{"name": "payload_fn", "type": "function", "description": tagged("tool description"),
		"function": map[string]any{"description": tagged("function description"), "parameters": map[string]any{"type": "object",
			"properties": map[string]any{"q": map[string]any{"type": "string", "description": tagged("parameter description")}}}}})
	h.must(t, dev, "POST", "/agents/"+id+"/tools", map[string]any{"name": "payload_echo", "type": "integration",
		"integration": map[string]any{"provider": "dummy", "method": "echo", "arguments": map[string]any{"text": tagged("integration arguments")}}})
	h.must(t, dev, "POST", "/agents/"+id+"/tools", map[string]any{"name": "payload_api", "type": "api_call",
		"api_call": map[string]any{"method": "GET", "url": "http://127.0.0.1:9/?q=" + url.QueryEscape(payloads[0]),
			"headers": map[string]any{"X-Note": tagged("api_call header")}, "secrets": map[string]any{"key": map[string]any{"name": tagged("secret name")}}}})
	card := sel(`a[data-agent=%s]`, jsString(id))
	tool := `#agent-tools tr[data-tool="payload_fn"]`
	return []payloadPage{
		{dev: dev, route: "/agents", ready: sel(`document.querySelector(%s) !== null`, jsString(card)), fields: []shown{
			{"agent name", card + " h2", []string{tagged("name")}},
			{"agent about", card + " p", []string{tagged("about")}}}},
		{dev: dev, route: "/agents/" + id, ready: `document.querySelector('#agent-tools tr[data-tool="payload_echo"]') !== null`, fields: []shown{
			{"agent name", "main h1", []string{tagged("name")}},
			{"agent model", "main .kv", []string{tagged("model")}},
			{"metadata", "#agent-metadata", []string{tagged("metadata value"), "key " + payloads[0]}},
			{"tool description", tool + " td:nth-child(3)", []string{tagged("tool description")}},
			{"tool definition", tool + " pre", []string{tagged("function description"), tagged("parameter description")}},
			{"tool name", "#agent-tools", []string{"payload_fn", "payload_echo"}},
			{"integration arguments", `#agent-tools tr[data-tool="payload_echo"] pre`, []string{tagged("integration arguments")}},
			{"api_call header and secret name", `#agent-tools tr[data-tool="payload_api"] pre`, []string{tagged("api_call header"), tagged("secret name"), "http://127.0.0.1:9/?q=" + url.QueryEscape(payloads[0])}},
			{"agent instructions, about and settings", "main > details pre", []string{tagged("instructions"), tagged("about"), tagged("default settings")}}}},
		{dev: dev, route: "/chat?agent=" + id, ready: `document.querySelector('#chat-agent option') !== null`, fields: []shown{
			{"agent name", "#chat-agent", []string{tagged("name")}}}},
	}
}

// toolCallPayloads: a tool call's arguments, result and error (its type and message, and the
// cause the history holds), on the execution's page and the pending calls' page. A tool_call
// execution shows its result as Dispatch's output (its card shows a result only in agent_loop,
// which the chat's payloads cover).
func toolCallPayloads(t *testing.T, h *harness, b *tab) []payloadPage {
	const dev = "payload-calls"
	agent := h.agent(t, dev, nil)
	echo := h.toolCall(t, dev, agent, "echo", map[string]any{"text": tagged("call arguments")})
	pending := h.toolCall(t, dev, agent, "ask_user", map[string]any{"question": tagged("pending call arguments")})
	failed := h.toolCall(t, dev, agent, "ask_user", map[string]any{"question": "fail?"})
	answered := h.toolCall(t, dev, agent, "ask_user", map[string]any{"question": "answer?"})
	h.pendingCall(t, dev, pending)
	h.must(t, dev, "POST", "/executions/"+failed+"/calls/"+h.pendingCall(t, dev, failed)+"/result",
		map[string]any{"error": map[string]any{"type": tagged("error type"), "message": tagged("error message")}})
	h.must(t, dev, "POST", "/executions/"+answered+"/calls/"+h.pendingCall(t, dev, answered)+"/result",
		map[string]any{"output": map[string]any{"answer": tagged("call output")}})
	h.waitExecution(t, dev, echo, "succeeded")
	h.waitExecution(t, dev, answered, "succeeded")
	done := func(status string) string {
		return sel(`document.querySelector('#exec-status[data-status=%s]') !== null && document.querySelector('#events tr') !== null`, jsString(status))
	}
	return []payloadPage{
		{dev: dev, route: "/executions/tool_call/" + echo, ready: done("SUCCEEDED"), fields: []shown{
			{"execution input", "#state-panel pre", []string{tagged("call arguments")}}}},
		{dev: dev, route: "/executions/tool_call/" + echo, ready: done("SUCCEEDED"), click: "Dispatch", fields: []shown{
			{"call arguments", "#calls .call details pre", []string{tagged("call arguments")}},
			{"state input", "#state-panel .state-input", []string{tagged("call arguments")}},
			{"state output", "#state-panel .state-output", []string{tagged("call arguments")}},
			{"history", "#events", []string{tagged("call arguments")}}}},
		{dev: dev, route: "/executions/tool_call/" + pending, ready: `document.querySelector('#calls form.answer') !== null`, fields: []shown{
			{"pending call arguments", "#calls .call details pre", []string{tagged("pending call arguments")}}}},
		{dev: dev, route: "/calls", ready: `document.querySelector('#pending-calls .call[data-call] pre') !== null`, fields: []shown{
			{"pending call arguments", "#pending-calls .call pre", []string{tagged("pending call arguments")}}}},
		{dev: dev, route: "/executions/tool_call/" + failed, ready: `document.querySelector('#graph g.node[data-state="Dispatch"][data-status="caught"]') !== null`, click: "Dispatch", fields: []shown{
			{"call error", "#calls .call-error", []string{tagged("error type"), tagged("error message")}},
			{"state error and cause", "#state-panel .state-error", []string{tagged("error type"), tagged("error message")}},
			{"history error and cause", "#events", []string{tagged("error type"), tagged("error message")}}}},
		{dev: dev, route: "/executions/tool_call/" + answered, ready: done("SUCCEEDED"), click: "Dispatch", fields: []shown{
			{"function call output", "#state-panel .state-output", []string{tagged("call output")}},
			{"history", "#events", []string{tagged("call output")}}}},
	}
}

// payloadTask's resource names a Lambda function after a payload; there is no such function.
const payloadTask, payloadResource = "payload task", `arn:aws:lambda:us-east-1:000000000000:function:<img src=x onerror="window.__xss=1">`

// payloadDefinition is a user's state machine whose states are named by the payloads, with
// payloads in its comment, a choice, a task's resource, a retry, a catch and its failures'
// errors and causes.
func payloadDefinition() string {
	img, svg, js, script, css := payloads[0], payloads[1], payloads[2], payloads[3], payloads[4]
	def := map[string]any{"Comment": tagged("comment"), "StartAt": img, "States": map[string]any{
		img: map[string]any{"Type": "Pass", "Result": tagged("pass result"), "ResultPath": "$.p", "Next": svg},
		svg: map[string]any{"Type": "Choice", "Default": js,
			"Choices": []any{map[string]any{"Variable": "$.c", "StringEquals": img, "Next": js}, map[string]any{"Variable": "$.p", "IsPresent": true, "Next": payloadTask}}},
		payloadTask: map[string]any{"Type": "Task", "Resource": payloadResource, "Next": js,
			"Catch": []any{map[string]any{"ErrorEquals": []any{"States.ALL"}, "ResultPath": "$.t", "Next": script}}},
		script: map[string]any{"Type": "Parallel", "Next": js,
			"Branches": []any{map[string]any{"StartAt": css, "States": map[string]any{
				css: map[string]any{"Type": "Fail", "Error": tagged("branch error"), "Cause": tagged("branch cause")}}}},
			"Retry": []any{map[string]any{"ErrorEquals": []any{img}, "MaxAttempts": 1}},
			"Catch": []any{map[string]any{"ErrorEquals": []any{svg}, "Next": js}, map[string]any{"ErrorEquals": []any{"States.ALL"}, "ResultPath": "$.caught", "Next": js}}},
		js: map[string]any{"Type": "Fail", "Error": tagged("execution error"), "Cause": tagged("execution cause")},
	}}
	b, _ := json.Marshal(def)
	return string(b)
}

// machinePayloads: a user's own state machine (made through the Step Functions API), its
// execution's name, input, error and cause, and its states' names, labels, runs and history.
func machinePayloads(t *testing.T, h *harness, b *tab) []payloadPage {
	const dev = "payload-machine"
	machine, name := "payload-machine"+namePayload, "payload-execution"+namePayload
	usersOwn(t, h, machine, payloadDefinition(), name, `{"c":"no","note":`+jsString(tagged("execution input"))+`}`)
	path := "/console/api/executions/" + url.PathEscape(machine) + "/" + url.PathEscape(name)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if x := h.must(t, dev, "GET", path, nil); x["status"] != "RUNNING" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still running after a minute", name)
		}
	}
	states := []string{payloads[0], payloads[1], payloads[2], payloads[3], payloads[4], payloadTask}
	card := sel(`a[data-machine=%s]`, jsString(machine))
	statesJS, _ := json.Marshal(states)
	graph := sel(`%s.every(s => [...document.querySelectorAll('#graph g.node, #graph g.box')].some(g => g.dataset.state === s))`, statesJS)
	exec := "/executions/" + url.PathEscape(machine) + "/" + url.PathEscape(name)
	failed := `document.querySelector('#exec-status[data-status="FAILED"]') !== null && document.querySelector('#events tr') !== null`
	retry := "Retry ×1 on " + payloads[0][:20]
	return []payloadPage{
		{dev: dev, route: "/machines", ready: sel(`document.querySelector(%s) !== null`, jsString(card)), fields: []shown{
			{"machine name", card + " h2", []string{machine}}}},
		{dev: dev, route: "/machines/" + url.PathEscape(machine), ready: graph, click: payloads[3], fields: []shown{
			{"machine name", "main h1", []string{machine}},
			{"state names", "#graph text", states},
			{"choice label", "#graph g.edge.choice text", []string{payloads[0][:19]}},
			{"catch label", "#graph g.edge.catch title", []string{"Catch " + payloads[1]}},
			{"selected state", "#state-panel", []string{payloads[3], tagged("branch error")}},
			{"definition", "main > details pre", []string{tagged("comment"), tagged("execution cause")}}}},
		{dev: dev, route: "/executions?machine=" + url.QueryEscape(machine), ready: sel(`document.querySelector(%s) !== null`, jsString(sel(`#executions tr[data-execution=%s]`, jsString(name)))), fields: []shown{
			{"execution name", "#executions", []string{name, machine}},
			{"machine filter", "#f-machine", []string{machine}}}},
		{dev: dev, route: exec, ready: failed, fields: []shown{
			{"execution name", "main h1", []string{name}},
			{"execution machine", "main .kv a", []string{machine}},
			{"execution error and cause", "main .kv .error", []string{tagged("execution error"), tagged("execution cause")}},
			{"execution input", "#state-panel pre", []string{tagged("execution input")}},
			{"history", "#events", append([]string{tagged("execution error"), tagged("execution cause")}, states...)}}},
		{dev: dev, route: exec, ready: failed, click: payloads[0], fields: []shown{
			{"state output", "#state-panel .state-output", []string{tagged("pass result")}}}},
		{dev: dev, route: exec, ready: failed, click: payloadTask, fields: []shown{
			{"state resource", "#state-panel .kv", []string{payloadResource}},
			{"task error and cause", "#state-panel .state-error", []string{"Lambda.ResourceNotFoundException", "Function not found: " + payloadResource}}}},
		{dev: dev, route: exec, ready: failed, click: payloads[3], fields: []shown{
			{"state retry", "#state-panel .kv", []string{retry}},
			{"state input", "#state-panel .state-input", []string{tagged("pass result")}}}},
	}
}

// chatPayloads: what a developer types, a function call's answer, the model's replies and the
// names of tools it asks for, in a chat the page runs.
func chatPayloads(t *testing.T, h *harness, b *tab) []payloadPage {
	const dev = "payload-chat"
	agent := h.agent(t, dev, nil)
	b.open(dev, "/chat?agent="+agent)
	b.run("say it", chromedp.WaitVisible(chromedp.CSS("#chat-input")), b.set("#chat-input", "please echo "+tagged("message")), b.click("#chat-send"))
	b.until("ask_user waits", `document.querySelector('#chat-calls form.answer') !== null`)
	b.run("answer it", b.set(`#chat-calls form.answer textarea[data-field="output"]`, jsString("yes "+tagged("answer"))),
		b.click(`#chat-calls form.answer button[type=submit]`))
	b.until("the first turn's end", `[...document.querySelectorAll('#chat-log .msg.assistant')].some(m => m.textContent.includes('hello hello'))`)
	b.run("ask for the payloads", b.set("#chat-input", "now the payloads"), b.click("#chat-send"))
	last := `[...document.querySelectorAll('#chat-log .msg.assistant')].some(m => m.textContent.includes("model's last reply"))`
	return []payloadPage{{dev: dev, ready: last, fields: []shown{
		{"developer's message", "#chat-log .msg.user", []string{tagged("message")}},
		{"function call's answer", "#chat-log .msg.tool", []string{tagged("answer")}},
		{"model's reply", "#chat-log .msg.assistant", []string{tagged("model's reply"), tagged("model's last reply")}},
		{"tools the model asked for", "#chat-log .msg.assistant .muted", payloads},
		{"tool message names", "#chat-log .msg.tool .role", payloads},
		{"call arguments", "#chat-calls .call details pre", []string{tagged("model's call arguments")}},
		{"call result", "#chat-calls .call-result", []string{tagged("model's call arguments")}},
	}}}
}

// addressPayloads: a page's address is the developer's to type (or a link's to set), and its
// parts reach the page in the API's error messages.
func addressPayloads(t *testing.T, h *harness, b *tab) []payloadPage {
	const dev = "payload-address"
	refused := `document.querySelector('main .error') !== null`
	var pages []payloadPage
	for _, p := range payloads {
		pages = append(pages,
			payloadPage{dev: dev, route: "/machines/" + url.PathEscape(p), ready: refused, fields: []shown{{"machine in the address", "main .error", []string{p}}}},
			payloadPage{dev: dev, route: "/executions/tool_call/" + url.PathEscape(p), ready: refused, fields: []shown{{"execution in the address", "main .error", []string{"Sinew."}}}},
			payloadPage{dev: dev, route: "/exec/" + url.PathEscape(p), ready: refused, fields: []shown{{"execution id in the address", "main .error", []string{"Sinew."}}}})
	}
	return pages
}

// The page's one way to draw (app.js's el) keeps links within the page and takes no code in a
// string, whatever a caller passes it.
func TestConsoleDrawsLinksOnlyWithinThePage(t *testing.T) {
	h := local(t)
	b := h.browser(t)
	b.open("links-dev", "/agents")
	b.until("the page", `typeof el === 'function' && document.querySelector('main h1') !== null`)
	for _, tc := range []struct {
		name, attrs, attr string
		kept              bool
	}{
		{"a route of the page", `{href: '#/agents/x'}`, "href", true},
		{"javascript:", `{href: 'javascript:window.__xss=1'}`, "href", false},
		{"javascript: in capitals after a space", `{href: ' JaVaScRiPt:window.__xss=1'}`, "href", false},
		{"data:", `{href: 'data:text/html,<script>window.__xss=1</script>'}`, "href", false},
		{"another site", `{href: 'https://example.com/'}`, "href", false},
		{"another site without a scheme", `{href: '//example.com/'}`, "href", false},
		{"HREF in capitals", `{HREF: 'javascript:window.__xss=1'}`, "href", false},
		{"a handler in a string", `{onclick: 'window.__xss=1'}`, "onclick", false},
		{"a handler in capitals", `{ONCLICK: 'window.__xss=1'}`, "onclick", false},
		{"a value that closes its quote", `{class: 'x" onclick="window.__xss=1'}`, "class", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := eval[map[string]any](b, sel(`(() => { const a = el('a', %s, 'x'); document.body.append(a);
				return { kept: a.hasAttribute(%s), attrs: a.getAttributeNames(), xss: typeof window.__xss }; })()`, tc.attrs, jsString(tc.attr)))
			if got["kept"] != tc.kept || got["xss"] != "undefined" {
				t.Errorf("el('a', %s): %v, want %s kept: %v", tc.attrs, got, tc.attr, tc.kept)
			}
			if names, _ := got["attrs"].([]any); len(names) > 1 {
				t.Errorf("el('a', %s) has attributes %v, want at most %s", tc.attrs, names, tc.attr)
			}
		})
	}
}
