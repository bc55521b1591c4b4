package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/deploy"
	"sinew/internal/executor"
	"sinew/internal/fault"
	"sinew/internal/handler/function"
	modelfn "sinew/internal/handler/model"
	"sinew/internal/integrations"
	"sinew/internal/jsonv"
	"sinew/internal/lambdaboundary"
	"sinew/internal/llm/openai"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/netguard"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/testenv/modelsrv"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

const agentLoopARN = "arn:aws:states:us-east-1:000000000000:stateMachine:sinew-agent_loop"

func fnARN(name string) string { return "arn:aws:lambda:us-east-1:000000000000:function:sinew-" + name }

type turn = modelsrv.Turn

type invoker struct {
	handlers map[string]lambda.Handler
	mu       sync.Mutex
	failed   map[string]int // invocations that ended in a function error, by function
}

// failures is the number of invocations of name that ended in a function error.
func (iv *invoker) failures(name string) int {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	return iv.failed[name]
}

func (iv *invoker) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	name := req.FunctionName[strings.LastIndex(req.FunctionName, ":function:sinew-")+len(":function:sinew-"):]
	h, ok := iv.handlers[name]
	if !ok {
		return nil, &asl.LambdaServiceError{Code: "ResourceNotFoundException", Message: "Function not found: " + req.FunctionName}
	}
	out, ierr := lambdaboundary.Invoke(ctx, h, req.Payload)
	if ierr != nil {
		iv.mu.Lock()
		if iv.failed == nil {
			iv.failed = map[string]int{}
		}
		iv.failed[name]++
		iv.mu.Unlock()
		return &asl.LambdaResponse{Payload: lambdaboundary.Payload(*ierr), FunctionError: "Unhandled"}, nil
	}
	return &asl.LambdaResponse{Payload: out}, nil
}

// engineSFN answers function calls through the embedded engine, as Step Functions does.
type engineSFN struct{ eng *asl.Engine }

func (e *engineSFN) StartExecution(context.Context, *sfn.StartExecutionInput, ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	return nil, errors.New("not used")
}
func (e *engineSFN) StopExecution(context.Context, *sfn.StopExecutionInput, ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error) {
	return nil, errors.New("not used")
}
func (e *engineSFN) SendTaskSuccess(_ context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	return &sfn.SendTaskSuccessOutput{}, e.eng.SendTaskSuccess(awsv2.ToString(in.TaskToken), awsv2.ToString(in.Output))
}
func (e *engineSFN) SendTaskFailure(_ context.Context, in *sfn.SendTaskFailureInput, _ ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	return &sfn.SendTaskFailureOutput{}, e.eng.SendTaskFailure(awsv2.ToString(in.TaskToken), awsv2.ToString(in.Error), awsv2.ToString(in.Cause))
}
func (e *engineSFN) SendTaskHeartbeat(_ context.Context, in *sfn.SendTaskHeartbeatInput, _ ...func(*sfn.Options)) (*sfn.SendTaskHeartbeatOutput, error) {
	return &sfn.SendTaskHeartbeatOutput{}, e.eng.SendTaskHeartbeat(awsv2.ToString(in.TaskToken))
}

type weatherArgs struct {
	Location string `json:"location" jsonschema:"minLength=1"`
	Bytes    int    `json:"bytes,omitempty"` // > 0: a report of that many characters
}

type harness struct {
	t       *testing.T
	ctx     context.Context
	store   *store.Store
	model   *modelsrv.Server
	eng     *asl.Engine
	machine *asl.Machine
	svc     *workflow.Service
	dev     string
	agentID string
	runs    map[string]int
	mu      sync.Mutex
	stepper *agentloop.Stepper
	lambda  *invoker
}

func moduleRoot(t *testing.T) string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

func newHarness(t *testing.T, turns ...turn) *harness {
	def, _ := deploy.StateMachineByName(deploy.AgentLoop)
	return newHarnessOn(t, def.File, turns...)
}

// newHarnessOn is newHarness running the agent_loop definition in file (relative to the module
// root): an earlier one, whose executions may still be running after a deploy.
func newHarnessOn(t *testing.T, file string, turns ...turn) *harness {
	h := &harness{t: t, ctx: context.Background(), dev: "dev-" + strings.ToLower(t.Name()), runs: map[string]int{}}
	db := ddblocal.Client(t)
	table := ddblocal.NewTable(t, db)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{42}, 32))
	if err != nil {
		t.Fatal(err)
	}
	h.store = store.New(db, table, sl)
	h.model = modelsrv.New(t, turns...)
	reg := integrations.New(netguard.New())
	if err := reg.Register(&integrations.Provider{Name: "weather", FriendlyName: "Weather (test)", Methods: []*integrations.Method{
		integrations.NewMethod("get", "the test weather", func(_ context.Context, _ integrations.Env, _ integrations.NoSetup, a weatherArgs) (map[string]any, error) {
			h.mu.Lock()
			h.runs[a.Location]++
			h.mu.Unlock()
			if a.Location == "nowhere" {
				return nil, fault.New(fault.Provider, "the weather service knows no place called nowhere")
			}
			if a.Bytes > 0 {
				return map[string]any{"location": a.Location, "report": "BEGIN" + strings.Repeat("r", a.Bytes) + "END"}, nil
			}
			return map[string]any{"location": a.Location, "temperature": 21}, nil
		}),
	}}); err != nil {
		t.Fatal(err)
	}
	def, _ := deploy.StateMachineByName(deploy.AgentLoop)
	raw, err := os.ReadFile(filepath.Join(moduleRoot(t), file))
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := def.Render(raw, func(v deploy.Value) (string, error) { return fnARN(v.Target), nil })
	if err != nil {
		t.Fatal(err)
	}
	if h.machine, err = asl.Parse(rendered, asl.Options{JSONata: jsonata.New()}); err != nil {
		t.Fatal(err)
	}
	iv := &invoker{handlers: map[string]lambda.Handler{}}
	h.lambda = iv
	machines := map[string]*asl.Machine{agentLoopARN: h.machine}
	h.eng = asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Now()), Lambda: iv, Machines: func(arn string) (*asl.Machine, bool) { m, ok := machines[arn]; return m, ok }})
	h.svc = &workflow.Service{Store: h.store, SFN: &engineSFN{eng: h.eng}, AgentLoopARN: agentLoopARN}
	stepper := agentloop.New(agentloop.Deps{Store: h.store, Model: openai.New("test-model", openai.Options{BaseURL: h.model.URL + "/v1", APIKey: "k"}),
		Formatter: &toolfmt.Formatter{Integrations: reg}, FlagDefaults: map[string]bool{agentloop.FlagAutoRun: false}})
	h.stepper = stepper
	iv.handlers["model"] = lambdaboundary.Handler(modelfn.Handler(stepper))
	iv.handlers["integration"] = lambdaboundary.Handler(executor.Handler(&executor.Integration{Runner: executor.Runner{Store: h.store}, Providers: reg}, nil))
	iv.handlers["function"] = lambdaboundary.Handler(function.Handler(&executor.Function{Store: h.store}))

	a, err := h.store.CreateAgent(h.ctx, h.dev, store.Agent{Name: "helper", Instructions: []any{"Be brief.", "Use tools."}})
	if err != nil {
		t.Fatal(err)
	}
	h.agentID = a.ID
	for _, src := range []string{
		`{"name": "get_weather", "type": "integration", "integration": {"provider": "weather", "method": "get"}}`,
		`{"name": "ask_user", "type": "function", "function": {"parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}`,
	} {
		tl, err := tool.Decode([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.store.CreateTool(h.ctx, h.dev, store.Owner{Kind: store.OwnerAgent, ID: a.ID}, *tl); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func (h *harness) input(messages any, extra map[string]any) string {
	in := map[string]any{"developer_id": h.dev, "agent_id": h.agentID, "task_id": nil, "session_id": nil, "messages": messages,
		"tools": nil, "tool_choice": nil, "model": nil, "settings": nil, "auto_run_tools": true, "max_iterations": nil, "depth": 0}
	for k, v := range extra {
		in[k] = v
	}
	return jsonv.EncodeString(in)
}

func (h *harness) run(name, input string) *asl.Execution {
	h.t.Helper()
	x, err := h.eng.Start(h.ctx, asl.StartInput{Machine: h.machine, StateMachineArn: agentLoopARN, Name: name, Input: input})
	if err != nil {
		h.t.Fatal(err)
	}
	return x
}

func (h *harness) wait(x *asl.Execution) map[string]any {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	d, err := x.Wait(ctx)
	if err != nil {
		h.t.Fatalf("execution did not end: %v", err)
	}
	if d.Status != asl.StatusSucceeded {
		h.t.Fatalf("status %s: %s: %s", d.Status, d.Error, d.Cause)
	}
	v, err := jsonv.DecodeString(d.Output)
	if err != nil {
		h.t.Fatal(err)
	}
	return v.(map[string]any)
}

func user(s string) map[string]any { return map[string]any{"role": "user", "content": s} }

func TestAgentLoopParallelCallsWithAFunctionCall(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "Oslo"}`}, {"m2", "ask_user", `{"q": "which day?"}`}, {"m3", "nope", `{}`}}},
		turn{Text: "Tuesday in Oslo: 21 degrees."},
	)
	x := h.run("loop-1", h.input([]any{user("weather?")}, nil))

	// The function call waits for its token, recorded as a pending call of this execution.
	var pc store.PendingCall
	deadline := time.Now().Add(20 * time.Second)
	for {
		calls, err := h.store.ExecutionCalls(h.ctx, h.dev, "loop-1")
		if err == nil && len(calls) == 1 && calls[0].Status == store.CallPending {
			pc = calls[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending call: %v %v", calls, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pc.ModelCallID != "m2" || pc.Tool != "ask_user" {
		t.Fatalf("pending call %+v", pc)
	}
	if _, err := h.svc.AnswerCall(h.ctx, h.dev, "loop-1", pc.CallID, workflow.Answer{Output: "Tuesday"}); err != nil {
		t.Fatal(err)
	}
	out := h.wait(x)
	if out["finish_reason"] != "stop" || out["iterations"] != int64(2) {
		t.Fatalf("output %v", out)
	}
	if last := out["last_message"].(map[string]any); last["content"] != "Tuesday in Oslo: 21 degrees." {
		t.Errorf("last message %v", last)
	}
	if u := out["usage"].(map[string]any); u["total_tokens"] != int64(30) {
		t.Errorf("usage %v", u)
	}
	if h.runs["Oslo"] != 1 {
		t.Errorf("Oslo ran %d times", h.runs["Oslo"])
	}
	// The model's second request has the instructions, then every call answered in its order.
	msgs := h.model.Request(t, 1)["messages"].([]any)
	if m0 := msgs[0].(map[string]any); m0["role"] != "system" || m0["content"] != "Be brief.\nUse tools." {
		t.Errorf("system message %v", m0)
	}
	var got []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		if mm["role"] == "tool" {
			got = append(got, mm["tool_call_id"].(string)+"="+mm["content"].(string))
		}
	}
	if len(got) != 3 || !strings.Contains(got[0], "Oslo") || got[1] != "m2=Tuesday" || !strings.Contains(got[2], "not found") {
		t.Errorf("tool messages %v", got)
	}
	rec, err := h.store.GetExecution(h.ctx, h.dev, "loop-1")
	if err != nil || rec.Workflow != "agent_loop" || rec.Status != store.ExecSucceeded {
		t.Errorf("execution record %+v %v", rec, err)
	}
}

func TestAgentLoopCapAndLargeMessagesByReference(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "A"}`}}},
		turn{Calls: [][3]string{{"m2", "get_weather", `{"location": "B"}`}}},
	)
	big := strings.Repeat("x", 300*1024) // over the 256 KiB state limit
	ref, err := h.store.StoreValue(h.ctx, h.dev, []any{user(big)}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	out := h.wait(h.run("loop-cap", h.input(ref, map[string]any{"max_iterations": 2})))
	if out["finish_reason"] != "iteration_cap" || h.runs["B"] != 1 {
		t.Fatalf("output %v, B runs %d", out, h.runs["B"])
	}
	m, _ := out["messages"].(map[string]any)
	if _, ok := m["sinew:ref"]; !ok {
		t.Fatalf("messages %v, want a sinew:ref", out["messages"])
	}
	v, err := h.store.LoadValue(h.ctx, h.dev, out["messages"])
	if err != nil {
		t.Fatal(err)
	}
	if n := len(v.([]any)); n != 6 { // system, user, assistant, tool, assistant, tool
		t.Errorf("%d stored messages, want 6", n)
	}
}

func TestAgentLoopAutoRunOffByFlagDefault(t *testing.T) {
	h := newHarness(t, turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "A"}`}}})
	out := h.wait(h.run("loop-off", h.input([]any{user("hi")}, map[string]any{"auto_run_tools": nil})))
	if out["finish_reason"] != "tool_calls" || h.runs["A"] != 0 {
		t.Fatalf("output %v, runs %d", out, h.runs["A"])
	}
}

// TestAgentLoopToolFailureIsAResult: a tool's failure reaches the model as its error result, and
// the executor's invocation succeeds with it (the Task reads the result object), so a Lambda error
// of an executor means a fault; the failure is counted by the ToolErrors metric instead.
func TestAgentLoopToolFailureIsAResult(t *testing.T) {
	h := newHarness(t,
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "nowhere"}`}, {"m2", "get_weather", `{"location": "Oslo"}`}}},
		turn{Text: "Only Oslo: 21 degrees."},
	)
	out := h.wait(h.run("loop-fail", h.input([]any{user("weather?")}, nil)))
	if n := h.lambda.failures("integration"); n != 0 {
		t.Errorf("%d integration invocations failed, want none: the tool's failure is a result", n)
	}
	results, _ := out["tool_results"].([]any)
	if len(results) != 2 {
		t.Fatalf("tool_results %v, want two", out["tool_results"])
	}
	failed, ok := results[0].(map[string]any)
	e, _ := failed["error"].(map[string]any)
	if !ok || e["type"] != "Sinew.Provider" || !strings.Contains(e["message"].(string), "nowhere") {
		t.Errorf("first result %v, want the provider's refusal", results[0])
	}
	if o, _ := results[1].(map[string]any)["output"].(map[string]any); o["location"] != "Oslo" {
		t.Errorf("second result %v, want Oslo's weather", results[1])
	}
	var tools []string
	for _, m := range h.model.Request(t, 1)["messages"].([]any) {
		if mm := m.(map[string]any); mm["role"] == "tool" {
			tools = append(tools, mm["tool_call_id"].(string)+"="+mm["content"].(string))
		}
	}
	if len(tools) != 2 || !strings.HasPrefix(tools[0], "m1=") || !strings.Contains(tools[0], `"type":"Sinew.Provider"`) {
		t.Errorf("tool messages %v, want m1's error first", tools)
	}
}

// TestAgentLoopUpgrade: an execution of agent_loop's definition before error results
// (internal/workflow/testdata/agent_loop.v1.asl.json), still running after the deploy, finishes on
// this code: its Tasks send no error_result, so a tool's failure is still the invocation's error,
// which its Catch turns into the error result, and an output is still {output}.
func TestAgentLoopUpgrade(t *testing.T) {
	h := newHarnessOn(t, "internal/workflow/testdata/agent_loop.v1.asl.json",
		turn{Calls: [][3]string{{"m1", "get_weather", `{"location": "nowhere"}`}, {"m2", "get_weather", `{"location": "Oslo"}`}}},
		turn{Text: "Only Oslo: 21 degrees."},
	)
	out := h.wait(h.run("loop-v1", h.input([]any{user("weather?")}, nil)))
	results, _ := out["tool_results"].([]any)
	if len(results) != 2 {
		t.Fatalf("tool_results %v, want two", out["tool_results"])
	}
	if e, _ := results[0].(map[string]any)["error"].(map[string]any); e["type"] != "Sinew.Provider" {
		t.Errorf("first result %v, want the provider's refusal", results[0])
	}
	if o, _ := results[1].(map[string]any)["output"].(map[string]any); o["location"] != "Oslo" {
		t.Errorf("second result %v, want Oslo's weather", results[1])
	}
	if n := h.lambda.failures("integration"); n != 1 {
		t.Errorf("%d integration invocations failed, want the refusal's one: that definition catches it", n)
	}
}
