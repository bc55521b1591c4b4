package console

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// Event is a history event as the console shows it: its type, the state it belongs to, and the
// values its details carry (JSON values where the text is JSON).
type Event struct {
	ID         int64           `json:"id"`
	Prev       int64           `json:"previous_event_id"`
	Type       string          `json:"type"`
	Time       time.Time       `json:"timestamp"`
	State      string          `json:"state,omitempty"` // the state it belongs to, found through previous_event_id
	Input      json.RawMessage `json:"input,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Error      string          `json:"error,omitempty"`
	Cause      string          `json:"cause,omitempty"`
	Resource   string          `json:"resource,omitempty"`
	Index      *int            `json:"index,omitempty"` // a Map iteration's
}

// eventDetails are the fields of the history event details types the console reads.
type eventDetails struct {
	Name       *string
	Input      *string
	Output     *string
	Parameters *string
	Error      *string
	Cause      *string
	Resource   *string
	Index      *int
}

// FromHistory turns Step Functions history events into Events, each tied to its state.
func FromHistory(hist []types.HistoryEvent) []Event {
	owner := map[int64]string{}
	out := make([]Event, 0, len(hist))
	for _, h := range hist {
		e := Event{ID: h.Id, Prev: h.PreviousEventId, Type: string(h.Type)}
		if h.Timestamp != nil {
			e.Time = *h.Timestamp
		}
		d := details(h)
		e.Input, e.Output, e.Parameters = jsonText(d.Input), jsonText(d.Output), jsonText(d.Parameters)
		e.Error, e.Cause, e.Resource, e.Index = deref(d.Error), deref(d.Cause), deref(d.Resource), d.Index
		switch {
		case strings.HasSuffix(e.Type, "StateEntered") && d.Name != nil:
			e.State = *d.Name
		case strings.HasPrefix(e.Type, "MapIteration"):
			// An iteration's events carry the Map's name; its states are entered after it.
		default:
			e.State = owner[e.Prev]
			if strings.HasSuffix(e.Type, "StateExited") && d.Name != nil {
				e.State = *d.Name
			}
		}
		owner[e.ID] = e.State
		out = append(out, e)
	}
	return out
}

// details reads whichever *EventDetails member an event has: the SDK gives each event type a
// struct of its own, and the console needs the same few fields from all of them.
func details(h types.HistoryEvent) eventDetails {
	b, err := json.Marshal(h)
	if err != nil {
		return eventDetails{}
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return eventDetails{}
	}
	var d eventDetails
	for k, v := range all {
		if strings.HasSuffix(k, "EventDetails") && string(v) != "null" {
			_ = json.Unmarshal(v, &d)
		}
	}
	return d
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// jsonText is the text as a JSON value: itself when it is JSON, else a JSON string.
func jsonText(s *string) json.RawMessage {
	if s == nil {
		return nil
	}
	if json.Valid([]byte(*s)) {
		return json.RawMessage(*s)
	}
	b, _ := json.Marshal(*s)
	return b
}

// What happened to a state, most telling first: a state that ran several times (in a Map, or
// once per turn) shows the most telling of its runs.
const (
	StatusWaiting   = "waiting" // on a task token
	StatusRunning   = "running"
	StatusFailed    = "failed"
	StatusAborted   = "aborted"
	StatusCaught    = "caught"  // failed, and a Catch took over
	StatusRetried   = "retried" // succeeded after a Retry
	StatusSucceeded = "succeeded"
)

var statusRank = map[string]int{StatusWaiting: 1, StatusRunning: 2, StatusFailed: 3, StatusAborted: 4,
	StatusCaught: 5, StatusRetried: 6, StatusSucceeded: 7}

// maxRuns is how many runs of one state are kept (the last ones); Runs counts them all.
const maxRuns = 25

// StateView is what happened to one state in an execution.
type StateView struct {
	Status string `json:"status"`
	Count  int    `json:"count"` // how many times it was entered
	Runs   []*Run `json:"runs"`  // the last maxRuns
}

// Run is one time a state was entered.
type Run struct {
	Status   string          `json:"status"`
	Input    json.RawMessage `json:"input,omitempty"`
	Output   json.RawMessage `json:"output,omitempty"`
	Attempts int             `json:"attempts"` // tasks scheduled: 1 + its retries
	Errors   []RunError      `json:"errors,omitempty"`
	Entered  time.Time       `json:"entered"`
	Exited   *time.Time      `json:"exited,omitempty"`
	failed   bool            // its last attempt failed
}

// RunError is one failed attempt.
type RunError struct {
	Event int64  `json:"event"`
	Error string `json:"error"`
	Cause string `json:"cause,omitempty"`
}

// Analyze says what happened to each state that ran, and which tool calls ran.
func Analyze(events []Event) (map[string]*StateView, []Call) {
	views := map[string]*StateView{}
	runOf := map[int64]*Run{}
	var all []*Run
	for _, e := range events {
		if strings.HasSuffix(e.Type, "StateEntered") && e.State != "" {
			r := &Run{Status: StatusRunning, Input: e.Input, Entered: e.Time}
			switch e.Type {
			case "FailStateEntered":
				r.Status = StatusFailed
			case "SucceedStateEntered":
				r.Status = StatusSucceeded
			}
			v := views[e.State]
			if v == nil {
				v = &StateView{}
				views[e.State] = v
			}
			v.Count++
			v.Runs = append(v.Runs, r)
			if len(v.Runs) > maxRuns {
				v.Runs = v.Runs[1:]
			}
			runOf[e.ID] = r
			all = append(all, r)
			continue
		}
		r := runOf[e.Prev]
		runOf[e.ID] = r
		switch {
		case e.Type == "ExecutionFailed" || e.Type == "ExecutionAborted" || e.Type == "ExecutionTimedOut":
			for _, r := range all {
				if r.Status == StatusRunning || r.Status == StatusWaiting {
					r.Status = StatusAborted
				}
			}
		case r != nil && !strings.HasPrefix(e.Type, "Execution"):
			r.apply(e)
		}
	}
	for _, v := range views {
		v.Status = v.Runs[0].Status
		for _, r := range v.Runs {
			if statusRank[r.Status] < statusRank[v.Status] {
				v.Status = r.Status
			}
		}
	}
	return views, calls(events, runOf)
}

// apply moves a run on by one of its events.
func (r *Run) apply(e Event) {
	t := e.Type
	switch {
	case strings.HasSuffix(t, "Scheduled"):
		r.Attempts++
		r.Status, r.failed = StatusRunning, false
	case t == "TaskSubmitted":
		r.Status = StatusWaiting
	case strings.HasSuffix(t, "Succeeded") && !strings.HasPrefix(t, "MapIteration"):
		r.Status, r.failed = StatusRunning, false
	case strings.HasSuffix(t, "StateAborted"):
		r.Status = StatusAborted
	case isFailure(t):
		r.Errors = append(r.Errors, RunError{Event: e.ID, Error: e.Error, Cause: e.Cause})
		r.Status, r.failed = StatusFailed, true
	case strings.HasSuffix(t, "StateExited"):
		r.Output = e.Output
		at := e.Time
		r.Exited = &at
		switch {
		case r.failed:
			r.Status = StatusCaught
		case r.Attempts > 1 || len(r.Errors) > 0:
			r.Status = StatusRetried
		default:
			r.Status = StatusSucceeded
		}
	}
}

// isFailure reports whether a state's event is a failed attempt (of a task, a Lambda, a Map...).
func isFailure(t string) bool {
	if strings.HasPrefix(t, "MapIteration") || strings.HasPrefix(t, "Execution") {
		return false
	}
	return strings.HasSuffix(t, "Failed") || strings.HasSuffix(t, "TimedOut")
}

// Call is a tool call that a sinew state machine ran: found in the input of the executor state
// that ran it, with what that state gave back.
type Call struct {
	ID          string          `json:"id"`
	ModelCallID string          `json:"model_call_id,omitempty"`
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	State       string          `json:"state"`
	Status      string          `json:"status"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       json.RawMessage `json:"error,omitempty"`
	Entered     time.Time       `json:"entered"`
}

// calls lists the tool calls of an execution, in the order they started. A call is found in
// the input of the first task state that gets it (its executor); the states after it (Settle)
// carry it on and are not calls of their own.
func calls(events []Event, runOf map[int64]*Run) []Call {
	out := []Call{}
	seen := map[string]bool{}
	for _, e := range events {
		if e.Type != "TaskStateEntered" {
			continue
		}
		var in struct {
			Call map[string]json.RawMessage `json:"call"`
		}
		if json.Unmarshal(e.Input, &in) != nil || in.Call == nil || runOf[e.ID] == nil {
			continue
		}
		c := callOf(in.Call, e.State, runOf[e.ID])
		if c.ID == "" || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		out = append(out, c)
	}
	return out
}

func callOf(call map[string]json.RawMessage, state string, r *Run) Call {
	str := func(raw json.RawMessage) string {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	c := Call{ID: str(call["id"]), ModelCallID: str(call["model_call_id"]), Type: str(call["type"]), State: state,
		Status: r.Status, Entered: r.Entered}
	var body struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(call[c.Type], &body)
	c.Name, c.Arguments = body.Name, body.Arguments
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(r.Output, &out) == nil {
		if string(out.Result) != "null" {
			c.Result = out.Result
		}
		if string(out.Error) != "null" {
			c.Error = out.Error
		}
	}
	return c
}
