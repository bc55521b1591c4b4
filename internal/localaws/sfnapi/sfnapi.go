// Package sfnapi is local mode's Step Functions API.
//
// It speaks the JSON 1.0 protocol (`X-Amz-Target: AWSStepFunctions.<Operation>`) over the embedded
// engine (internal/asl), with AWS's error codes and messages, paging, StartExecution's idempotency
// rules, StartSyncExecution (served on the same endpoint, so clients that drop the `sync-` host
// prefix reach it), and the "Step Functions Execution Status Change" events EventBridge would
// deliver. State machines and executions are kept durable by internal/localaws/durable: after a
// restart every running execution goes on.
package sfnapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"sinew/internal/asl"
	"sinew/internal/jsonv"
	"sinew/internal/localaws/awsjson"
	"sinew/internal/localaws/durable"
	"sinew/internal/localaws/outbox"
)

// Limits of the service.
const (
	maxRequest    = 1 << 20 // "Maximum request size: 1 MB per API request"
	maxDefinition = 1048576
	defaultPage   = 100
	maxPage       = 1000
	maxExpress    = 5 * time.Minute
)

// Publisher is where execution status changes go (the local EventBridge's Put).
type Publisher interface {
	Put(ctx context.Context, bus, source, detailType string, detail json.RawMessage, resources []string) (string, error)
}

// Options configure a Service.
type Options struct {
	Store    *durable.Store
	Recorder *durable.Recorder // the engine's LambdaInvoker and Clock
	Engine   *asl.Engine
	Events   Publisher // optional
	JSONata  asl.JSONataCompiler
	Region   string // default us-east-1
	Account  string // default 000000000000
	Logger   *slog.Logger
	// Throttle, when set, is asked before each API operation: an error (AWS's
	// ThrottlingException, as an *awsjson.Error) answers it in place of the operation.
	Throttle func(op string) error
}

// Service is the endpoint. It is safe for concurrent use.
type Service struct {
	opts Options
	log  *slog.Logger
	http *awsjson.Service

	mu       sync.Mutex
	machines map[string]*machine   // by ARN
	execs    map[string]*execution // by ARN, Standard executions only
	seq      uint64
	watchers sync.WaitGroup
	// expressJournal journals asynchronous Express starts (StartExpressJournal); nil: in memory.
	expressJournal *outbox.Outbox
	expressLog     expressLog // the Express executions' end lines (ExpressLog)
}

type machine struct {
	rec durable.Machine
	m   *asl.Machine
}

type execution struct {
	mu        sync.Mutex
	rec       durable.Execution // Events never held here: closed histories are read from the store
	x         *asl.Execution    // nil once closed
	closed    chan struct{}     // closed with x set to nil: the closing record is durable
	resumed   bool              // a recovered execution was started again (by Recover or its parent)
	announced chan struct{}     // closed once its RUNNING status event is out (nil: none to wait for)
	runMu     sync.Mutex        // held while it is started, so a second starter waits for the first
}

// New makes the service; Recover loads what the store holds.
func New(opts Options) *Service {
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.Account == "" {
		opts.Account = "000000000000"
	}
	s := &Service{opts: opts, log: opts.Logger, machines: map[string]*machine{}, execs: map[string]*execution{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.http = &awsjson.Service{
		Name:         "states",
		TargetPrefix: "AWSStepFunctions",
		ContentType:  "application/x-amz-json-1.0",
		MaxBody:      maxRequest,
		TooLargeType: "ValidationException",
		InternalType: "InternalServerError",
		Log:          s.log,
		Ops: map[string]awsjson.Op{
			"CreateStateMachine":               s.createStateMachine,
			"UpdateStateMachine":               s.updateStateMachine,
			"DeleteStateMachine":               s.deleteStateMachine,
			"ValidateStateMachineDefinition":   s.validateDefinition,
			"ListStateMachines":                s.listStateMachines,
			"DescribeStateMachine":             s.describeStateMachine,
			"DescribeStateMachineForExecution": s.describeStateMachineForExecution,
			"StartExecution":                   s.startExecution,
			"StartSyncExecution":               s.startSyncExecution,
			"DescribeExecution":                s.describeExecution,
			"ListExecutions":                   s.listExecutions,
			"GetExecutionHistory":              s.getExecutionHistory,
			"StopExecution":                    s.stopExecution,
			"SendTaskSuccess":                  s.sendTaskSuccess,
			"SendTaskFailure":                  s.sendTaskFailure,
			"SendTaskHeartbeat":                s.sendTaskHeartbeat,
		},
	}
	if opts.Throttle != nil {
		for name, op := range s.http.Ops {
			s.http.Ops[name] = func(ctx context.Context, body []byte) (any, error) {
				if err := opts.Throttle(name); err != nil {
					return nil, err
				}
				return op(ctx, body)
			}
		}
	}
	if opts.Recorder != nil {
		opts.Recorder.SetDeliver(s.deliver)
	}
	return s
}

// ServeHTTP answers Step Functions API requests.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.http.ServeHTTP(w, r) }

// Resolve gives a state machine by ARN, for the engine's states:startExecution tasks.
func (s *Service) Resolve(arn string) (*asl.Machine, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.machines[arn]
	if !ok {
		return nil, false
	}
	return m.m, true
}

// MachineArn is the ARN of the state machine called name.
func (s *Service) MachineArn(name string) string {
	return fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s", s.opts.Region, s.opts.Account, name)
}

// Recover loads the stored state machines and executions and lets every execution that was
// running go on (replaying its journal).
func (s *Service) Recover(ctx context.Context) error {
	ms, err := s.opts.Store.Machines()
	if err != nil {
		return err
	}
	for _, rec := range ms {
		m, err := asl.Parse([]byte(rec.Definition), asl.Options{JSONata: s.opts.JSONata})
		if err != nil {
			s.log.Error("a stored state machine no longer parses; it is left out", "arn", rec.Arn, "error", err)
			continue
		}
		s.machines[rec.Arn] = &machine{rec: rec, m: m}
	}
	xs, err := s.opts.Store.Executions()
	if err != nil {
		return err
	}
	// Every record is known before any execution runs again: a replayed parent looks for its
	// child among them (and may resume it first).
	var running []*execution
	s.mu.Lock()
	for _, rec := range xs {
		s.seq = max(s.seq, rec.Seq)
		e := &execution{rec: rec}
		s.execs[rec.Arn] = e
		if rec.Status == asl.StatusRunning {
			running = append(running, e)
		}
	}
	s.mu.Unlock()
	resumed := 0
	parsed := map[string]*asl.Machine{} // by definition: many executions share one
	for _, e := range running {
		e.mu.Lock() // a parent replayed meanwhile may have resumed (and ended) it
		rec := e.rec
		e.mu.Unlock()
		m, ok := parsed[rec.Definition]
		if !ok {
			if m, err = asl.Parse([]byte(rec.Definition), asl.Options{JSONata: s.opts.JSONata}); err != nil {
				s.log.Error("a running execution's definition no longer parses; it cannot go on", "execution", rec.Arn, "error", err)
				continue
			}
			parsed[rec.Definition] = m
		}
		if err := s.resume(ctx, e, m); err != nil {
			s.log.Error("resuming an execution", "execution", rec.Arn, "error", err)
			continue
		}
		resumed++
	}
	s.log.Info("step functions state recovered", "state_machines", len(s.machines), "executions", len(xs), "resumed", resumed)
	return nil
}

// resume runs a recovered execution again, once.
func (s *Service) resume(ctx context.Context, e *execution, m *asl.Machine) error {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	e.mu.Lock()
	if e.resumed {
		e.mu.Unlock()
		return nil
	}
	e.resumed = true
	e.mu.Unlock()
	return s.run(ctx, e, m)
}

// run starts (or, after a restart, restarts) execution e on the engine with its journal.
func (s *Service) run(ctx context.Context, e *execution, m *asl.Machine) error {
	if err := s.opts.Recorder.Begin(e.rec.Arn); err != nil {
		return err
	}
	x, err := s.opts.Engine.Start(durable.WithExecution(context.WithoutCancel(ctx), e.rec.Arn), asl.StartInput{
		Machine: m, StateMachineArn: e.rec.MachineArn, Name: e.rec.Name, Input: e.rec.Input, RoleArn: e.rec.RoleArn})
	if err != nil {
		s.opts.Recorder.End(e.rec.Arn)
		return err
	}
	e.mu.Lock()
	e.x, e.closed = x, make(chan struct{})
	e.mu.Unlock()
	s.watchers.Add(1)
	go s.watch(e, x)
	return nil
}

// watch announces the execution's end and records it. The status change goes out first: the
// local EventBridge makes it durable before Put answers, so an end that is recorded always has
// its event, for settle, across a crash; a crash in between runs the end again after the restart
// and sends the event again, which settle takes twice without harm. The end is shown
// (DescribeExecution, ListExecutions, a parent's wait) once its record is durable: a result shown
// is never one that a restart would compute again.
func (s *Service) watch(e *execution, x *asl.Execution) {
	defer s.watchers.Done()
	<-x.Done()
	d := x.Describe()
	events, err := json.Marshal(apiEvents(x.History()))
	if err != nil {
		s.log.Error("encoding a history", "execution", x.ARN, "error", err)
		events = []byte("[]")
	}
	e.mu.Lock()
	rec := e.rec
	e.mu.Unlock()
	rec.Status, rec.Stop, rec.Output, rec.Error, rec.Cause = d.Status, d.StopDate, d.Output, d.Error, d.Cause
	rec.Events = events // its Definition stays, stored as a ref to the one copy of its version
	if e.announced != nil {
		<-e.announced // its end follows its start on the bus
	}
	s.publish(rec)
	if err := s.opts.Store.PutExecution(rec); err != nil {
		s.log.Error("recording an execution's end; it will run again after a restart", "execution", x.ARN, "error", err)
	}
	e.mu.Lock()
	e.rec.Status, e.rec.Stop, e.rec.Output, e.rec.Error, e.rec.Cause = d.Status, d.StopDate, d.Output, d.Error, d.Cause
	e.x = nil
	close(e.closed)
	e.mu.Unlock()
	s.opts.Recorder.End(x.ARN)
	s.opts.Engine.Forget(x.ARN)
}

// Wait blocks until every execution watcher has recorded its end (for a clean shutdown in tests).
func (s *Service) Wait() { s.watchers.Wait() }

// deliver gives a journaled answer to the engine's current token.
func (s *Service) deliver(token string, o durable.Outcome) error {
	if o.Success {
		return s.opts.Engine.SendTaskSuccess(token, o.Output)
	}
	return s.opts.Engine.SendTaskFailure(token, o.Error, o.Cause)
}

// LoadMachine creates or updates a state machine that local mode owns (statemachines/): its
// definition is always the one of this start.
func (s *Service) LoadMachine(name, typ string, definition []byte) (string, error) {
	m, err := asl.Parse(definition, asl.Options{JSONata: s.opts.JSONata})
	if err != nil {
		return "", fmt.Errorf("state machine %s: %w", name, err)
	}
	if typ == "EXPRESS" {
		if err := checkExpress(string(definition)); err != nil {
			return "", fmt.Errorf("state machine %s: %w", name, err)
		}
	}
	arn := s.MachineArn(name)
	now := time.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := durable.Machine{Arn: arn, Name: name, Definition: string(definition), RoleArn: s.role(), Type: typ, Created: now, Revision: 1, Builtin: true}
	if old, ok := s.machines[arn]; ok {
		rec.Created, rec.Revision = old.rec.Created, old.rec.Revision
		if old.rec.Definition != rec.Definition {
			rec.Revision++
			rec.Updated = now
		}
	}
	if err := s.opts.Store.PutMachine(rec); err != nil {
		return "", err
	}
	s.machines[arn] = &machine{rec: rec, m: m}
	return arn, nil
}

func (s *Service) role() string {
	return fmt.Sprintf("arn:aws:iam::%s:role/sinew-local", s.opts.Account)
}

// epoch is a timestamp as the JSON protocols send it: seconds since the epoch, with milliseconds.
type epoch time.Time

func (t epoch) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%.3f", float64(time.Time(t).UnixMilli())/1000), nil
}

// apiEvent is a history event with its timestamp in the protocol's form.
type apiEvent struct {
	asl.Event
	Timestamp epoch `json:"timestamp"`
}

func apiEvents(evs []asl.Event) []apiEvent {
	out := make([]apiEvent, len(evs))
	for i, e := range evs {
		out[i] = apiEvent{Event: e, Timestamp: epoch(e.Timestamp)}
	}
	return out
}

// publish sends the "Step Functions Execution Status Change" event of rec's current status.
func (s *Service) publish(rec durable.Execution) {
	if s.opts.Events == nil {
		return
	}
	detail := map[string]any{
		"executionArn": rec.Arn, "stateMachineArn": rec.MachineArn, "name": rec.Name, "status": rec.Status,
		"startDate": rec.Start.UnixMilli(), "stopDate": nil, "input": rec.Input, "inputDetails": map[string]any{"included": true},
		"output": nil, "outputDetails": nil, "error": nil, "cause": nil,
	}
	if !rec.Stop.IsZero() {
		detail["stopDate"] = rec.Stop.UnixMilli()
	}
	if rec.Status == asl.StatusSucceeded {
		detail["output"] = rec.Output
		detail["outputDetails"] = map[string]any{"included": true}
	}
	if rec.Error != "" {
		detail["error"] = rec.Error
	}
	if rec.Cause != "" {
		detail["cause"] = rec.Cause
	}
	data, err := json.Marshal(detail)
	if err != nil {
		return
	}
	if _, err := s.opts.Events.Put(context.Background(), "default", "aws.states", "Step Functions Execution Status Change", data, []string{rec.Arn}); err != nil {
		// Its record is settled all the same, when read or by the sweep (package workflow's Reconciler).
		s.log.Error("publishing an execution status change", "execution", rec.Arn, "status", rec.Status, "error", err)
	}
}

// checkJSON validates a JSON text member the way the service does.
func checkJSON(text string) error {
	_, err := jsonv.DecodeString(text)
	return err
}

func newName() string { return uuid.NewString() }

// splitArn checks an ARN of the given resource type ("stateMachine", "execution") and gives its
// resource part after the type.
func (s *Service) splitArn(arn, typ string) (string, error) {
	if arn == "" {
		return "", invalidArn(arn)
	}
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) < 7 || parts[0] != "arn" || parts[2] != "states" {
		return "", invalidArn(arn)
	}
	if parts[5] != typ {
		return "", invalidArn(arn)
	}
	return parts[6], nil
}
