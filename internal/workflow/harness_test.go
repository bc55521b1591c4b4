package workflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/golang-jwt/jwt/v5"

	"sinew/internal/apicall"
	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/awscount"
	"sinew/internal/deploy"
	"sinew/internal/executions"
	"sinew/internal/executor"
	"sinew/internal/executor/eventbus"
	"sinew/internal/executor/guard"
	"sinew/internal/fault"
	"sinew/internal/handler/function"
	"sinew/internal/handler/prepare"
	"sinew/internal/handler/settle"
	"sinew/internal/httpapi"
	"sinew/internal/integrations"
	"sinew/internal/integrations/providers/dummy"
	"sinew/internal/jsonv"
	"sinew/internal/lambdaboundary"
	localeb "sinew/internal/localaws/eventbridge"
	"sinew/internal/netguard"
	"sinew/internal/secrets"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

const (
	toolCallARN        = "arn:aws:states:us-east-1:000000000000:stateMachine:sinew-tool_call"
	toolCallExpressARN = "arn:aws:states:us-east-1:000000000000:stateMachine:sinew-tool_call_express"
)

func fnARN(name string) string { return "arn:aws:lambda:us-east-1:000000000000:function:sinew-" + name }

// moduleRoot is the repository root, where statemachines/ and events/ live.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func readFile(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// renderMachine parses the named state machine's definition with the harness's function ARNs.
func renderMachine(t testing.TB, name string) *asl.Machine {
	t.Helper()
	def, _ := deploy.StateMachineByName(name)
	rendered, err := def.Render(readFile(t, def.File), func(v deploy.Value) (string, error) { return fnARN(v.Target), nil })
	if err != nil {
		t.Fatal(err)
	}
	m, err := asl.Parse(rendered, asl.Options{JSONata: jsonata.New()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// invoker runs the handlers in process through lambdaboundary.Invoke, so error names are the ones
// Lambda reports, as local mode does.
type invoker struct {
	mu       sync.Mutex
	handlers map[string]lambda.Handler
	calls    map[string]int
	// failed counts the invocations that ended in a function error (what Lambda's Errors metric
	// counts), fromLambda those a function made (the Invoke API) rather than a state machine, by
	// the function invoked.
	failed, fromLambda map[string]int
	// lostReply makes the next n invocations of a function run and then fail with a Lambda service
	// error, as when the answer is lost on the way back: the Task's Retry runs it again.
	lostReply map[string]int
}

func (iv *invoker) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	name := req.FunctionName
	if i := strings.LastIndex(name, ":function:sinew-"); i >= 0 {
		name = name[i+len(":function:sinew-"):]
	}
	iv.mu.Lock()
	h, ok := iv.handlers[name]
	iv.calls[name]++
	lost := iv.lostReply[name] > 0
	if lost {
		iv.lostReply[name]--
	}
	iv.mu.Unlock()
	if !ok {
		return nil, &asl.LambdaServiceError{Code: "ResourceNotFoundException", Message: "Function not found: " + req.FunctionName}
	}
	out, ierr := lambdaboundary.Invoke(ctx, h, req.Payload)
	if lost {
		return nil, &asl.LambdaServiceError{Code: "ServiceException", Message: "the reply was lost"}
	}
	if ierr != nil {
		iv.mu.Lock()
		iv.failed[name]++
		iv.mu.Unlock()
		return &asl.LambdaResponse{Payload: lambdaboundary.Payload(*ierr), FunctionError: "Unhandled"}, nil
	}
	return &asl.LambdaResponse{Payload: out}, nil
}

// invokeAPI is the Lambda Invoke API over the same functions (and counts), as a function reaches
// another: prepare hands an earlier definition's call to its executor with InvokeAsync.
type invokeAPI struct{ iv *invoker }

// InvokeAsync runs function in the background, as Lambda runs an Event invocation.
func (a invokeAPI) InvokeAsync(ctx context.Context, function string, payload []byte) error {
	go func() { _, _, _ = a.Invoke(context.WithoutCancel(ctx), function, payload) }()
	return nil
}

func (a invokeAPI) Invoke(ctx context.Context, function string, payload []byte) ([]byte, *messages.InvokeResponse_Error, error) {
	a.iv.mu.Lock()
	a.iv.fromLambda[function]++
	a.iv.mu.Unlock()
	out, err := a.iv.Invoke(ctx, asl.LambdaRequest{FunctionName: function, Payload: payload})
	if err != nil {
		return nil, nil, fault.Wrap(fault.Transient, err, "invoke %s", function)
	}
	if out.FunctionError != "" {
		e, ok := lambdaboundary.ParsePayload(out.Payload)
		if !ok {
			e = messages.InvokeResponse_Error{Type: string(fault.Internal), Message: function + " failed"}
		}
		return nil, &e, nil
	}
	return out.Payload, nil, nil
}

func (iv *invoker) count(name string) int {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	return iv.calls[name]
}

// sum adds up the counts of every function in m (one of iv's maps).
func (iv *invoker) sum(m map[string]int) int {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// total is the number of invocations of every function so far.
func (iv *invoker) total() int {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	n := 0
	for _, c := range iv.calls {
		n += c
	}
	return n
}

// engineSFN is the workflow's SFN port over the embedded engine, with the SDK's typed errors, as
// local mode's Step Functions API answers them.
type engineSFN struct {
	eng      *asl.Engine
	machines map[string]*asl.Machine
	// lastSync is the last Express execution StartSyncExecution ran (its ARN is not the name's).
	lastSync atomic.Pointer[asl.Execution]
}

func sdkErr(err error) error {
	if err == nil {
		return nil
	}
	var ae *asl.APIError
	if errors.As(err, &ae) {
		msg := &ae.Message
		switch ae.Code {
		case "TaskTimedOut":
			return &sfntypes.TaskTimedOut{Message: msg}
		case "TaskDoesNotExist":
			return &sfntypes.TaskDoesNotExist{Message: msg}
		case "InvalidToken":
			return &sfntypes.InvalidToken{Message: msg}
		case "InvalidOutput":
			return &sfntypes.InvalidOutput{Message: msg}
		}
	}
	return err
}

func (e *engineSFN) StartExecution(ctx context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	m, ok := e.machines[awsv2.ToString(in.StateMachineArn)]
	if !ok {
		return nil, &sfntypes.StateMachineDoesNotExist{Message: in.StateMachineArn}
	}
	x, err := e.eng.Start(ctx, asl.StartInput{Machine: m, StateMachineArn: *in.StateMachineArn, Name: awsv2.ToString(in.Name), Input: awsv2.ToString(in.Input)})
	if fault.Is(err, fault.Conflict) {
		return nil, &sfntypes.ExecutionAlreadyExists{Message: awsv2.String(fault.Message(err))}
	}
	if err != nil {
		return nil, &sfntypes.InvalidExecutionInput{Message: awsv2.String(fault.Message(err))}
	}
	return &sfn.StartExecutionOutput{ExecutionArn: &x.ARN, StartDate: awsv2.Time(x.Describe().StartDate)}, nil
}

// StartSyncExecution runs an Express execution to its end, as local mode's Step Functions API does.
func (e *engineSFN) StartSyncExecution(ctx context.Context, in *sfn.StartSyncExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartSyncExecutionOutput, error) {
	arn := awsv2.ToString(in.StateMachineArn)
	m, ok := e.machines[arn]
	if !ok || arn != toolCallExpressARN {
		return nil, &sfntypes.StateMachineDoesNotExist{Message: in.StateMachineArn}
	}
	x, err := e.eng.Start(ctx, asl.StartInput{Machine: m, StateMachineArn: arn, Name: awsv2.ToString(in.Name), Input: awsv2.ToString(in.Input), Express: true})
	if err != nil {
		return nil, &sfntypes.InvalidExecutionInput{Message: awsv2.String(fault.Message(err))}
	}
	e.lastSync.Store(x)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	d, err := x.Wait(wctx)
	if err != nil {
		return nil, err
	}
	out := &sfn.StartSyncExecutionOutput{ExecutionArn: &d.ExecutionArn, StateMachineArn: &d.StateMachineArn, Name: &d.Name,
		Status: sfntypes.SyncExecutionStatus(d.Status), StartDate: &d.StartDate, StopDate: &d.StopDate, Input: &d.Input}
	if d.Status == asl.StatusSucceeded {
		out.Output = &d.Output
	}
	if d.Error != "" {
		out.Error = &d.Error
	}
	if d.Cause != "" {
		out.Cause = &d.Cause
	}
	return out, nil
}

func (e *engineSFN) StopExecution(_ context.Context, in *sfn.StopExecutionInput, _ ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error) {
	if err := e.eng.Stop(awsv2.ToString(in.ExecutionArn), awsv2.ToString(in.Error), awsv2.ToString(in.Cause)); err != nil {
		return nil, &sfntypes.ExecutionDoesNotExist{Message: awsv2.String(fault.Message(err))}
	}
	return &sfn.StopExecutionOutput{}, nil
}

func (e *engineSFN) SendTaskSuccess(_ context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	return &sfn.SendTaskSuccessOutput{}, sdkErr(e.eng.SendTaskSuccess(awsv2.ToString(in.TaskToken), awsv2.ToString(in.Output)))
}

func (e *engineSFN) SendTaskFailure(_ context.Context, in *sfn.SendTaskFailureInput, _ ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	return &sfn.SendTaskFailureOutput{}, sdkErr(e.eng.SendTaskFailure(awsv2.ToString(in.TaskToken), awsv2.ToString(in.Error), awsv2.ToString(in.Cause)))
}

func (e *engineSFN) SendTaskHeartbeat(_ context.Context, in *sfn.SendTaskHeartbeatInput, _ ...func(*sfn.Options)) (*sfn.SendTaskHeartbeatOutput, error) {
	return &sfn.SendTaskHeartbeatOutput{}, sdkErr(e.eng.SendTaskHeartbeat(awsv2.ToString(in.TaskToken)))
}

// weather is a test provider registered under a provider name of Julep's enum: mode "flaky" fails
// transiently on the first two runs for a location, mode "broken" is refused for good. runs counts
// the side effects.
type weather struct {
	mu   sync.Mutex
	runs map[string]int
}

type weatherArgs struct {
	Location string `json:"location" jsonschema:"minLength=1"`
	Mode     string `json:"mode,omitempty"`
}

func (w *weather) provider() *integrations.Provider {
	return &integrations.Provider{Name: "weather", FriendlyName: "Weather (test)", Methods: []*integrations.Method{
		integrations.NewMethod("get", "the test weather", func(_ context.Context, _ integrations.Env, _ integrations.NoSetup, a weatherArgs) (map[string]any, error) {
			w.mu.Lock()
			w.runs[a.Location]++
			n := w.runs[a.Location]
			w.mu.Unlock()
			switch {
			case a.Mode == "flaky" && n <= 2:
				return nil, fault.New(fault.Transient, "the weather service is busy (run %d)", n)
			case a.Mode == "broken":
				return nil, fault.New(fault.Provider, "the weather service refused the key")
			}
			return map[string]any{"location": a.Location, "temperature": 21, "run": n}, nil
		}),
	}}
}

func (w *weather) count(loc string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runs[loc]
}

// harness is one test's whole tool-call system: DynamoDB Local (one table), the embedded engine
// on a virtual clock running statemachines/tool_call.asl.json, the handlers in process, the HTTP
// routes on a loopback server, and local EventBridge's feed.
type harness struct {
	t       testing.TB
	ctx     context.Context
	store   *store.Store
	ddb     *awscount.Counter
	clock   *asl.VirtualClock
	eng     *asl.Engine
	machine *asl.Machine
	iv      *invoker
	svc     *workflow.Service
	// function is the function tool's executor, whose Events a test may wrap.
	function *executor.Function
	weather  *weather
	events   *localeb.Service
	http     *httptest.Server
	jwtKey   []byte
	api      *httptest.Server // the api_call target
	apiHits  int
	apiMu    sync.Mutex
	// deliveries guards ended (the test is over: no status change is delivered any more) and the
	// start of a delivery, which inFlight counts.
	deliveries sync.Mutex
	ended      bool
	inFlight   sync.WaitGroup
	handler    map[string]lambda.Handler
	tokens     *executor.Tokens
	red        *secrets.Redactor // the executors' redactor, as functions/integration and apicall wire it
	db         *dynamodb.Client
	table      string
	// machines are the engine's state machines by ARN (add before starting executions).
	machines map[string]*asl.Machine
	// beforeDDB, when set, is called with each DynamoDB operation's name before it is sent.
	beforeDDB atomic.Pointer[func(op string)]
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background(), ddb: &awscount.Counter{}, weather: &weather{runs: map[string]int{}}, jwtKey: bytes.Repeat([]byte{7}, 32),
		red: secrets.NewRedactor()}
	db := ddblocal.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, h.ddb.Register, h.registerBefore) })
	table := ddblocal.NewTable(t, db)
	h.db, h.table = db, table
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{42}, 32))
	if err != nil {
		t.Fatal(err)
	}
	h.store = store.New(db, table, sl)

	// The api_call target: 503 twice for /flaky, 404 for /missing, JSON otherwise.
	h.api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.apiMu.Lock()
		h.apiHits++
		hits := h.apiHits
		h.apiMu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/flaky") && hits <= 2:
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		case strings.HasPrefix(r.URL.Path, "/missing"):
			http.Error(w, "no such item", http.StatusNotFound)
			return
		case strings.HasPrefix(r.URL.Path, "/echo-auth"): // a careless service's refusal
			http.Error(w, "refused credentials "+r.Header.Get("Authorization")+" "+r.Header.Get("X-Meta"), http.StatusForbidden)
			return
		case strings.HasPrefix(r.URL.Path, "/secure"):
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"authorized": r.Header.Get("Authorization") == "Bearer "+leakAPIToken,
				"meta": r.Header.Get("X-Meta") == leakMetaHeader})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path, "query": r.URL.RawQuery, "authorized": r.Header.Get("Authorization") == "Bearer s3cret"})
	}))
	t.Cleanup(h.api.Close)
	dialer := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(strings.TrimPrefix(h.api.URL, "http://"))))

	reg := integrations.New(dialer)
	if err := reg.Register(dummy.Provider, h.weather.provider(), careless()); err != nil {
		t.Fatal(err)
	}

	ev, err := localeb.Open(localeb.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h.events = ev
	evSrv := httptest.NewServer(ev)
	t.Cleanup(evSrv.Close)
	ebc := eventbridge.NewFromConfig(awsv2.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(o *eventbridge.Options) { o.BaseEndpoint = &evSrv.URL })

	h.clock = asl.NewVirtualClock(time.Now())
	h.iv = &invoker{handlers: map[string]lambda.Handler{}, calls: map[string]int{}, lostReply: map[string]int{},
		failed: map[string]int{}, fromLambda: map[string]int{}}
	def, _ := deploy.StateMachineByName(deploy.ToolCall)
	rendered, err := def.Render(readFile(t, def.File), func(v deploy.Value) (string, error) { return fnARN(v.Target), nil })
	if err != nil {
		t.Fatal(err)
	}
	if h.machine, err = asl.Parse(rendered, asl.Options{JSONata: jsonata.New()}); err != nil {
		t.Fatal(err)
	}
	express := renderMachine(t, deploy.ToolCallExpress)
	machines := map[string]*asl.Machine{toolCallARN: h.machine, toolCallExpressARN: express}
	h.machines = machines
	h.eng = asl.New(asl.Config{Clock: h.clock, Lambda: h.iv, Machines: func(arn string) (*asl.Machine, bool) { m, ok := machines[arn]; return m, ok },
		// The deployed EventBridge rule: every final status goes to the settle function. Express
		// executions send none.
		OnStatus: func(d asl.Description) {
			if d.Status == asl.StatusRunning || strings.Contains(d.ExecutionArn, ":express:") {
				return
			}
			h.deliveries.Lock()
			if h.ended {
				h.deliveries.Unlock()
				return
			}
			h.inFlight.Add(1)
			h.deliveries.Unlock()
			defer h.inFlight.Done()
			h.deliver(d)
		}})
	// An execution a test left running may end after it: its status change is not delivered once
	// the test is over, and one being delivered is waited for, before the table goes.
	t.Cleanup(func() {
		h.deliveries.Lock()
		h.ended = true
		h.deliveries.Unlock()
		h.inFlight.Wait()
	})
	h.svc = &workflow.Service{Store: h.store, SFN: &engineSFN{eng: h.eng, machines: machines}, ToolCallARN: toolCallARN}

	h.function = &executor.Function{Store: h.store, Events: eventbus.Bus{Client: ebc}, EventBus: "default"}
	guardRec := &guard.Guard{Records: h.store}
	// The executors answer Dispatch's tokens through the engine, as local mode's Step Functions API.
	h.tokens = &executor.Tokens{SFN: h.svc.SFN}
	runner := executor.Runner{Store: h.store, Guard: guardRec, Redactor: h.red}
	h.handler = map[string]lambda.Handler{
		"prepare": lambdaboundary.Handler(prepare.Handler(prepare.Deps{Workflow: h.svc, Tokens: h.tokens, Invoker: invokeAPI{h.iv},
			Executors: map[tool.Type]string{tool.TypeIntegration: "integration", tool.TypeAPICall: "apicall", tool.TypeSystem: "system"}})),
		"function":    lambdaboundary.Handler(function.Handler(h.function)),
		"integration": lambdaboundary.Handler(executor.Handler(&executor.Integration{Runner: runner, Providers: reg}, h.tokens)),
		"apicall":     lambdaboundary.Handler(executor.Handler(&executor.APICall{Runner: runner, APICall: apicall.New(dialer)}, h.tokens)),
		"settle":      lambdaboundary.Handler(settle.Handler(h.svc, nil)),
	}
	for k, v := range h.handler {
		h.iv.handlers[k] = v
	}

	rt := httpapi.New(httpapi.Options{})
	executions.Register(rt, executions.Deps{Workflow: h.svc})
	h.http = httptest.NewServer(httpapi.HTTPHandler(rt.ServeEvent, httpapi.HMACClaims(h.jwtKey)))
	t.Cleanup(h.http.Close)
	return h
}

// agent makes an agent of dev with tools and metadata.
func (h *harness) agent(dev string, meta map[string]any, tools ...string) string {
	h.t.Helper()
	a, err := h.store.CreateAgent(h.ctx, dev, store.Agent{Name: "helper", Metadata: meta})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, src := range tools {
		h.tool(dev, store.Owner{Kind: store.OwnerAgent, ID: a.ID}, src)
	}
	return a.ID
}

func (h *harness) tool(dev string, o store.Owner, src string) {
	h.t.Helper()
	tl, err := tool.Decode([]byte(src))
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.store.CreateTool(h.ctx, dev, o, *tl); err != nil {
		h.t.Fatalf("create tool %s: %v", src, err)
	}
}

// start starts a tool_call execution directly (as StartExecution would) and answers it.
func (h *harness) start(name string, input map[string]any) *asl.Execution {
	h.t.Helper()
	for _, k := range []string{"task_id", "session_id", "arguments"} {
		if _, ok := input[k]; !ok {
			input[k] = nil
		}
	}
	x, err := h.eng.Start(h.ctx, asl.StartInput{Machine: h.machine, StateMachineArn: toolCallARN, Name: name, Input: jsonv.EncodeString(input)})
	if err != nil {
		h.t.Fatal(err)
	}
	return x
}

func (h *harness) wait(x *asl.Execution) asl.Description {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	d, err := x.Wait(ctx)
	if err != nil {
		h.t.Fatalf("execution %s did not end: %v", x.Name, err)
	}
	return d
}

// output is a finished execution's output as a JSON value.
func output(t *testing.T, d asl.Description) map[string]any {
	t.Helper()
	if d.Status != asl.StatusSucceeded {
		t.Fatalf("execution %s: status %s, error %s: %s", d.Name, d.Status, d.Error, d.Cause)
	}
	v, err := jsonv.DecodeString(d.Output)
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

// pending waits until the execution waits on its function call and answers the recorded call.
func (h *harness) pending(dev, execID string) store.PendingCall {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		x, err := h.store.GetExecution(h.ctx, dev, execID)
		if err == nil && x.Status == store.ExecAwaitingInput && len(x.PendingCalls) == 1 {
			if ex, ok := h.eng.Execution(strings.Replace(toolCallARN, ":stateMachine:", ":execution:", 1) + ":" + execID); ok && ex.Parked() {
				return x.PendingCalls[0]
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("execution %s never waited for its call (last: %+v, %v)", execID, x, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// statusChange delivers the execution's "Execution Status Change" event to the settle Lambda, as
// the EventBridge rule does in AWS.
func (h *harness) statusChange(x *asl.Execution) {
	h.t.Helper()
	h.deliver(x.Describe())
}

func (h *harness) deliver(d asl.Description) {
	h.t.Helper()
	detail := map[string]any{"executionArn": d.ExecutionArn, "stateMachineArn": d.StateMachineArn, "name": d.Name, "status": d.Status,
		"input": d.Input, "output": nil, "error": nil, "cause": nil}
	if d.Output != "" {
		detail["output"] = d.Output
	}
	if d.Error != "" {
		detail["error"] = d.Error
	}
	if d.Cause != "" {
		detail["cause"] = d.Cause
	}
	ev := map[string]any{"version": "0", "id": "test", "detail-type": workflow.DetailTypeStatusChange, "source": "aws.states", "detail": detail}
	if _, ierr := lambdaboundary.Invoke(h.ctx, h.handler["settle"], []byte(jsonv.EncodeString(ev))); ierr != nil {
		h.t.Fatalf("settle event: %s: %s", ierr.Type, ierr.Message)
	}
}

// token signs a JWT for dev.
func (h *harness) token(dev string) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": dev, "exp": time.Now().Add(time.Hour).Unix()}).SignedString(h.jwtKey)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// do sends an HTTP request as dev and answers the status and the decoded body.
func (h *harness) do(dev, method, path string, body any, hdr ...string) (int, map[string]any) {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(jsonv.EncodeString(body))
	}
	req, err := http.NewRequest(method, h.http.URL+path, rd)
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
	if len(bytes.TrimSpace(b)) > 0 {
		v, err := jsonv.Decode(b)
		if err != nil {
			h.t.Fatalf("%s %s: body %q is not JSON", method, path, b)
		}
		m, _ = v.(map[string]any)
	}
	return resp.StatusCode, m
}

// history lists "<type> <state or error>" for the events of an execution.
func history(x *asl.Execution) []string {
	var out []string
	for _, e := range x.History() {
		s := e.Type
		switch {
		case e.StateEnteredEventDetails != nil:
			s += " " + e.StateEnteredEventDetails.Name
		case e.TaskFailedEventDetails != nil:
			s += " " + e.TaskFailedEventDetails.Error
		case e.LambdaFunctionFailedEventDetails != nil:
			s += " " + e.LambdaFunctionFailedEventDetails.Error
		}
		out = append(out, s)
	}
	return out
}

func countPrefix(list []string, p string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, p) {
			n++
		}
	}
	return n
}

func jsonEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !jsonv.Equal(jsonv.Normalize(roundTrip(got)), jsonv.Normalize(roundTrip(want))) {
		t.Errorf("%s = %s, want %s", what, jsonv.EncodeString(got), jsonv.EncodeString(want))
	}
}

func roundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unencodable %T", v)
	}
	out, _ := jsonv.Decode(b)
	return out
}

func sleepMs(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }

// registerBefore calls beforeDDB, when set, with each request's operation before it is sent.
func (h *harness) registerBefore(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("harness.before",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if f := h.beforeDDB.Load(); f != nil {
				(*f)(awsmiddleware.GetOperationName(ctx))
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}
