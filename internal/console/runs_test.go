package console

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// ev is an event whose previous event is prev; name is a state's name for Entered and Exited.
func ev(id, prev int64, typ, name string) Event {
	return Event{ID: id, Prev: prev, Type: typ, State: name, Time: time.Unix(1700000000+id, 0)}
}

func withErr(e Event, err string) Event { e.Error = err; return e }

func TestAnalyzeColoursEachState(t *testing.T) {
	for _, tc := range []struct {
		name     string
		events   []Event
		state    string
		want     string
		count    int
		attempts int
		errors   int
	}{
		{name: "succeeded", state: "Prepare", want: StatusSucceeded, count: 1, attempts: 1, events: []Event{
			ev(1, 0, "ExecutionStarted", ""), ev(2, 0, "TaskStateEntered", "Prepare"), ev(3, 2, "TaskScheduled", ""),
			ev(4, 3, "TaskStarted", ""), ev(5, 4, "TaskSucceeded", ""), ev(6, 5, "TaskStateExited", "Prepare"), ev(7, 6, "ExecutionSucceeded", "")}},
		{name: "retried", state: "Prepare", want: StatusRetried, count: 1, attempts: 2, errors: 1, events: []Event{
			ev(2, 0, "TaskStateEntered", "Prepare"), ev(3, 2, "TaskScheduled", ""), withErr(ev(4, 3, "TaskFailed", ""), "Sinew.Transient"),
			ev(5, 4, "TaskScheduled", ""), ev(6, 5, "TaskSucceeded", ""), ev(7, 6, "TaskStateExited", "Prepare")}},
		{name: "caught", state: "Function", want: StatusCaught, count: 1, attempts: 1, errors: 1, events: []Event{
			ev(2, 0, "TaskStateEntered", "Function"), ev(3, 2, "TaskScheduled", ""), ev(4, 3, "TaskSubmitted", ""),
			withErr(ev(5, 4, "TaskFailed", ""), "Client.NotAllowed"), ev(6, 5, "TaskStateExited", "Function"), ev(7, 6, "TaskStateEntered", "Settle")}},
		{name: "waiting on a token", state: "Function", want: StatusWaiting, count: 1, attempts: 1, events: []Event{
			ev(2, 0, "TaskStateEntered", "Function"), ev(3, 2, "TaskScheduled", ""), ev(4, 3, "TaskStarted", ""), ev(5, 4, "TaskSubmitted", "")}},
		{name: "running", state: "Integration", want: StatusRunning, count: 1, attempts: 1, events: []Event{
			ev(2, 0, "TaskStateEntered", "Integration"), ev(3, 2, "TaskScheduled", ""), ev(4, 3, "TaskStarted", "")}},
		{name: "failed", state: "Settle", want: StatusFailed, count: 1, attempts: 1, errors: 1, events: []Event{
			ev(2, 0, "TaskStateEntered", "Settle"), ev(3, 2, "TaskScheduled", ""), withErr(ev(4, 3, "LambdaFunctionFailed", ""), "Boom"),
			withErr(ev(5, 4, "ExecutionFailed", ""), "Boom")}},
		{name: "a Fail state", state: "PrepareFailed", want: StatusFailed, count: 1, events: []Event{
			ev(2, 0, "FailStateEntered", "PrepareFailed"), ev(3, 2, "ExecutionFailed", "")}},
		{name: "aborted while waiting", state: "Function", want: StatusAborted, count: 1, attempts: 1, events: []Event{
			ev(2, 0, "TaskStateEntered", "Function"), ev(3, 2, "TaskScheduled", ""), ev(4, 3, "TaskSubmitted", ""), ev(5, 0, "ExecutionAborted", "")}},
		{name: "two Map iterations, one waits", state: "RouteByType", want: StatusSucceeded, count: 2, events: []Event{
			ev(11, 10, "MapStateEntered", "RunCalls"), ev(12, 11, "MapStateStarted", ""), ev(13, 12, "MapIterationStarted", ""),
			ev(14, 13, "MapIterationStarted", ""), ev(15, 13, "ChoiceStateEntered", "RouteByType"), ev(16, 15, "ChoiceStateExited", "RouteByType"),
			ev(17, 16, "TaskStateEntered", "Integration"), ev(18, 14, "ChoiceStateEntered", "RouteByType"), ev(19, 18, "ChoiceStateExited", "RouteByType"),
			ev(20, 19, "TaskStateEntered", "Function"), ev(21, 20, "TaskScheduled", ""), ev(22, 21, "TaskSubmitted", ""),
			ev(23, 17, "TaskScheduled", ""), ev(24, 23, "TaskSucceeded", ""), ev(25, 24, "TaskStateExited", "Integration")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			views, _ := Analyze(tc.events)
			v := views[tc.state]
			if v == nil {
				t.Fatalf("no view of %s in %v", tc.state, views)
			}
			if v.Status != tc.want || v.Count != tc.count {
				t.Errorf("%s: status %q count %d, want %q %d", tc.state, v.Status, v.Count, tc.want, tc.count)
			}
			last := v.Runs[len(v.Runs)-1]
			if last.Attempts != tc.attempts || len(last.Errors) != tc.errors {
				t.Errorf("%s: attempts %d errors %v, want %d and %d", tc.state, last.Attempts, last.Errors, tc.attempts, tc.errors)
			}
		})
	}
}

func TestAnalyzeMapMixesItsRuns(t *testing.T) {
	events := []Event{
		ev(13, 12, "MapIterationStarted", ""), ev(14, 12, "MapIterationStarted", ""),
		ev(15, 13, "TaskStateEntered", "Function"), ev(16, 15, "TaskScheduled", ""), ev(17, 16, "TaskSubmitted", ""),
		ev(18, 14, "TaskStateEntered", "Function"), ev(19, 18, "TaskScheduled", ""), ev(20, 19, "TaskSucceeded", ""), ev(21, 20, "TaskStateExited", "Function"),
	}
	views, _ := Analyze(events)
	if v := views["Function"]; v.Status != StatusWaiting || v.Count != 2 || v.Runs[1].Status != StatusSucceeded {
		t.Errorf("Function = %q (%d runs, the second %q), want waiting, 2, succeeded", v.Status, v.Count, v.Runs[1].Status)
	}
}

func TestAnalyzeFindsToolCalls(t *testing.T) {
	in := json.RawMessage(`{"call":{"id":"call_1","model_call_id":"tc_echo","type":"integration","integration":{"name":"echo","arguments":{"text":"hi"}}},"result":null}`)
	out := json.RawMessage(`{"call":{"id":"call_1"},"result":{"output":{"text":"hi"}},"error":null}`)
	entered := ev(2, 0, "TaskStateEntered", "Integration")
	entered.Input = in
	exited := ev(5, 4, "TaskStateExited", "Integration")
	exited.Output = out
	noCall := ev(6, 5, "TaskStateEntered", "Other")
	noCall.Input = json.RawMessage(`{"x":1}`)
	settle := ev(7, 6, "TaskStateEntered", "Settle") // carries the call on: not a call of its own
	settle.Input = out
	_, calls := Analyze([]Event{entered, ev(3, 2, "TaskScheduled", ""), ev(4, 3, "TaskSucceeded", ""), exited, noCall, settle})
	if len(calls) != 1 {
		t.Fatalf("calls = %+v, want one", calls)
	}
	c := calls[0]
	if c.ID != "call_1" || c.ModelCallID != "tc_echo" || c.Type != "integration" || c.Name != "echo" || c.State != "Integration" ||
		c.Status != StatusSucceeded || string(c.Result) != `{"output":{"text":"hi"}}` || c.Error != nil || string(c.Arguments) != `{"text":"hi"}` {
		t.Errorf("call = %+v", c)
	}
}

func TestFromHistoryTiesEventsToStates(t *testing.T) {
	now := time.Now()
	hist := []types.HistoryEvent{
		{Id: 1, Type: types.HistoryEventTypeExecutionStarted, Timestamp: &now, ExecutionStartedEventDetails: &types.ExecutionStartedEventDetails{Input: aws.String(`{"a":1}`)}},
		{Id: 2, Type: types.HistoryEventTypeTaskStateEntered, Timestamp: &now, StateEnteredEventDetails: &types.StateEnteredEventDetails{Name: aws.String("Prepare"), Input: aws.String(`{"a":1}`)}},
		{Id: 3, PreviousEventId: 2, Type: types.HistoryEventTypeTaskScheduled, Timestamp: &now, TaskScheduledEventDetails: &types.TaskScheduledEventDetails{Resource: aws.String("invoke"), Parameters: aws.String(`{"p":2}`)}},
		{Id: 4, PreviousEventId: 3, Type: types.HistoryEventTypeTaskFailed, Timestamp: &now, TaskFailedEventDetails: &types.TaskFailedEventDetails{Error: aws.String("E"), Cause: aws.String("not json")}},
		{Id: 5, PreviousEventId: 4, Type: types.HistoryEventTypeTaskStateExited, Timestamp: &now, StateExitedEventDetails: &types.StateExitedEventDetails{Name: aws.String("Prepare"), Output: aws.String(`{"b":2}`)}},
	}
	got := FromHistory(hist)
	want := []struct{ state, input, output, params, err, cause string }{
		{"", `{"a":1}`, "", "", "", ""},
		{"Prepare", `{"a":1}`, "", "", "", ""},
		{"Prepare", "", "", `{"p":2}`, "", ""},
		{"Prepare", "", "", "", "E", "not json"},
		{"Prepare", "", `{"b":2}`, "", "", ""},
	}
	for i, w := range want {
		g := got[i]
		if g.State != w.state || string(g.Input) != w.input || string(g.Output) != w.output || string(g.Parameters) != w.params || g.Error != w.err || g.Cause != w.cause {
			t.Errorf("event %d = %+v, want %+v", i+1, g, w)
		}
	}
}
