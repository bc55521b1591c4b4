package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/chromedp/chromedp"

	"sinew/internal/localaws/sfnapi"
)

// allStates lists every state of a definition file, nested ones too.
func allStates(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var def map[string]any
	if err := json.Unmarshal(b, &def); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(scope map[string]any)
	walk = func(scope map[string]any) {
		states, _ := scope["States"].(map[string]any)
		for name, s := range states {
			out = append(out, name)
			st := s.(map[string]any)
			for _, k := range []string{"ItemProcessor", "Iterator"} {
				if sub, ok := st[k].(map[string]any); ok {
					walk(sub)
				}
			}
			branches, _ := st["Branches"].([]any)
			for _, br := range branches {
				walk(br.(map[string]any))
			}
		}
	}
	walk(def)
	slices.Sort(out)
	return out
}

func TestConsoleDrawsEveryStateOfSinewsMachines(t *testing.T) {
	h := local(t)
	b := h.browser(t)
	for _, m := range []string{"tool_call", "agent_loop"} {
		b.open("graph-dev", "/machines/"+m)
		b.until("the graph of "+m, `document.querySelector('#graph g.node[data-state="Model"], #graph g.node[data-state="Prepare"]') !== null`)
		drawn := eval[[]string](b, `[...document.querySelectorAll('#graph g.node, #graph g.box')].map(g => g.dataset.state).filter(s => !s.includes('/'))`)
		slices.Sort(drawn)
		if want := allStates(t, filepath.Join(h.root, "statemachines", m+".asl.json")); !slices.Equal(drawn, want) {
			t.Errorf("%s: drawn states %v, want %v", m, drawn, want)
		}
		kinds := eval[map[string]int](b, `[...document.querySelectorAll('#graph g.edge')].reduce((m, e) => (m[e.dataset.kind] = (m[e.dataset.kind] || 0) + 1, m), {})`)
		want := []string{"next", "choice", "default", "catch", "retry"}
		if m == "tool_call" {
			want = []string{"next", "choice", "default", "catch", "retry", "end"} // Prepared routes a bare start's call
		}
		for _, k := range want {
			if kinds[k] == 0 {
				t.Errorf("%s: no %s edge drawn (%v)", m, k, kinds)
			}
		}
		b.shot("machine-" + m)
	}
	// A Map's states are drawn inside its box.
	inside := eval[bool](b, `(() => { const box = document.querySelector('#graph g.box[data-state="RunCalls"] rect').getBBox();
		const n = document.querySelector('#graph g.node[data-state="Integration"] rect').getBBox();
		return n.x >= box.x && n.y >= box.y && n.x + n.width <= box.x + box.width && n.y + n.height <= box.y + box.height; })()`)
	if !inside {
		t.Error("agent_loop: Integration is not drawn inside the RunCalls Map's box")
	}
}

func TestConsoleColoursAnExecutionsStates(t *testing.T) {
	h := local(t)
	const dev = "colours-dev"
	agent := h.agent(t, dev, nil)
	id := h.toolCall(t, dev, agent, "echo", map[string]any{"text": "hi there"})
	h.waitExecution(t, dev, id, "succeeded")

	b := h.browser(t)
	b.open(dev, "/executions/tool_call/"+id)
	b.until("the execution succeeded", `document.querySelector('#exec-status[data-status="SUCCEEDED"]') !== null &&
		document.querySelector('#graph g.node[data-state="Dispatch"][data-status="succeeded"]') !== null`)
	got := b.nodeStatuses()
	// A call started by POST /tool-calls comes prepared: Dispatch, its one state, invokes its executor.
	want := map[string]string{"Dispatch": "succeeded", "Prepare": "none", "Prepared": "none", "PrepareFailed": "none", "Function": "none", "Settle": "none"}
	for s, w := range want {
		if got[s] != w {
			t.Errorf("state %s is %q, want %q (all: %v)", s, got[s], w, got)
		}
	}
	b.run("click Dispatch", b.click(`#graph g.node[data-state="Dispatch"] rect`))
	b.until("Dispatch's input and output", `(() => { const p = document.querySelector('#state-panel');
		return p.querySelector('.state-input') && p.querySelector('.state-output') && p.querySelector('.state-output').textContent.includes('hi there'); })()`)
	b.shot("execution-succeeded")

	// The list shows it, filtered by machine and status.
	b.open(dev, "/executions?machine=tool_call&status=SUCCEEDED")
	b.until("the list", sel(`document.querySelector('#executions tr[data-execution=%s]') !== null`, jsString(id)))
	b.open(dev, "/executions?status=FAILED")
	b.until("the failed list", `document.querySelector('#executions table, #no-executions') !== null`)
	shown := eval[bool](b, sel(`document.querySelector('#executions tr[data-execution=%s]') !== null`, jsString(id)))
	if shown {
		t.Errorf("a succeeded execution is listed under status=FAILED")
	}
	b.open(dev, "/executions")
	b.until("the list", sel(`document.querySelector('#executions tr[data-execution=%s]') !== null`, jsString(id)))
	b.shot("executions")
}

func TestConsoleAnswersAPendingCallThroughItsForm(t *testing.T) {
	h := local(t)
	const dev = "answer-dev"
	agent := h.agent(t, dev, nil)
	id := h.toolCall(t, dev, agent, "ask_user", map[string]any{"question": "shall I?"})
	call := h.pendingCall(t, dev, id)

	b := h.browser(t)
	b.open(dev, "/executions/tool_call/"+id)
	b.until("Dispatch waits on its token", `document.querySelector('#graph g.node[data-state="Dispatch"][data-status="waiting"]') !== null`)
	b.shot("execution-waiting")

	b.open(dev, "/calls")
	form := sel(`#pending-calls form[data-call=%s]`, jsString(call))
	b.until("the pending call's form", sel(`document.querySelector(%s) !== null`, jsString(form)))
	b.run("answer it", b.set(form+` textarea[data-field="output"]`, `{"answer": 42}`),
		b.click(form+` button[type=submit]`))
	b.until("answered", sel(`document.querySelector('[data-answered=%s]') !== null`, jsString(call)))
	b.shot("calls-answered")

	x := h.waitExecution(t, dev, id, "succeeded")
	if out, _ := json.Marshal(x["output"]); !strings.Contains(string(out), `"answer":42`) {
		t.Errorf("the execution's output %s lacks the answer", out)
	}
	b.open(dev, "/executions/tool_call/"+id)
	b.until("the execution resumed and succeeded", `document.querySelector('#exec-status[data-status="SUCCEEDED"]') !== null &&
		document.querySelector('#graph g.node[data-state="Dispatch"][data-status="succeeded"]') !== null &&
		document.querySelector('#graph g.node[data-state="Settle"][data-status="none"]') !== null`)
	b.shot("execution-resumed")
}

func TestConsoleShowsAFailedCallsError(t *testing.T) {
	h := local(t)
	const dev = "failure-dev"
	agent := h.agent(t, dev, nil)
	id := h.toolCall(t, dev, agent, "ask_user", map[string]any{"question": "may I?"})
	call := h.pendingCall(t, dev, id)

	b := h.browser(t)
	b.open(dev, "/executions/tool_call/"+id)
	form := sel(`form.answer[data-call=%s]`, jsString(call))
	b.until("the form on the execution's page", sel(`document.querySelector(%s) !== null`, jsString(form)))
	b.run("fail it", b.click(form+` input[data-field="mode-error"]`),
		b.set(form+` input[data-field="error-type"]`, "NotAllowed"),
		b.set(form+` input[data-field="error-message"]`, "the user said no"),
		b.click(form+` button[type=submit]`))
	b.until("Dispatch caught its failure", `document.querySelector('#exec-status:not([data-status="RUNNING"])') !== null &&
		document.querySelector('#graph g.node[data-state="Dispatch"][data-status="caught"]') !== null`)
	b.run("click Dispatch", b.click(`#graph g.node[data-state="Dispatch"] rect`))
	b.until("its error", `(() => { const e = document.querySelector('#state-panel .state-error');
		return e !== null && e.textContent.includes('NotAllowed') && e.textContent.includes('the user said no'); })()`)
	callErr := b.text("#calls .call-error")
	if !strings.Contains(callErr, "NotAllowed") {
		t.Errorf("the tool call's card shows error %q, want NotAllowed", callErr)
	}
	b.shot("execution-caught")
	b.viewShot("execution-graph")

	// Both words, each named: the workflow ran to its end (Step Functions' SUCCEEDED), and the
	// tool's outcome is a failure (sinew's record: failed), on the page and in the list alike.
	b.until("both statuses on the page", `document.querySelector('#exec-status[data-status="SUCCEEDED"]') !== null &&
		document.querySelector('#exec-outcome[data-outcome="failed"]') !== null`)
	b.open(dev, "/executions?status=SUCCEEDED")
	row := sel(`#executions tr[data-execution=%s]`, jsString(id))
	b.until("both statuses in the list", sel(`document.querySelector(%s) !== null &&
		document.querySelector(%s) !== null`, jsString(row+` td[data-status="SUCCEEDED"]`), jsString(row+` td[data-outcome="failed"]`)))
	b.open(dev, "/executions?status=FAILED")
	b.until("the FAILED list", `document.querySelector('#executions table, #no-executions') !== null`)
	if eval[bool](b, sel(`document.querySelector(%s) !== null`, jsString(row))) {
		t.Errorf("a call answered with an error is listed under Step Functions' FAILED, though its workflow succeeded")
	}
}

func TestConsoleKeepsDevelopersApart(t *testing.T) {
	h := local(t)
	const devA, devB = "apart-a", "apart-b"
	agent := h.agent(t, devA, nil)
	done := h.toolCall(t, devA, agent, "echo", map[string]any{"text": "mine"})
	waiting := h.toolCall(t, devA, agent, "ask_user", map[string]any{"question": "secret plans?"})
	call := h.pendingCall(t, devA, waiting)
	h.waitExecution(t, devA, done, "succeeded")
	users := usersOwnExecution(t, h)

	b := h.browser(t)
	b.open(devA, "/executions")
	b.until("A's list", sel(`[%s, %s, %s].every(id => document.querySelector('#executions tr[data-execution="' + id + '"]') !== null)`,
		jsString(done), jsString(waiting), jsString(users)))

	b.open(devB, "/executions")
	b.until("B's list", sel(`document.querySelector('#executions tr[data-execution=%s]') !== null`, jsString(users)))
	text := b.text("#executions")
	for _, id := range []string{done, waiting} {
		if strings.Contains(text, id) {
			t.Errorf("developer B's console lists developer A's execution %s", id)
		}
	}
	label := b.text(sel(`#executions tr[data-execution=%s]`, jsString(users)))
	if !strings.Contains(label, "every local token") {
		t.Errorf("a user's own execution is not labelled as shown to every token: %q", label)
	}
	b.shot("executions-developer-b")

	b.open(devB, "/calls")
	b.until("B's calls", `document.querySelector('#pending-calls .call, #no-calls') !== null`)
	text = b.text("main")
	if strings.Contains(text, call) || strings.Contains(text, "secret plans") {
		t.Errorf("developer B's console shows developer A's pending call")
	}
	b.open(devB, "/executions/tool_call/"+waiting)
	b.until("B is refused A's execution", `document.querySelector('.error[data-error="Sinew.NotFound"]') !== null`)
	text = b.text("main")
	if strings.Contains(text, "secret plans") {
		t.Errorf("developer B's console shows A's execution: %s", text)
	}
	b.shot("execution-of-another-developer")
}

// usersOwnExecution makes a state machine through the Step Functions API, as a user would, and
// runs it; it gives the execution's name.
func usersOwnExecution(t *testing.T, h *harness) string {
	t.Helper()
	return usersOwn(t, h, "users-own", `{"StartAt":"Hello","States":{"Hello":{"Type":"Pass","Result":{"hello":"world"},"Next":"Done"},"Done":{"Type":"Succeed"}}}`, "", `{"n":1}`)
}

// usersOwn makes (or finds) a user's own state machine through the Step Functions API and starts
// an execution of it named execution (a name Step Functions makes when empty); it gives the
// execution's name.
func usersOwn(t *testing.T, h *harness, machine, definition, execution, input string) string {
	t.Helper()
	ctx := context.Background()
	c := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(h.Endpoints["stepfunctions"]),
		Credentials: h.Credentials()}, sfnapi.NoHostPrefix)
	m, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(machine),
		RoleArn:    aws.String("arn:aws:iam::000000000000:role/users-own"),
		Definition: aws.String(definition)})
	if err != nil {
		t.Fatalf("CreateStateMachine: %v", err)
	}
	in := &sfn.StartExecutionInput{StateMachineArn: m.StateMachineArn, Input: aws.String(input)}
	if execution != "" {
		in.Name = aws.String(execution)
	}
	x, err := c.StartExecution(ctx, in)
	if err != nil {
		t.Fatalf("StartExecution: %v", err)
	}
	arn := aws.ToString(x.ExecutionArn)
	return arn[strings.LastIndex(arn, ":")+1:]
}

func TestConsoleShowsAnAgentsToolsWithSetupRedacted(t *testing.T) {
	h := local(t)
	const dev, secret = "agent-dev", "hunter2-very-secret"
	agent := h.agent(t, dev, map[string]any{"x-integration-setup": map[string]any{"echo": map[string]any{"api_key": secret}}})
	b := h.browser(t)
	b.open(dev, "/agents/"+agent)
	b.until("the tools", `document.querySelector('#agent-tools tr[data-tool="echo"]') !== null && document.querySelector('#agent-tools tr[data-tool="ask_user"]') !== null`)
	html := eval[string](b, `document.documentElement.outerHTML`)
	if strings.Contains(html, secret) {
		t.Error("the agent's page shows a setup secret")
	}
	if !strings.Contains(html, "api_key") {
		t.Error("the agent's metadata is not shown")
	}
	b.shot("agent")
}

func TestConsoleChatShowsEachToolCallAndAnswersInline(t *testing.T) {
	h := local(t)
	const dev = "chat-dev"
	agent := h.agent(t, dev, nil)
	b := h.browser(t)
	b.open(dev, "/chat?agent="+agent)
	b.run("say it", chromedp.WaitVisible(chromedp.CSS("#chat-input")),
		b.set("#chat-input", "please echo hello"),
		b.click("#chat-send"))
	// The scripted model calls echo and ask_user; echo runs, ask_user waits for the developer.
	b.until("the two calls", `(() => { const cs = [...document.querySelectorAll('#chat-calls .call')];
		const echo = cs.find(c => c.textContent.includes('echo') && c.dataset.callStatus === 'succeeded');
		const ask = cs.find(c => c.textContent.includes('ask_user') && c.dataset.callStatus === 'waiting' && c.querySelector('form.answer'));
		return echo && echo.querySelector('.call-result').textContent.includes('hello') && ask; })()`)
	types := eval[[]string](b, `[...document.querySelectorAll('#chat-calls .call .badge.type')].map(e => e.textContent)`)
	if !slices.Contains(types, "integration") || !slices.Contains(types, "function") {
		t.Errorf("the calls' types = %v, want integration and function", types)
	}
	b.shot("chat-waiting")
	b.run("answer yes", b.set(`#chat-calls form.answer textarea[data-field="output"]`, `"yes"`),
		b.click(`#chat-calls form.answer button[type=submit]`))
	b.until("the model's answer", `document.querySelector('#chat-status[data-status="SUCCEEDED"]') !== null &&
		[...document.querySelectorAll('#chat-log .msg.assistant')].some(m => m.textContent.includes('hello hello'))`)
	b.shot("chat")
}

// TestConsoleShowsAnExpressCallsLogLines: a call answered in the request ran on tool_call_express,
// of which Step Functions keeps no history: its page shows sinew's record and local mode's log
// line of its end.
func TestConsoleShowsAnExpressCallsLogLines(t *testing.T) {
	h := local(t)
	const dev = "express-dev"
	agent := h.agent(t, dev, nil)
	status, x := h.call(t, dev, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{"text": "at once"}})
	if status != http.StatusOK {
		t.Fatalf("POST /tool-calls: %d %v, want 200 with the result", status, x)
	}
	id := x["execution_id"].(string)

	b := h.browser(t)
	b.open(dev, "/executions/tool_call/"+id)
	b.until("the Express log line", `document.querySelector('#express-log tr[data-log-status="SUCCEEDED"]') !== null`)
	line := b.text(`#express-log tr[data-log-status="SUCCEEDED"]`)
	if !strings.Contains(line, ":express:tool_call_express:"+id+":") || !strings.Contains(line, " ms") {
		t.Errorf("the log line %q does not name the call's Express execution and its duration", line)
	}
	if n := eval[int](b, `document.querySelectorAll('#express-log tr[data-log-status]').length`); n != 1 {
		t.Errorf("%d log lines shown, want the call's one", n)
	}
	b.until("the record's outcome", `document.querySelector('#exec-outcome[data-outcome="succeeded"]') !== null`)
	b.shot("execution-express")
}
