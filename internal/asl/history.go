package asl

import (
	"sync"
	"time"
)

// Event is one history event, shaped as GetExecutionHistory returns it (service-2.json
// HistoryEvent): exactly one *EventDetails member is set, and inputs and outputs are JSON text.
type Event struct {
	Timestamp       time.Time `json:"timestamp"`
	Type            string    `json:"type"`
	ID              int64     `json:"id"`
	PreviousEventID int64     `json:"previousEventId"`

	ExecutionStartedEventDetails   *ExecutionStartedDetails `json:"executionStartedEventDetails,omitempty"`
	ExecutionSucceededEventDetails *OutputDetails           `json:"executionSucceededEventDetails,omitempty"`
	ExecutionFailedEventDetails    *ErrorDetails            `json:"executionFailedEventDetails,omitempty"`
	ExecutionAbortedEventDetails   *ErrorDetails            `json:"executionAbortedEventDetails,omitempty"`
	ExecutionTimedOutEventDetails  *ErrorDetails            `json:"executionTimedOutEventDetails,omitempty"`

	StateEnteredEventDetails *StateEnteredDetails `json:"stateEnteredEventDetails,omitempty"`
	StateExitedEventDetails  *StateExitedDetails  `json:"stateExitedEventDetails,omitempty"`

	TaskScheduledEventDetails *TaskScheduledDetails `json:"taskScheduledEventDetails,omitempty"`
	TaskStartedEventDetails   *TaskDetails          `json:"taskStartedEventDetails,omitempty"`
	TaskSubmittedEventDetails *TaskDetails          `json:"taskSubmittedEventDetails,omitempty"`
	TaskSucceededEventDetails *TaskDetails          `json:"taskSucceededEventDetails,omitempty"`
	TaskFailedEventDetails    *TaskDetails          `json:"taskFailedEventDetails,omitempty"`
	TaskTimedOutEventDetails  *TaskDetails          `json:"taskTimedOutEventDetails,omitempty"`

	LambdaFunctionScheduledEventDetails *LambdaScheduledDetails `json:"lambdaFunctionScheduledEventDetails,omitempty"`
	LambdaFunctionSucceededEventDetails *OutputDetails          `json:"lambdaFunctionSucceededEventDetails,omitempty"`
	LambdaFunctionFailedEventDetails    *ErrorDetails           `json:"lambdaFunctionFailedEventDetails,omitempty"`
	LambdaFunctionTimedOutEventDetails  *ErrorDetails           `json:"lambdaFunctionTimedOutEventDetails,omitempty"`

	MapStateStartedEventDetails       *MapStateStartedDetails `json:"mapStateStartedEventDetails,omitempty"`
	MapIterationStartedEventDetails   *MapIterationDetails    `json:"mapIterationStartedEventDetails,omitempty"`
	MapIterationSucceededEventDetails *MapIterationDetails    `json:"mapIterationSucceededEventDetails,omitempty"`
	MapIterationFailedEventDetails    *MapIterationDetails    `json:"mapIterationFailedEventDetails,omitempty"`
	MapIterationAbortedEventDetails   *MapIterationDetails    `json:"mapIterationAbortedEventDetails,omitempty"`
	MapRunStartedEventDetails         *MapRunStartedDetails   `json:"mapRunStartedEventDetails,omitempty"`
	MapRunFailedEventDetails          *ErrorDetails           `json:"mapRunFailedEventDetails,omitempty"`

	EvaluationFailedEventDetails *EvaluationFailedDetails `json:"evaluationFailedEventDetails,omitempty"`
}

// DataDetails says whether a payload was truncated (never, here: payloads over the limit fail).
type DataDetails struct {
	Truncated bool `json:"truncated"`
}

type ExecutionStartedDetails struct {
	Input        string       `json:"input"`
	InputDetails *DataDetails `json:"inputDetails"`
	RoleArn      string       `json:"roleArn"`
}

type OutputDetails struct {
	Output        string       `json:"output"`
	OutputDetails *DataDetails `json:"outputDetails"`
}

type ErrorDetails struct {
	Error string `json:"error,omitempty"`
	Cause string `json:"cause,omitempty"`
}

type StateEnteredDetails struct {
	Name         string       `json:"name"`
	Input        string       `json:"input"`
	InputDetails *DataDetails `json:"inputDetails"`
}

type StateExitedDetails struct {
	Name                     string            `json:"name"`
	Output                   string            `json:"output"`
	OutputDetails            *DataDetails      `json:"outputDetails"`
	AssignedVariables        map[string]string `json:"assignedVariables,omitempty"`
	AssignedVariablesDetails *DataDetails      `json:"assignedVariablesDetails,omitempty"`
}

type TaskScheduledDetails struct {
	ResourceType       string `json:"resourceType"`
	Resource           string `json:"resource"`
	Region             string `json:"region"`
	Parameters         string `json:"parameters"`
	TimeoutInSeconds   *int64 `json:"timeoutInSeconds,omitempty"`
	HeartbeatInSeconds *int64 `json:"heartbeatInSeconds,omitempty"`
}

// TaskDetails serves TaskStarted, TaskSubmitted, TaskSucceeded, TaskFailed and TaskTimedOut.
type TaskDetails struct {
	ResourceType  string       `json:"resourceType"`
	Resource      string       `json:"resource"`
	Output        *string      `json:"output,omitempty"`
	OutputDetails *DataDetails `json:"outputDetails,omitempty"`
	Error         string       `json:"error,omitempty"`
	Cause         string       `json:"cause,omitempty"`
}

type LambdaScheduledDetails struct {
	Resource         string       `json:"resource"`
	Input            string       `json:"input"`
	InputDetails     *DataDetails `json:"inputDetails"`
	TimeoutInSeconds *int64       `json:"timeoutInSeconds,omitempty"`
}

type MapStateStartedDetails struct {
	Length int `json:"length"`
}

// MapRunStartedDetails names the Map Run a distributed Map state started.
type MapRunStartedDetails struct {
	MapRunArn string `json:"mapRunArn"`
}

type MapIterationDetails struct {
	Name  string `json:"name"`
	Index int    `json:"index"`
}

type EvaluationFailedDetails struct {
	Error    string `json:"error"`
	Cause    string `json:"cause"`
	Location string `json:"location,omitempty"`
	State    string `json:"state"`
}

var notTruncated = &DataDetails{}

// history is one execution's event list. Ids are 1-based and global to the execution;
// previousEventId follows AWS's chains: each frame (the execution, a branch, an iteration) links to
// its own previous event, and the events that close an iteration or a Map/Parallel state
// (MapIterationSucceeded/Failed, MapStateSucceeded, ParallelStateSucceeded) and ExecutionStarted do
// not become anyone's previous event (recorded in the localstack-sfn Map and Pass histories).
// Events are kept compact (type, ids, time and one details pointer) and expanded on read: a
// waiting execution should cost little memory.
type history struct {
	mu       sync.Mutex
	records  []record
	rendered int // records before this index hold no deferred details
	full     bool
	sizeHint int // the records to make room for at the first event
	// stamp, when set, gives an event's time (a TimerClock's EventTime: a replayed event keeps
	// its first time).
	stamp func(id int64, typ string, at time.Time) time.Time
}

// at gives the time of event id, emitted at now. Call with h.mu held.
func (h *history) at(id int64, typ string, now time.Time) time.Time {
	if h.stamp == nil {
		return now
	}
	return h.stamp(id, typ, now)
}

type record struct {
	at   time.Time
	typ  string
	id   int64
	prev int64
	d    any // the *...Details of the event, a deferred, or nil
}

// deferred is an event's details whose JSON text is rendered when the history is first read, not
// when the event happens: an execution whose history nobody reads never encodes its states'
// inputs and outputs. The values it holds are never modified once recorded (the engine copies
// what it changes; integrations and invokers must not modify what they are given), so the text
// is what it would have been when the event happened.
//
// render is called once per event, and lets go of the values it rendered: a deferred often lives
// inside a larger allocation (a state visit, a task attempt) that a parked execution keeps, and the
// values must not outlive their text with it.
type deferred interface {
	render() any // the *...Details
}

// enteredLater is a StateEntered's details.
type enteredLater struct {
	name      string
	input     any
	inputJSON string // input's JSON when at hand (the execution's input), else ""
}

func (d *enteredLater) render() any {
	in := d.inputJSON
	if in == "" {
		in = encodeJSON(d.input)
	}
	d.input, d.inputJSON = nil, ""
	return &StateEnteredDetails{Name: d.name, Input: in, InputDetails: notTruncated}
}

// exitedLater is a StateExited's details.
type exitedLater struct {
	name     string
	out      any
	assigned map[string]any
}

func (d *exitedLater) render() any {
	e := &StateExitedDetails{Name: d.name, Output: encodeJSON(d.out), OutputDetails: notTruncated}
	if len(d.assigned) > 0 {
		e.AssignedVariables = make(map[string]string, len(d.assigned))
		for k, v := range d.assigned {
			e.AssignedVariables[k] = encodeJSON(v)
		}
		e.AssignedVariablesDetails = notTruncated
	}
	d.out, d.assigned = nil, nil
	return e
}

// scheduledLater is a TaskScheduled's details but its parameters.
type scheduledLater struct {
	d      TaskScheduledDetails
	params any
}

func (d *scheduledLater) render() any {
	e := d.d
	e.Parameters = encodeJSON(plainParams(d.params))
	d.params = nil
	return &e
}

// lambdaScheduledLater is a LambdaFunctionScheduled's details but its input.
type lambdaScheduledLater struct {
	d     LambdaScheduledDetails
	input any
}

func (d *lambdaScheduledLater) render() any {
	e := d.d
	e.Input, e.InputDetails = encodeJSON(d.input), notTruncated
	d.input = nil
	return &e
}

// taskOutputLater is a TaskSubmitted's or TaskSucceeded's details but its output.
type taskOutputLater struct {
	d   TaskDetails
	out any
}

func (d *taskOutputLater) render() any {
	e := d.d
	s := encodeJSON(materialize(d.out))
	e.Output, e.OutputDetails = &s, notTruncated
	d.out = nil
	return &e
}

// outputLater is a LambdaFunctionSucceeded's details.
type outputLater struct{ out any }

func (d *outputLater) render() any {
	s := encodeJSON(materialize(d.out))
	d.out = nil
	return &OutputDetails{Output: s, OutputDetails: notTruncated}
}

// chain is a frame's link to its last event.
type chain struct {
	last int64
}

// nonLinking reports whether events after one of type typ link to the event before it (a switch:
// every event asks, and a map lookup hashes the name).
func nonLinking(typ string) bool {
	switch typ {
	case "ExecutionStarted", "MapIterationSucceeded", "MapIterationFailed", "MapIterationAborted",
		"MapStateSucceeded", "ParallelStateSucceeded",
		// Recorded: the events after a TaskStateAborted link to the event before it (test_callback
		// SQS_PARALLEL_WAIT_FOR_TASK_TOKEN, test_timeouts test_service_lambda_map_timeout).
		"TaskStateAborted":
		return true
	}
	return false
}

// add appends an event and reports its id; false when the history is full.
func (h *history) add(c *chain, at time.Time, e Event) (int64, bool) {
	return h.addDetails(c, at, e.Type, e.details())
}

// addDetails appends an event of type typ whose details are d: a *...Details, a deferred, or nil.
func (h *history) addDetails(c *chain, at time.Time, typ string, d any) (int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.records) >= MaxHistoryEvents {
		h.full = true
		return 0, false
	}
	if h.records == nil {
		// The room appending would grow to, or the machine's last history length.
		h.records = make([]record, 0, max(8, h.sizeHint))
	}
	id := int64(len(h.records) + 1)
	if len(h.records) == cap(h.records) {
		h.records = append(h.records, record{})
	} else {
		h.records = h.records[:id]
	}
	// Field by field into the zeroed slot (a record copied in whole costs a write barrier over
	// each of its pointer slots while the GC runs).
	r := &h.records[id-1]
	r.at, r.typ, r.id, r.d = h.at(id, typ, at), typ, id, d
	if c != nil {
		r.prev = c.last
		if !nonLinking(typ) {
			c.last = id
		}
	}
	return id, true
}

// reserve makes room for n more events at once, so a large Map's history is not copied again at
// every doubling.
func (h *history) reserve(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n = min(n, MaxHistoryEvents-len(h.records))
	if cap(h.records)-len(h.records) < n {
		h.records = append(make([]record, 0, len(h.records)+n), h.records...)
	}
}

// addAfter appends an event whose previous event is prev rather than the chain's last; the
// chain then continues from it.
func (h *history) addAfter(c *chain, prev int64, at time.Time, e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.records) >= MaxHistoryEvents {
		h.full = true
		return
	}
	r := record{at: at, typ: e.Type, id: int64(len(h.records) + 1), prev: prev, d: e.details()}
	r.at = h.at(r.id, r.typ, at)
	c.last = r.id
	h.records = append(h.records, r)
}

// force appends a closing event past the limit.
func (h *history) force(c *chain, at time.Time, e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := int64(len(h.records) + 1)
	h.records = append(h.records, record{at: h.at(id, e.Type, at), typ: e.Type, id: id, prev: c.last, d: e.details()})
}

func (h *history) snapshot() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.renderLocked()
	out := make([]Event, len(h.records))
	for i, r := range h.records {
		out[i] = r.event()
	}
	return out
}

// render turns every deferred record into its JSON text, so that the history holds text only (a
// parked execution keeps its history for long: text is smaller than the values it renders).
func (h *history) render() {
	h.mu.Lock()
	h.renderLocked()
	h.mu.Unlock()
}

func (h *history) renderLocked() {
	for i := h.rendered; i < len(h.records); i++ {
		if d, ok := h.records[i].d.(deferred); ok {
			h.records[i].d = d.render()
		}
	}
	h.rendered = len(h.records)
}

func (h *history) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.records)
}

// details gives the one details member that is set.
func (e *Event) details() any {
	switch {
	case e.ExecutionStartedEventDetails != nil:
		return e.ExecutionStartedEventDetails
	case e.ExecutionSucceededEventDetails != nil:
		return e.ExecutionSucceededEventDetails
	case e.ExecutionFailedEventDetails != nil:
		return e.ExecutionFailedEventDetails
	case e.ExecutionAbortedEventDetails != nil:
		return e.ExecutionAbortedEventDetails
	case e.ExecutionTimedOutEventDetails != nil:
		return e.ExecutionTimedOutEventDetails
	case e.StateEnteredEventDetails != nil:
		return e.StateEnteredEventDetails
	case e.StateExitedEventDetails != nil:
		return e.StateExitedEventDetails
	case e.TaskScheduledEventDetails != nil:
		return e.TaskScheduledEventDetails
	case e.TaskStartedEventDetails != nil:
		return e.TaskStartedEventDetails
	case e.TaskSubmittedEventDetails != nil:
		return e.TaskSubmittedEventDetails
	case e.TaskSucceededEventDetails != nil:
		return e.TaskSucceededEventDetails
	case e.TaskFailedEventDetails != nil:
		return e.TaskFailedEventDetails
	case e.TaskTimedOutEventDetails != nil:
		return e.TaskTimedOutEventDetails
	case e.LambdaFunctionScheduledEventDetails != nil:
		return e.LambdaFunctionScheduledEventDetails
	case e.LambdaFunctionSucceededEventDetails != nil:
		return e.LambdaFunctionSucceededEventDetails
	case e.LambdaFunctionFailedEventDetails != nil:
		return e.LambdaFunctionFailedEventDetails
	case e.LambdaFunctionTimedOutEventDetails != nil:
		return e.LambdaFunctionTimedOutEventDetails
	case e.MapStateStartedEventDetails != nil:
		return e.MapStateStartedEventDetails
	case e.MapIterationStartedEventDetails != nil:
		return e.MapIterationStartedEventDetails
	case e.MapIterationSucceededEventDetails != nil:
		return e.MapIterationSucceededEventDetails
	case e.MapIterationFailedEventDetails != nil:
		return e.MapIterationFailedEventDetails
	case e.MapIterationAbortedEventDetails != nil:
		return e.MapIterationAbortedEventDetails
	case e.EvaluationFailedEventDetails != nil:
		return e.EvaluationFailedEventDetails
	case e.MapRunStartedEventDetails != nil:
		return e.MapRunStartedEventDetails
	case e.MapRunFailedEventDetails != nil:
		return e.MapRunFailedEventDetails
	}
	return nil
}

// event expands a record into the API shape; the details member is chosen by the event type.
func (r record) event() Event {
	e := Event{Timestamp: r.at, Type: r.typ, ID: r.id, PreviousEventID: r.prev}
	switch d := r.d.(type) {
	case *ExecutionStartedDetails:
		e.ExecutionStartedEventDetails = d
	case *StateEnteredDetails:
		e.StateEnteredEventDetails = d
	case *StateExitedDetails:
		e.StateExitedEventDetails = d
	case *TaskScheduledDetails:
		e.TaskScheduledEventDetails = d
	case *LambdaScheduledDetails:
		e.LambdaFunctionScheduledEventDetails = d
	case *MapStateStartedDetails:
		e.MapStateStartedEventDetails = d
	case *EvaluationFailedDetails:
		e.EvaluationFailedEventDetails = d
	case *MapRunStartedDetails:
		e.MapRunStartedEventDetails = d
	case *OutputDetails:
		switch r.typ {
		case "ExecutionSucceeded":
			e.ExecutionSucceededEventDetails = d
		default:
			e.LambdaFunctionSucceededEventDetails = d
		}
	case *ErrorDetails:
		switch r.typ {
		case "ExecutionFailed":
			e.ExecutionFailedEventDetails = d
		case "ExecutionAborted":
			e.ExecutionAbortedEventDetails = d
		case "ExecutionTimedOut":
			e.ExecutionTimedOutEventDetails = d
		case "LambdaFunctionFailed":
			e.LambdaFunctionFailedEventDetails = d
		case "LambdaFunctionTimedOut":
			e.LambdaFunctionTimedOutEventDetails = d
		case "MapRunFailed":
			e.MapRunFailedEventDetails = d
		}
	case *TaskDetails:
		switch r.typ {
		case "TaskStarted":
			e.TaskStartedEventDetails = d
		case "TaskSubmitted":
			e.TaskSubmittedEventDetails = d
		case "TaskSucceeded":
			e.TaskSucceededEventDetails = d
		case "TaskFailed":
			e.TaskFailedEventDetails = d
		case "TaskTimedOut":
			e.TaskTimedOutEventDetails = d
		}
	case *MapIterationDetails:
		switch r.typ {
		case "MapIterationStarted":
			e.MapIterationStartedEventDetails = d
		case "MapIterationSucceeded":
			e.MapIterationSucceededEventDetails = d
		case "MapIterationFailed":
			e.MapIterationFailedEventDetails = d
		case "MapIterationAborted":
			e.MapIterationAbortedEventDetails = d
		}
	}
	return e
}

// link makes v the chain's last event.
func (h *history) link(c *chain, v int64) {
	h.mu.Lock()
	c.last = v
	h.mu.Unlock()
}

// timeOf gives the time of event id.
func (h *history) timeOf(id int64) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if id < 1 || int(id) > len(h.records) {
		return time.Time{}
	}
	return h.records[id-1].at
}

func (h *history) lastOf(c *chain) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return c.last
}
