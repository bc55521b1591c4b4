package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/golang-jwt/jwt/v5"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"os"
	"path/filepath"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/awscount"
	"sinew/internal/chat"
	"sinew/internal/deploy"
	"sinew/internal/dispatch"
	"sinew/internal/executions"
	"sinew/internal/executor"
	"sinew/internal/fault"
	modelfn "sinew/internal/handler/model"
	"sinew/internal/httpapi"
	"sinew/internal/integrations"
	"sinew/internal/jsonv"
	"sinew/internal/lambdaboundary"
	"sinew/internal/llm/openai"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/netguard"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/system"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/testenv/modelsrv"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// turn is one scripted model answer.
type turn = modelsrv.Turn

// invoker runs executor handlers in process, counting invocations. As in AWS, a function runs
// to its end whatever its caller does: a caller whose context ends stops waiting (and gets the
// error the Lambda client gives), while the run goes on; bg counts such runs, and gaveUp is
// closed when a caller first stops waiting.
type invoker struct {
	mu       sync.Mutex
	handlers map[string]lambda.Handler
	calls    map[string]int
	bg       sync.WaitGroup
	gaveUp   chan struct{}
	once     sync.Once
}

func (iv *invoker) Invoke(ctx context.Context, fn string, payload []byte) ([]byte, *messages.InvokeResponse_Error, error) {
	iv.mu.Lock()
	h, ok := iv.handlers[fn]
	iv.calls[fn]++
	iv.mu.Unlock()
	if !ok {
		return nil, nil, fault.New(fault.NotFound, "function %s not found", fn)
	}
	type answer struct {
		out  []byte
		ierr *messages.InvokeResponse_Error
	}
	done := make(chan answer, 1)
	iv.bg.Add(1)
	go func() {
		defer iv.bg.Done()
		out, ierr := lambdaboundary.Invoke(context.WithoutCancel(ctx), h, payload)
		done <- answer{out, ierr}
	}()
	select {
	case a := <-done:
		return a.out, a.ierr, nil
	case <-ctx.Done():
		iv.once.Do(func() { close(iv.gaveUp) })
		return nil, nil, fault.Wrap(fault.Timeout, ctx.Err(), "invoking %s: the request's time budget ran out", fn)
	}
}

// afterBackground runs h once every run its callers stopped waiting for has ended: agent_loop's
// Map then meets the earlier run's record, as a retry in AWS would once that run ends.
type afterBackground struct {
	iv *invoker
	h  lambda.Handler
}

func (a afterBackground) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	a.iv.bg.Wait()
	return a.h.Invoke(ctx, payload)
}

func (iv *invoker) count(fn string) int {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	return iv.calls[fn]
}

// weather is the test provider: "flaky" fails transiently on its first run for a location;
// "slow" answers only once a caller has stopped waiting for a run (invoker.gaveUp); "block"
// answers once release is closed; "big" answers bytes characters of text.
type weather struct {
	mu      sync.Mutex
	runs    map[string]int
	gaveUp  chan struct{}
	release chan struct{}
	tick    func() // when set, runs at each run (the budget tests move the chat's clock with it)
}

type weatherArgs struct {
	Location string `json:"location" jsonschema:"minLength=1"`
	Mode     string `json:"mode,omitempty"`
	Bytes    int    `json:"bytes,omitempty"`
}

func (w *weather) provider() *integrations.Provider {
	return &integrations.Provider{Name: "weather", FriendlyName: "Weather (test)", Methods: []*integrations.Method{
		integrations.NewMethod("get", "the test weather", func(_ context.Context, _ integrations.Env, _ integrations.NoSetup, a weatherArgs) (map[string]any, error) {
			w.mu.Lock()
			w.runs[a.Location]++
			n, tick := w.runs[a.Location], w.tick
			w.mu.Unlock()
			if tick != nil {
				tick()
			}
			switch a.Mode {
			case "flaky":
				if n == 1 {
					return nil, fault.New(fault.Transient, "the weather service is busy")
				}
			case "slow":
				<-w.gaveUp
			case "block":
				<-w.release
			case "big":
				return map[string]any{"location": a.Location, "report": "BEGIN" + strings.Repeat("r", a.Bytes) + "END"}, nil
			}
			return map[string]any{"location": a.Location, "temperature": 21}, nil
		}),
	}}
}

func (w *weather) count(loc string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runs[loc]
}

type harness struct {
	sfn     *engineSFN // the chat's Step Functions
	starter *agentloop.Starter
	svc     *chat.Service
	eng     *asl.Engine
	machine *asl.Machine
	// clock, when set, is the chat's clock: it stands still but for advance (the budget tests).
	clockMu sync.Mutex
	clock   time.Time
	t       testing.TB
	ddb     *awscount.Counter
	ctx     context.Context
	store   *store.Store
	model   *modelsrv.Server
	iv      *invoker
	weather *weather
	http    *httptest.Server
	key     []byte
	dev     string
	agentID string
	session string
	// deps are the chat service's, and db, table and sealer its store's parts, for a service made
	// again as a restarted process would (restarted).
	deps   chat.Deps
	db     *dynamodb.Client
	table  string
	sealer store.Sealer
}

const weatherTool = `{"name": "get_weather", "type": "integration", "description": "the weather", "integration": {"provider": "weather", "method": "get"}}`
const clientTool = `{"name": "ask_user", "type": "function", "function": {"description": "ask the user", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}`

func newHarness(t testing.TB, turns ...turn) *harness { return newHarnessBudget(t, 0, turns...) }

// newHarnessBudget is newHarness with the chat's time budget (0: the default).
func newHarnessBudget(t testing.TB, budget time.Duration, turns ...turn) *harness {
	t.Helper()
	gaveUp := make(chan struct{})
	h := &harness{t: t, ctx: context.Background(), key: bytes.Repeat([]byte{7}, 32),
		weather: &weather{runs: map[string]int{}, gaveUp: gaveUp, release: make(chan struct{})},
		dev:     "dev-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), ddb: &awscount.Counter{}}
	db := ddblocal.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, h.ddb.Register) })
	table := ddblocal.NewTable(t, db)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{42}, 32))
	if err != nil {
		t.Fatal(err)
	}
	h.store = store.New(db, table, sl)
	h.db, h.table, h.sealer = db, table, sl
	h.model = modelsrv.New(t, turns...)

	reg := integrations.New(netguard.New())
	if err := reg.Register(h.weather.provider()); err != nil {
		t.Fatal(err)
	}
	h.iv = &invoker{calls: map[string]int{}, gaveUp: gaveUp, handlers: map[string]lambda.Handler{
		"sinew-integration": lambdaboundary.Handler(executor.Handler(&executor.Integration{Runner: executor.Runner{Store: h.store}, Providers: reg}, nil)),
	}}
	// agent_loop on the embedded engine, for the hand-off: the same model, the executors in process.
	stepper := agentloop.New(agentloop.Deps{Store: h.store, Model: openai.New("test-model", openai.Options{BaseURL: h.model.URL + "/v1", APIKey: "test"}),
		Formatter: &toolfmt.Formatter{Integrations: reg}, FlagDefaults: map[string]bool{agentloop.FlagAutoRun: false}})
	h.engine(map[string]lambda.Handler{
		"model":       lambdaboundary.Handler(modelfn.Handler(stepper)),
		"integration": afterBackground{iv: h.iv, h: h.iv.handlers["sinew-integration"]},
	})
	h.sfn = &engineSFN{eng: h.eng, machine: h.machine}
	h.deps = chat.Deps{
		Starter:      &agentloop.Starter{Store: h.store, SFN: h.sfn, ARN: agentLoopARN},
		Liveness:     &workflow.Liveness{Store: h.store, SFN: h.sfn, ARNs: map[string]string{"agent_loop": agentLoopARN}},
		Now:          h.now,
		Store:        h.store,
		Model:        openai.New("test-model", openai.Options{BaseURL: h.model.URL + "/v1", APIKey: "test"}),
		Formatter:    &toolfmt.Formatter{Integrations: reg},
		Dispatcher:   &dispatch.Dispatcher{Invoker: h.iv, Functions: map[tool.Type]string{tool.TypeIntegration: "sinew-integration"}, Backoff: time.Millisecond},
		FlagDefaults: map[string]bool{chat.FlagAutoRun: false, "auto_tool_calls_prompt_step": false},
		Budget:       budget,
	}
	svc := chat.New(h.deps)
	rt := httpapi.New(httpapi.Options{})
	chat.Register(rt, svc)
	h.starter = &agentloop.Starter{Store: h.store, SFN: &engineSFN{eng: h.eng, machine: h.machine}, ARN: agentLoopARN}
	h.svc = svc
	executions.RegisterTaskExecutions(rt, h.starter, nil)
	h.http = httptest.NewServer(httpapi.HTTPHandler(rt.ServeEvent, httpapi.HMACClaims(h.key)))
	t.Cleanup(h.http.Close)

	a, err := h.store.CreateAgent(h.ctx, h.dev, store.Agent{Name: "helper", Instructions: "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	h.agentID = a.ID
	for _, src := range []string{weatherTool, clientTool} {
		tl, err := tool.Decode([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.store.CreateTool(h.ctx, h.dev, store.Owner{Kind: store.OwnerAgent, ID: a.ID}, *tl); err != nil {
			t.Fatal(err)
		}
	}
	s, err := h.store.CreateSession(h.ctx, h.dev, store.Session{AgentID: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	h.session = s.ID
	return h
}

func (h *harness) now() time.Time {
	h.clockMu.Lock()
	defer h.clockMu.Unlock()
	if h.clock.IsZero() {
		return time.Now()
	}
	return h.clock
}

func (h *harness) advance(d time.Duration) {
	h.clockMu.Lock()
	defer h.clockMu.Unlock()
	h.clock = h.clock.Add(d)
}

const agentLoopARN = "arn:aws:states:us-east-1:000000000000:stateMachine:sinew-agent_loop"

// lambdas runs handlers in process for the engine's Lambda tasks.
type lambdas map[string]lambda.Handler

func (l lambdas) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	name := req.FunctionName[strings.LastIndex(req.FunctionName, ":function:sinew-")+len(":function:sinew-"):]
	hd, ok := l[name]
	if !ok {
		return nil, &asl.LambdaServiceError{Code: "ResourceNotFoundException", Message: "Function not found: " + req.FunctionName}
	}
	out, ierr := lambdaboundary.Invoke(ctx, hd, req.Payload)
	if ierr != nil {
		return &asl.LambdaResponse{Payload: lambdaboundary.Payload(*ierr), FunctionError: "Unhandled"}, nil
	}
	return &asl.LambdaResponse{Payload: out}, nil
}

func (h *harness) engine(handlers lambdas) {
	def, _ := deploy.StateMachineByName(deploy.AgentLoop)
	raw, err := os.ReadFile(filepath.Join("..", "..", def.File))
	if err != nil {
		h.t.Fatal(err)
	}
	rendered, err := def.Render(raw, func(v deploy.Value) (string, error) {
		return "arn:aws:lambda:us-east-1:000000000000:function:sinew-" + v.Target, nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if h.machine, err = asl.Parse(rendered, asl.Options{JSONata: jsonata.New()}); err != nil {
		h.t.Fatal(err)
	}
	h.eng = asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Now()), Lambda: handlers,
		Machines: func(arn string) (*asl.Machine, bool) { return h.machine, arn == agentLoopARN }})
}

// engineSFN starts agent_loop on the embedded engine, as Step Functions' StartExecution does.
type engineSFN struct {
	eng     *asl.Engine
	machine *asl.Machine
	fail    error // when set, StartExecution answers it
}

func (e *engineSFN) StartExecution(ctx context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	if e.fail != nil {
		return nil, e.fail
	}
	x, err := e.eng.Start(ctx, asl.StartInput{Machine: e.machine, StateMachineArn: *in.StateMachineArn, Name: *in.Name, Input: *in.Input})
	if fault.Is(err, fault.Conflict) { // as the SDK reports it
		return nil, &sfntypes.ExecutionAlreadyExists{Message: in.Name}
	}
	if err != nil {
		return nil, err
	}
	return &sfn.StartExecutionOutput{ExecutionArn: &x.ARN}, nil
}

// DescribeExecution answers whether the engine knows the execution, as Step Functions does.
func (e *engineSFN) DescribeExecution(_ context.Context, in *sfn.DescribeExecutionInput, _ ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	x, ok := e.eng.Execution(*in.ExecutionArn)
	if !ok {
		return nil, &sfntypes.ExecutionDoesNotExist{Message: in.ExecutionArn}
	}
	return &sfn.DescribeExecutionOutput{ExecutionArn: &x.ARN, Status: sfntypes.ExecutionStatusRunning}, nil
}

// waitExecution waits for the agent_loop execution named name and answers its output.
func (h *harness) waitExecution(name string) map[string]any {
	h.t.Helper()
	x, ok := h.eng.Execution(strings.Replace(agentLoopARN, ":stateMachine:", ":execution:", 1) + ":" + name)
	if !ok {
		h.t.Fatalf("no execution %s", name)
	}
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	d, err := x.Wait(ctx)
	if err != nil || d.Status != asl.StatusSucceeded {
		h.t.Fatalf("execution %s: %v %s %s: %s", name, err, d.Status, d.Error, d.Cause)
	}
	var out map[string]any
	_ = json.Unmarshal([]byte(d.Output), &out)
	return out
}

func (h *harness) token(dev string) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": dev, "exp": time.Now().Add(time.Hour).Unix()}).SignedString(h.key)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// chat posts body to the session's chat route as the harness's developer.
func (h *harness) chat(body any, hdr ...string) (int, map[string]any) {
	h.t.Helper()
	return h.post(h.dev, "/sessions/"+h.session+"/chat", body, hdr...)
}

func (h *harness) post(dev, path string, body any, hdr ...string) (int, map[string]any) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.http.URL+path, strings.NewReader(jsonv.EncodeString(body)))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.token(dev))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		h.t.Fatalf("POST %s: %d %q is not a JSON object", path, resp.StatusCode, b)
	}
	return resp.StatusCode, m
}

func (h *harness) history() []store.Message {
	h.t.Helper()
	l, err := h.store.ListMessages(h.ctx, h.dev, h.session, store.Page{Limit: 100})
	if err != nil {
		h.t.Fatal(err)
	}
	return l.Items
}

func user(text string) map[string]any { return map[string]any{"role": "user", "content": text} }

func choice(t *testing.T, body map[string]any) (string, map[string]any) {
	t.Helper()
	cs, _ := body["choices"].([]any)
	if len(cs) != 1 {
		t.Fatalf("choices = %v, want one", body["choices"])
	}
	c := cs[0].(map[string]any)
	return c["finish_reason"].(string), c["message"].(map[string]any)
}

func list(v any) []any { l, _ := v.([]any); return l }

func errType(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

func TestChatMultiTurnRunsIntegrationCalls(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}, {"m2", "get_weather", `{"location": "Rome"}`}}},
		turn{Calls: [][3]string{{"m3", "get_weather", `{"location": "Lima", "mode": "flaky"}`}}},
		turn{Text: "Oslo, Rome and Lima are all 21 degrees."},
	)
	code, body := h.chat(map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true})
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, body)
	}
	fr, msg := choice(t, body)
	if fr != "stop" || msg["content"] != "Oslo, Rome and Lima are all 21 degrees." {
		t.Fatalf("finish_reason %q, message %v", fr, msg)
	}
	if n := len(list(body["tool_results"])); n != 3 {
		t.Fatalf("tool_results = %v, want 3", body["tool_results"])
	}
	for _, r := range list(body["tool_results"]) {
		rm := r.(map[string]any)
		if rm["error"] != nil || rm["output"].(map[string]any)["temperature"] != float64(21) {
			t.Errorf("result %v, want an output of 21 degrees", rm)
		}
	}
	// The flaky call failed transiently once and the dispatcher's retry ran it again.
	if h.weather.count("Lima") != 2 || h.weather.count("Oslo") != 1 {
		t.Errorf("runs: Lima %d (want 2), Oslo %d (want 1)", h.weather.count("Lima"), h.weather.count("Oslo"))
	}
	u := body["usage"].(map[string]any)
	if u["prompt_tokens"] != float64(30) || u["total_tokens"] != float64(45) {
		t.Errorf("usage %v, want the sum of three model calls", u)
	}
	// The model saw the agent's instructions, its tools by name, and the results of turn one.
	first := h.model.Request(t, 0)
	msgs := list(first["messages"])
	if m0 := msgs[0].(map[string]any); m0["role"] != "system" || m0["content"] != "Be brief." {
		t.Errorf("first message %v, want the agent's instructions", m0)
	}
	var names []string
	for _, f := range list(first["tools"]) {
		names = append(names, f.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "get_weather,ask_user" && strings.Join(names, ",") != "ask_user,get_weather" {
		t.Errorf("tools shown %v, want get_weather and ask_user", names)
	}
	second := list(h.model.Request(t, 1)["messages"])
	if n := len(second); n != 5 { // system, user, assistant, two tool messages
		t.Fatalf("second request has %d messages, want 5: %v", n, second)
	}
	if tm := second[3].(map[string]any); tm["role"] != "tool" || tm["tool_call_id"] != "m1" || !strings.Contains(tm["content"].(string), "Oslo") {
		t.Errorf("tool message %v, want Oslo's result under m1", tm)
	}
	// The history keeps the user message, the assistant turns and the tool messages, not the system prompt.
	hist := h.history()
	var roles []string
	for _, m := range hist {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,tool,assistant,tool,assistant" {
		t.Errorf("history roles %s", got)
	}

	// The next request continues from the stored history.
	h.model.Script(turn{Text: "You're welcome."})
	code, body = h.chat(map[string]any{"messages": []any{user("thanks")}})
	if code != http.StatusOK {
		t.Fatalf("second chat: %d %v", code, body)
	}
	if got := len(list(h.model.Request(t, 3)["messages"])); got != 1+len(hist)+1 {
		t.Errorf("the continued chat sent %d messages, want system + %d stored + 1", got, len(hist))
	}
}

func TestChatUnknownToolAndBadArguments(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "no_such_tool", `{}`}, {"m2", "get_weather", `{"location": `}}},
		turn{Text: "sorry"},
	)
	code, body := h.chat(map[string]any{"messages": []any{user("hi")}, "auto_run_tools": true})
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, body)
	}
	second := list(h.model.Request(t, 1)["messages"])
	unknown := second[3].(map[string]any)["content"].(string)
	if !strings.Contains(unknown, "Tool 'no_such_tool' not found") {
		t.Errorf("unknown tool fed back as %q", unknown)
	}
	if bad := second[4].(map[string]any)["content"].(string); !strings.Contains(bad, string(fault.InvalidInput)) {
		t.Errorf("bad arguments fed back as %q", bad)
	}
	if h.iv.count("sinew-integration") != 0 {
		t.Errorf("the integration ran %d times, want 0", h.iv.count("sinew-integration"))
	}
}

func TestChatIterationCap(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "A"}`}}},
		turn{Calls: [][3]string{{"m2", "get_weather", `{"location": "B"}`}}},
		turn{Text: "never reached"},
	)
	code, body := h.chat(map[string]any{"messages": []any{user("loop")}, "auto_run_tools": true, "max_iterations": 2})
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, body)
	}
	if fr, _ := choice(t, body); fr != "iteration_cap" {
		t.Errorf("finish_reason %q, want iteration_cap", fr)
	}
	if h.model.Count() != 2 || h.weather.count("B") != 1 {
		t.Errorf("model calls %d (want 2), B runs %d (want 1: the last turn's calls still run)", h.model.Count(), h.weather.count("B"))
	}
}

func TestChatAutoRunToolsFlag(t *testing.T) {
	calls := [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}}
	t.Run("default flag false returns calls unexecuted", func(t *testing.T) {
		h := newHarness(t, turn{Calls: calls})
		code, body := h.chat(map[string]any{"messages": []any{user("hi")}})
		if code != http.StatusOK {
			t.Fatalf("status %d: %v", code, body)
		}
		fr, msg := choice(t, body)
		pend := list(body["pending_calls"])
		if fr != "tool_calls" || len(list(msg["tool_calls"])) != 1 || len(pend) != 1 || h.weather.count("Oslo") != 0 {
			t.Fatalf("finish %q, message %v, pending %v, runs %d", fr, msg, pend, h.weather.count("Oslo"))
		}
		if p := pend[0].(map[string]any); p["model_call_id"] != "m1" || p["tool"] != "get_weather" || p["arguments"].(map[string]any)["location"] != "Oslo" {
			t.Errorf("pending call %v", p)
		}
		// The tools are still shown to the model.
		if len(list(h.model.Request(t, 0)["tools"])) != 2 {
			t.Errorf("tools not shown: %v", h.model.Request(t, 0)["tools"])
		}
	})
	t.Run("developer flag true runs them", func(t *testing.T) {
		h := newHarness(t, turn{Calls: calls}, turn{Text: "21"})
		if err := h.store.SetFlag(h.ctx, h.dev, chat.FlagAutoRun, true); err != nil {
			t.Fatal(err)
		}
		code, body := h.chat(map[string]any{"messages": []any{user("hi")}})
		if fr, _ := choice(t, body); code != http.StatusOK || fr != "stop" || h.weather.count("Oslo") != 1 {
			t.Fatalf("status %d, finish %q, runs %d", code, fr, h.weather.count("Oslo"))
		}
	})
	t.Run("request false wins over the flag", func(t *testing.T) {
		h := newHarness(t, turn{Calls: calls})
		if err := h.store.SetFlag(h.ctx, h.dev, chat.FlagAutoRun, true); err != nil {
			t.Fatal(err)
		}
		code, body := h.chat(map[string]any{"messages": []any{user("hi")}, "auto_run_tools": false})
		if fr, _ := choice(t, body); code != http.StatusOK || fr != "tool_calls" || h.weather.count("Oslo") != 0 {
			t.Fatalf("status %d, finish %q, runs %d", code, fr, h.weather.count("Oslo"))
		}
	})
}

func TestChatFunctionCallsPendingAndAnswered(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "ask_user", `{"q": "which city?"}`}, {"m2", "get_weather", `{"location": "Oslo"}`}}},
		turn{Text: "Bergen is 21 degrees."},
	)
	code, body := h.chat(map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true})
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, body)
	}
	fr, _ := choice(t, body)
	pend := list(body["pending_calls"])
	if fr != "tool_calls" || len(pend) != 1 || len(list(body["tool_results"])) != 1 {
		t.Fatalf("finish %q, pending %v, results %v", fr, pend, body["tool_results"])
	}
	p := pend[0].(map[string]any)
	if p["model_call_id"] != "m1" || p["tool"] != "ask_user" || !tool.ValidCallID(p["call_id"].(string)) {
		t.Fatalf("pending call %v", p)
	}

	// A request that leaves the call unanswered is refused, and nothing is stored or asked.
	before := len(h.history())
	code, body = h.chat(map[string]any{"messages": []any{user("hello?")}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(body), "m1") {
		t.Fatalf("unanswered: %d %v, want 422 naming m1", code, body)
	}
	if len(h.history()) != before || h.model.Count() != 1 {
		t.Fatalf("the refused request changed the history or asked the model")
	}
	// A tool message for a call nobody asked for is a 400.
	code, _ = h.chat(map[string]any{"messages": []any{map[string]any{"role": "tool", "tool_call_id": "m1", "content": "x"},
		map[string]any{"role": "tool", "tool_call_id": "zzz", "content": "x"}}})
	if code != http.StatusBadRequest {
		t.Fatalf("unknown tool_call_id: %d, want 400", code)
	}

	code, body = h.chat(map[string]any{"messages": []any{map[string]any{"role": "tool", "tool_call_id": "m1", "content": "Bergen"}}, "auto_run_tools": true})
	if code != http.StatusOK {
		t.Fatalf("answer: %d %v", code, body)
	}
	if fr, msg := choice(t, body); fr != "stop" || msg["content"] != "Bergen is 21 degrees." {
		t.Fatalf("finish %q message %v", fr, msg)
	}
	// The model saw both answers; the integration ran once in all.
	msgs := list(h.model.Request(t, 1)["messages"])
	var answered []string
	for _, m := range msgs {
		if mm := m.(map[string]any); mm["role"] == "tool" {
			answered = append(answered, mm["tool_call_id"].(string))
		}
	}
	if strings.Join(answered, ",") != "m2,m1" || h.weather.count("Oslo") != 1 {
		t.Errorf("answered %v, Oslo runs %d", answered, h.weather.count("Oslo"))
	}
}

func TestChatInlineTools(t *testing.T) {
	h := newHarness(t, turn{Calls: [][3]string{{"m1", "lookup", `{}`}}})
	inline := map[string]any{"name": "lookup", "type": "function", "function": map[string]any{"parameters": map[string]any{"type": "object"}}}
	code, body := h.chat(map[string]any{"messages": []any{user("x")}, "tools": []any{inline}, "auto_run_tools": true})
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, body)
	}
	tools := list(h.model.Request(t, 0)["tools"])
	if len(tools) != 1 || tools[0].(map[string]any)["function"].(map[string]any)["name"] != "lookup" {
		t.Errorf("tools shown %v, want only the inline one", tools)
	}
	if p := list(body["pending_calls"]); len(p) != 1 {
		t.Errorf("pending %v, want the inline function call", p)
	}
}

func TestChatBadRequests(t *testing.T) {
	h := newHarness(t)
	withSetup := map[string]any{"name": "w", "type": "integration", "integration": map[string]any{"provider": "weather", "method": "get", "setup": map[string]any{"key": "s3cret"}}}
	cases := []struct {
		name  string
		body  any
		code  int
		field string
	}{
		{"stream", map[string]any{"messages": []any{user("x")}, "stream": true}, 400, "stream"},
		{"no messages", map[string]any{"messages": []any{}}, 400, "messages"},
		{"bad role", map[string]any{"messages": []any{map[string]any{"role": "robot", "content": "x"}}}, 400, "messages[0].role"},
		{"inline setup", map[string]any{"messages": []any{user("x")}, "tools": []any{withSetup}}, 400, "tools[0].integration.setup"},
		{"cap", map[string]any{"messages": []any{user("x")}, "max_iterations": 0}, 400, "max_iterations"},
		{"unknown field", map[string]any{"messages": []any{user("x")}, "temperature": 1}, 400, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := h.chat(c.body)
			if code != c.code || errType(body) == "" {
				t.Fatalf("status %d %v, want %d", code, body, c.code)
			}
			if c.field != "" {
				if f := body["error"].(map[string]any)["field"]; f != c.field {
					t.Errorf("field %v, want %s", f, c.field)
				}
			}
		})
	}
	if h.model.Count() != 0 {
		t.Errorf("bad requests reached the model %d times", h.model.Count())
	}
	// Another developer's session is unknown.
	if code, _ := h.post("someone-else", "/sessions/"+h.session+"/chat", map[string]any{"messages": []any{user("x")}}); code != http.StatusNotFound {
		t.Errorf("another developer's session: %d, want 404", code)
	}
}

func TestChatIdempotencyKey(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}}},
		turn{Text: "21"},
	)
	req := map[string]any{"messages": []any{user("hi")}, "auto_run_tools": true}
	code1, first := h.chat(req, "Idempotency-Key", "k1")
	code2, again := h.chat(req, "Idempotency-Key", "k1")
	if code1 != 200 || code2 != 200 || first["id"] != again["id"] {
		t.Fatalf("repeat: %d %v / %d %v, want the same answer", code1, first["id"], code2, again["id"])
	}
	if h.model.Count() != 2 || h.weather.count("Oslo") != 1 || len(h.history()) != 4 {
		t.Errorf("the repeat acted again: model %d, runs %d, history %d", h.model.Count(), h.weather.count("Oslo"), len(h.history()))
	}
}

func TestChatAsyncHandsOffToAgentLoop(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}}},
		turn{Text: "Oslo: 21 degrees."},
	)
	code, body := h.chat(map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true, "async": true})
	if code != http.StatusAccepted || body["status"] != "running" {
		t.Fatalf("status %d: %v, want 202 running", code, body)
	}
	out := h.waitExecution(body["execution_id"].(string))
	if out["finish_reason"] != "stop" || h.weather.count("Oslo") != 1 {
		t.Fatalf("output %v, Oslo runs %d", out, h.weather.count("Oslo"))
	}
	// agent_loop kept the session's history: the request's message, then what it produced.
	var roles []string
	for _, m := range h.history() {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,assistant" {
		t.Errorf("history %s", got)
	}
}

func TestChatPastTheBudgetHandsOffWithoutRunningAgain(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}}},
		turn{Calls: [][3]string{{"m2", "get_weather", `{"location": "Rome"}`}}},
		turn{Text: "done"},
	)
	// The chat's clock stands still but for the weather tool, each run of which "takes" 15 s: the
	// first step spends 15 s of the 25 s budget, and the second would not fit. Nothing depends on
	// how often the clock is read or on the machine's speed: the clock starts an hour ahead, so the
	// budget's deadline never falls in real time during the test.
	h.clock = time.Now().Add(time.Hour)
	h.weather.tick = func() { h.advance(15 * time.Second) }
	code, body := h.chat(map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true})
	if code != http.StatusAccepted {
		t.Fatalf("status %d: %v, want 202", code, body)
	}
	out := h.waitExecution(body["execution_id"].(string))
	// The chat asked the model once and ran Oslo; agent_loop asked twice and ran Rome.
	if out["finish_reason"] != "stop" || h.model.Count() != 3 || h.weather.count("Oslo") != 1 || h.weather.count("Rome") != 1 {
		t.Fatalf("output %v, model %d (want 3), Oslo %d (want 1: not run again), Rome %d", out, h.model.Count(), h.weather.count("Oslo"), h.weather.count("Rome"))
	}
	// agent_loop's first model call saw Oslo's result from the chat.
	msgs := list(h.model.Request(t, 1)["messages"])
	if tm := msgs[len(msgs)-1].(map[string]any); tm["tool_call_id"] != "m1" {
		t.Errorf("agent_loop started from %v, want the chat's tool message", tm)
	}
	var roles []string
	for _, m := range h.history() {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,assistant,tool,assistant" {
		t.Errorf("history %s", got)
	}
}

func TestTaskExecutions(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}}},
		turn{Text: "Oslo: 21 degrees."},
	)
	wt, err := tool.Decode([]byte(weatherTool))
	if err != nil {
		t.Fatal(err)
	}
	task, _, err := h.store.CreateTask(h.ctx, h.dev, h.agentID, store.Task{Name: "forecast",
		Prompt: map[string]any{"messages": []any{map[string]any{"role": "system", "content": "You forecast."}}, "auto_run_tools": true}},
		[]tool.Tool{*wt})
	if err != nil {
		t.Fatal(err)
	}
	code, body := h.post(h.dev, "/tasks/"+task.ID+"/executions", map[string]any{"input": "Oslo?"}, "Idempotency-Key", "t1")
	if code != http.StatusAccepted || body["status"] != "running" {
		t.Fatalf("status %d: %v", code, body)
	}
	out := h.waitExecution(body["execution_id"].(string))
	if out["finish_reason"] != "stop" || h.weather.count("Oslo") != 1 {
		t.Fatalf("output %v, Oslo %d", out, h.weather.count("Oslo"))
	}
	// The model got the agent's instructions, the task's prompt, then the input as the user's message;
	// the task's tools (only get_weather: the task does not inherit the agent's).
	first := h.model.Request(t, 0)
	msgs := list(first["messages"])
	if len(msgs) != 3 || msgs[1].(map[string]any)["content"] != "You forecast." || msgs[2].(map[string]any)["content"] != "Oslo?" {
		t.Errorf("messages %v", msgs)
	}
	if tools := list(first["tools"]); len(tools) != 1 {
		t.Errorf("tools %v, want the task's one", tools)
	}
	// A repeat with the key answers the same execution.
	code, again := h.post(h.dev, "/tasks/"+task.ID+"/executions", map[string]any{"input": "Oslo?"}, "Idempotency-Key", "t1")
	if code != http.StatusAccepted || again["execution_id"] != body["execution_id"] || again["status"] != "succeeded" {
		t.Errorf("repeat: %d %v, want the same execution, succeeded", code, again)
	}
	if code, _ := h.post("someone-else", "/tasks/"+task.ID+"/executions", map[string]any{"input": "x"}); code != http.StatusNotFound {
		t.Errorf("another developer's task: %d, want 404", code)
	}
}

func TestSystemChatter(t *testing.T) {
	h := newHarness(t, turn{Text: "hello"})
	sys := chat.System{Service: h.svc, Starter: h.starter}
	out, err := sys.Chat(h.ctx, system.Context{DeveloperID: h.dev, Depth: 2}, h.session, map[string]any{"messages": []any{user("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if fr, msg := choice(t, out.(map[string]any)); fr != "stop" || msg["content"] != "hello" {
		t.Errorf("finish %q message %v", fr, msg)
	}
	if _, err := sys.Chat(h.ctx, system.Context{DeveloperID: h.dev}, h.session, map[string]any{"stream": true, "messages": []any{user("hi")}}); fault.KindOf(err) != fault.InvalidInput {
		t.Errorf("stream through session.chat: %v, want InvalidInput", err)
	}
}

// BenchmarkChat is one chat request with one integration call (two model calls), in a fresh
// session each time; it reports the DynamoDB requests per chat.
func BenchmarkChat(b *testing.B) {
	h := newHarness(b)
	h.model.Loop(turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}}}, turn{Text: "21"})
	sessions := make([]string, b.N)
	for i := range sessions {
		s, err := h.store.CreateSession(h.ctx, h.dev, store.Session{AgentID: h.agentID})
		if err != nil {
			b.Fatal(err)
		}
		sessions[i] = s.ID
	}
	body := map[string]any{"messages": []any{user("weather?")}, "auto_run_tools": true}
	h.ddb.Reset()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code, out := h.post(h.dev, "/sessions/"+sessions[i]+"/chat", body); code != http.StatusOK {
			b.Fatalf("status %d: %v", code, out)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(h.ddb.Total())/float64(b.N), "ddb-requests/op")
	b.Logf("DynamoDB requests by operation over %d chats: %v", b.N, h.ddb.Ops())
}
