package asl

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sinew/internal/fault"
)

// Rand is the engine's randomness for retry jitter, injectable so tests are deterministic.
type Rand interface {
	Float64() float64
}

// Config sets up an Engine. Only what is needed is required: an engine without a LambdaInvoker
// refuses Lambda tasks at run time, with AWS's error.
type Config struct {
	Clock        Clock                  // default RealClock
	Rand         Rand                   // default math/rand/v2
	Lambda       LambdaInvoker          // legacy Lambda ARNs and lambda:invoke
	Integrations map[string]Integration // extra "service:api" integrations, e.g. "dynamodb:getItem"
	Region       string                 // default "us-east-1"
	Account      string                 // default "000000000000"
	Partition    string                 // default "aws"
	RoleArn      string                 // shown in ExecutionStarted
	Machines     MachineResolver        // state machines that states:startExecution tasks may start
	// StartChild, when set, starts the child executions of states:startExecution tasks in place
	// of the engine: local mode makes each an execution of its own, durable across restarts, and
	// gives a parent replayed after a restart the child it started before. ctx is the task's.
	StartChild func(ctx context.Context, in StartInput) (Child, error)
	// Transition, when set, is called before every state transition and may delay it (local
	// mode's emulation of Step Functions' StateTransition quota, which delays, not fails, a
	// throttled execution); an error (ctx's end) stops the execution there.
	Transition func(ctx context.Context) error
	// OnStatus, when set, hears every status change (RUNNING at start, then the final status): the
	// local stand-in for Step Functions' "Execution Status Change" events. It runs on the
	// execution's goroutine, outside the engine's locks; it must not block for long.
	OnStatus func(Description)
	Logger   *slog.Logger
}

// Engine runs executions. It is safe for concurrent use.
type Engine struct {
	cfg          Config
	clock        Clock
	rnd          Rand
	randMu       sync.Mutex
	integrations map[string]Integration
	log          *slog.Logger
	// builtinInvoke: lambda:invoke is the engine's own integration, which takes taskArgs.
	builtinInvoke bool

	defaultMachineArn string // of a StartInput without one

	mu    sync.Mutex
	execs map[string]*Execution

	work chan runner  // idle workers wait here (goRun)
	idle atomic.Int32 // how many

	tokMu   sync.Mutex
	pending map[string]*pendingTask
	closed  tombstones
}

// New makes an engine.
func New(cfg Config) *Engine {
	e := &Engine{cfg: cfg, clock: cfg.Clock, rnd: cfg.Rand, log: cfg.Logger,
		execs: map[string]*Execution{}, pending: map[string]*pendingTask{},
		integrations: map[string]Integration{}, work: make(chan runner)}
	if e.clock == nil {
		e.clock = RealClock{}
	}
	if e.rnd == nil {
		e.rnd = mrand.New(mrand.NewPCG(mrand.Uint64(), mrand.Uint64()))
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	if e.cfg.Region == "" {
		e.cfg.Region = "us-east-1"
	}
	if e.cfg.Account == "" {
		e.cfg.Account = "000000000000"
	}
	if e.cfg.Partition == "" {
		e.cfg.Partition = "aws"
	}
	e.defaultMachineArn = fmt.Sprintf("arn:%s:states:%s:%s:stateMachine:machine", e.cfg.Partition, e.cfg.Region, e.cfg.Account)
	if e.cfg.RoleArn == "" {
		e.cfg.RoleArn = fmt.Sprintf("arn:%s:iam::%s:role/sinew-local", e.cfg.Partition, e.cfg.Account)
	}
	if cfg.Lambda != nil {
		e.integrations["lambda:invoke"] = &lambdaInvoke{invoker: cfg.Lambda}
	}
	for k, v := range cfg.Integrations {
		e.integrations[k] = v
	}
	_, e.builtinInvoke = e.integrations["lambda:invoke"].(*lambdaInvoke)
	return e
}

func (e *Engine) random() float64 {
	e.randMu.Lock()
	defer e.randMu.Unlock()
	return e.rnd.Float64()
}

// Status of an execution.
const (
	StatusRunning   = "RUNNING"
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
	StatusTimedOut  = "TIMED_OUT"
	StatusAborted   = "ABORTED"
)

// StartInput starts an execution.
type StartInput struct {
	Machine         *Machine
	StateMachineArn string // default arn:aws:states:<region>:<account>:stateMachine:<name>
	Name            string // execution name; default a random one
	Input           string // JSON; default "{}"
	RoleArn         string // the machine's role, $$.Execution.RoleArn; default Config.RoleArn
	// Key, for a child a states:startExecution task starts, names that start: the starting
	// execution and the task's place and attempt in it (position). A replay after a restart gives
	// the same start the same key, whatever its input now holds (a time, say), so Config.StartChild
	// can give back the child it started, as Step Functions never starts a task's child twice.
	Key string
	// Express: an Express execution, whose ARN is AWS's express:<machine>:<name>:<id>, so a name
	// may be used again (Step Functions checks no Express name for uniqueness).
	Express bool
	// ExpressID, for an Express execution, is the id its ARN ends with ("": a random one), so a
	// caller that journaled a start can answer its ARN first and run it again after a crash.
	ExpressID string
}

// Execution is one run of a machine.
type Execution struct {
	eng        *Engine
	ARN        string
	Name       string
	MachineARN string
	machine    *Machine
	input      any
	inputJSON  string
	startTime  time.Time
	ctxOnce    sync.Once
	role       string         // the machine's role: $$.Execution.RoleArn and ExecutionStarted's roleArn
	ctxExec    map[string]any // the context object's Execution and StateMachine parts, read-only,
	ctxMachine map[string]any // built when first read (contextParts) unless set before the run

	hist  history
	chain chain

	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}

	mu      sync.Mutex
	parked  *stateRun     // the top-level Task or Wait state the execution is parked in, if any
	parkedP *pendingTask  // a parked task's token record
	parkedW *parkedWait   // a parked Wait's wake-up
	unwound chan struct{} // closed once the goroutine that parked has returned

	stopTimer func() bool // the execution's TimeoutSeconds timer
	mapRuns   []*MapRun   // the distributed Map runs it started
	status    string
	output    string
	errName   string
	cause     string
	stopTime  time.Time

	// The details of its first and last events, allocated with it.
	startedEv   ExecutionStartedDetails
	succeededEv OutputDetails

	top frame // the frame run gives the machine, allocated with the execution

	// Its top frame's state visits: room for the next ones, and how many there were.
	runs   []stateRun
	visits int
}

// Description is DescribeExecution's answer.
type Description struct {
	ExecutionArn    string    `json:"executionArn"`
	StateMachineArn string    `json:"stateMachineArn"`
	Name            string    `json:"name"`
	Status          string    `json:"status"`
	StartDate       time.Time `json:"startDate"`
	StopDate        time.Time `json:"stopDate,omitzero"`
	Input           string    `json:"input"`
	Output          string    `json:"output,omitempty"`
	Error           string    `json:"error,omitempty"`
	Cause           string    `json:"cause,omitempty"`
}

// abortCause marks a context cancelled by StopExecution or the execution's TimeoutSeconds.
type abortCause struct {
	status string // StatusAborted or StatusTimedOut
	err    *StatesError
}

func (a *abortCause) Error() string { return a.status }

// Start validates the input and starts the execution in its own goroutine.
func (e *Engine) Start(ctx context.Context, in StartInput) (*Execution, error) {
	if in.Machine == nil {
		return nil, fault.Invalid("stateMachine", "a parsed state machine is required")
	}
	raw := in.Input
	if strings.TrimSpace(raw) == "" {
		raw = "{}"
	}
	if len(raw) > MaxPayloadBytes {
		return nil, &fault.Error{Kind: fault.TooLarge, Field: "input", Msg: "InvalidExecutionInput: the input is larger than 262144 bytes"}
	}
	input, err := decodeJSONString(raw)
	if err != nil {
		return nil, &fault.Error{Kind: fault.InvalidInput, Field: "input", Msg: "Invalid State Machine Execution Input: '" + err.Error() + "'", Err: err}
	}
	if len(in.Name) > 80 {
		return nil, fault.Invalid("name", "InvalidName: the execution name must be 1 to 80 characters")
	}
	smArn := in.StateMachineArn
	if smArn == "" {
		smArn = e.defaultMachineArn
	}
	execArn, name := executionArn(smArn, in.Name, in.Express, in.ExpressID)

	x := &Execution{eng: e, ARN: execArn, Name: name, MachineARN: smArn, machine: in.Machine, input: input,
		inputJSON: raw, startTime: e.clock.Now(), status: StatusRunning, done: make(chan struct{})}
	x.role = cmp.Or(in.RoleArn, e.cfg.RoleArn)
	x.hist.sizeHint = int(in.Machine.histHint.Load())

	e.mu.Lock()
	if _, dup := e.execs[execArn]; dup {
		e.mu.Unlock()
		return nil, &fault.Error{Kind: fault.Conflict, Field: "name", Msg: "Execution Already Exists: '" + execArn + "'"}
	}
	e.execs[execArn] = x
	e.mu.Unlock()

	// The execution outlives the request that started it.
	parent := ctx
	if ctx.Done() != nil {
		parent = context.WithoutCancel(ctx) // one that never ends needs no wrapping
	}
	x.ctx, x.cancel = context.WithCancelCause(parent)
	if tc, ok := e.clock.(TimerClock); ok {
		// A journaling clock keeps the event times, and so the start time, of a replayed execution.
		xctx := x.ctx
		x.hist.stamp = func(id int64, typ string, at time.Time) time.Time { return tc.EventTime(xctx, id, typ, at) }
		x.startTime = x.hist.stamp(1, "ExecutionStarted", x.startTime)
	}
	x.startedEv = ExecutionStartedDetails{Input: raw, InputDetails: notTruncated, RoleArn: x.role}
	x.hist.addDetails(&x.chain, x.startTime, "ExecutionStarted", &x.startedEv)
	if in.Machine.TimeoutSeconds > 0 {
		// Stopped by finish, not when run returns: a parked execution's goroutine returns early.
		// Counted from the start time, which a replayed execution keeps.
		left := x.startTime.Add(time.Duration(in.Machine.TimeoutSeconds) * time.Second).Sub(e.clock.Now())
		x.stopTimer = e.clock.AfterFunc(max(left, 0), func() {
			x.abort(&abortCause{status: StatusTimedOut, err: newErr(ErrTimeout, "")})
		})
	}
	if e.cfg.OnStatus != nil {
		e.cfg.OnStatus(x.Describe())
	}
	e.goRun(x) // not x.run: a method value is an allocation
	return x, nil
}

// contextParts gives the context object's Execution and StateMachine parts, built on first use:
// most executions never read `$$`.
func (x *Execution) contextParts() (exec, machine map[string]any) {
	x.ctxOnce.Do(func() {
		if x.ctxExec != nil {
			return
		}
		x.ctxExec = map[string]any{"Id": x.ARN, "Input": x.input, "Name": x.Name, "RoleArn": x.role,
			"StartTime": formatTime(x.startTime), "RedriveCount": int64(0)}
		x.ctxMachine = map[string]any{"Id": x.MachineARN, "Name": x.MachineARN[strings.LastIndex(x.MachineARN, ":")+1:]}
	})
	return x.ctxExec, x.ctxMachine
}

// Execution finds an execution by ARN.
func (e *Engine) Execution(arn string) (*Execution, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.execs[arn]
	return x, ok
}

// Done is closed when the execution has ended.
func (x *Execution) Done() <-chan struct{} { return x.done }

// Wait blocks until the execution ends or ctx does.
func (x *Execution) Wait(ctx context.Context) (Description, error) {
	select {
	case <-x.done:
		return x.Describe(), nil
	case <-ctx.Done():
		return x.Describe(), ctx.Err()
	}
}

// Describe reports the execution's state.
func (x *Execution) Describe() Description {
	x.mu.Lock()
	defer x.mu.Unlock()
	return Description{ExecutionArn: x.ARN, StateMachineArn: x.MachineARN, Name: x.Name, Status: x.status,
		StartDate: x.startTime, StopDate: x.stopTime, Input: x.inputJSON, Output: x.output, Error: x.errName, Cause: x.cause}
}

// History is the execution's events so far.
func (x *Execution) History() []Event { return x.hist.snapshot() }

// Stop aborts a running execution (StopExecution).
func (e *Engine) Stop(arn, errName, cause string) error {
	x, ok := e.Execution(arn)
	if !ok {
		return &fault.Error{Kind: fault.NotFound, Field: "executionArn", Msg: "Execution Does Not Exist: '" + arn + "'"}
	}
	se := &StatesError{Name: errName, Cause: cause, hasName: errName != "", hasCause: cause != ""}
	x.abort(&abortCause{status: StatusAborted, err: se})
	<-x.done
	return nil
}

func (x *Execution) run() {
	f := &x.top
	*f = frame{top: true, x: x, m: x.machine, chain: &x.chain}
	f.scope = &f.own
	out, outJSON, serr := f.runMachine(x.ctx, x.input, x.inputJSON)
	x.finish(out, outJSON, serr)
}

// abort stops the execution (StopExecution, its TimeoutSeconds, a full history). A parked
// execution has no goroutine to notice, so its task gets the news.
func (x *Execution) abort(cause *abortCause) {
	x.cancel(cause)
	x.mu.Lock()
	p, w := x.parkedP, x.parkedW
	x.mu.Unlock()
	if p != nil {
		p.deliver(taskOutcome{aborted: true})
	}
	if w != nil {
		w.wake(true)
	}
}

func (x *Execution) setParked(r *stateRun) {
	if r != nil {
		// A parked execution may wait for long: its history keeps text, not the values it renders.
		x.hist.render()
	}
	x.mu.Lock()
	x.parked, x.parkedP, x.parkedW, x.unwound = r, nil, nil, nil
	if r != nil && r.waiting != nil {
		x.parkedP, x.unwound = r.waiting.p, r.waiting.unwound
	}
	if r != nil && r.pwait != nil {
		x.parkedW, x.unwound = r.pwait, r.pwait.unwound
	}
	x.mu.Unlock()
}

// Parked reports whether the execution is waiting on a task token with no goroutine of its own.
func (x *Execution) Parked() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.parked != nil
}

// resume continues a parked execution with its task's outcome, on a new goroutine.
func (x *Execution) resume(r *stateRun, w *waiting, o taskOutcome) {
	<-w.unwound
	x.setParked(nil)
	ctx := x.ctx
	res, err := r.endWait(ctx, o)
	for err != nil && err != errParked {
		again, serr := r.retry(ctx, err, r.counts)
		if !again {
			err = serr
			break
		}
		res, err = r.taskAttempt(ctx)
	}
	if err == errParked {
		x.finish(nil, "", err)
		return
	}
	out, assigned, err := r.taskFinish(ctx, res, err)
	x.continueAfter(ctx, r, step{out: out, next: r.st.Next, assigned: assigned}, err)
}

// resumeWait continues an execution parked in a Wait state once it is woken.
func (x *Execution) resumeWait(r *stateRun, w *parkedWait, aborted bool) {
	<-w.unwound
	x.setParked(nil)
	r.pwait = nil
	ctx := x.ctx
	s := step{next: r.st.Next}
	var err *StatesError
	if aborted || ctx.Err() != nil {
		err = stopped(ctx)
	} else {
		s.out, s.assigned, err = r.waitFinish(ctx, w.input)
	}
	x.continueAfter(ctx, r, s, err)
}

// continueAfter completes the visit r of a resumed state with s (or err), runs the machine on from
// the next state, and ends the execution with what that gives.
func (x *Execution) continueAfter(ctx context.Context, r *stateRun, s step, err *StatesError) {
	f := r.f
	s, err = f.complete(ctx, r, s, err)
	out, outJSON := s.out, s.outJSON
	if err == nil && s.next != "" {
		out, outJSON, err = f.runFrom(ctx, s.next, s.out, s.outJSON)
	}
	x.finish(out, outJSON, err)
}

// finish ends the execution, or, when it parked, lets the waiting resume go ahead.
func (x *Execution) finish(out any, outJSON string, serr *StatesError) {
	if serr == errParked {
		x.mu.Lock()
		ch := x.unwound
		x.mu.Unlock()
		close(ch)
		return
	}
	defer close(x.done)
	if x.stopTimer != nil {
		x.stopTimer()
	}
	if x.eng.cfg.OnStatus != nil {
		defer func() { x.eng.cfg.OnStatus(x.Describe()) }()
	}
	now := x.eng.clock.Now()
	var ev Event
	x.mu.Lock()
	defer x.mu.Unlock()
	x.stopTime = now
	if ac := abortOf(x.ctx); ac != nil {
		x.status = ac.status
		x.errName, x.cause = ac.err.Name, ac.err.Cause
		d := &ErrorDetails{Error: ac.err.Name, Cause: ac.err.Cause}
		switch ac.status {
		case StatusTimedOut:
			ev = Event{Type: "ExecutionTimedOut", ExecutionTimedOutEventDetails: d}
		case StatusFailed:
			ev = Event{Type: "ExecutionFailed", ExecutionFailedEventDetails: d}
		default:
			ev = Event{Type: "ExecutionAborted", ExecutionAbortedEventDetails: d}
		}
	} else if serr != nil {
		x.status = StatusFailed
		x.errName, x.cause = serr.Name, serr.Cause
		ev = Event{Type: "ExecutionFailed", ExecutionFailedEventDetails: &ErrorDetails{Error: serr.Name, Cause: serr.Cause}}
	} else {
		x.status = StatusSucceeded
		x.output = outJSON
		if x.output == "" {
			x.output = compactJSON(out)
		}
		x.succeededEv = OutputDetails{Output: x.output, OutputDetails: notTruncated}
		ev = Event{Type: "ExecutionSucceeded", ExecutionSucceededEventDetails: &x.succeededEv}
	}
	if _, ok := x.hist.add(&x.chain, now, ev); !ok {
		x.forceHistoryFailure(now)
	}
	x.machine.histHint.Store(int32(min(x.hist.len(), maxHistHint)))
	x.machine.visitHint.Store(int32(min(x.visits, maxRunSlab)))
	x.cancel(nil)
}

// forceHistoryFailure records the end of an execution whose history is full: AWS fails it, and the
// closing event is the one allowed past the limit.
func (x *Execution) forceHistoryFailure(now time.Time) {
	x.status = StatusFailed
	x.errName = ErrRuntime
	x.cause = fmt.Sprintf("The execution reached the maximum number of history events (%d).", MaxHistoryEvents)
	x.hist.force(&x.chain, now, Event{Type: "ExecutionFailed", ExecutionFailedEventDetails: &ErrorDetails{Error: x.errName, Cause: x.cause}})
}

func abortOf(ctx context.Context) *abortCause {
	cause := context.Cause(ctx)
	if cause == nil {
		return nil // the common case, without errors.As's allocation
	}
	var ac *abortCause
	if errors.As(cause, &ac) {
		return ac
	}
	return nil
}

// executionArn is the ARN of the execution name of machine smArn, and the name: a random id when
// name is "" (the runtime's random source: a name is not a secret), made inside the ARN's text
// (one allocation for both). An Express execution's ARN is express:<machine>:<name>:<id>.
func executionArn(smArn, name string, express bool, expressID string) (arn, execName string) {
	pre, mid, post := smArn, "", ""
	if i := strings.Index(smArn, ":stateMachine:"); i >= 0 {
		pre, mid, post = smArn[:i], ":execution:", smArn[i+len(":stateMachine:"):]
		if express {
			mid = ":express:"
		}
	}
	if express {
		if name == "" {
			id := randomUUIDBytes()
			name = string(id[:])
		}
		if expressID != "" {
			return pre + mid + post + ":" + name + ":" + expressID, name
		}
		id := randomUUIDBytes()
		return pre + mid + post + ":" + name + ":" + string(id[:]), name
	}
	if name != "" {
		return pre + mid + post + ":" + name, name
	}
	id := randomUUIDBytes()
	arn = pre + mid + post + ":" + string(id[:])
	return arn, arn[len(arn)-len(id):]
}

func newToken() string {
	var b [48]byte
	_, _ = rand.Read(b[:])
	return "AQ" + base64.RawURLEncoding.EncodeToString(b[:])
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func compactJSON(v any) string { return encodeJSON(v) }

// Forget drops a finished execution from the engine (a retention policy's job); running executions
// are kept. It reports whether the execution was dropped.
func (e *Engine) Forget(arn string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.execs[arn]
	if !ok {
		return false
	}
	select {
	case <-x.done:
		delete(e.execs, arn)
		return true
	default:
		return false
	}
}
