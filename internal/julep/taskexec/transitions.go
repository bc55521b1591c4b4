package taskexec

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/julep/taskflow"
	"sinew/internal/store"
)

// Transition is Julep's Transition.
type Transition struct {
	ID          string    `json:"id"`
	ExecutionID string    `json:"execution_id"`
	Type        string    `json:"type"`
	Current     Position  `json:"current"`
	Next        *Position `json:"next"`
	Output      any       `json:"output"`
	StepLabel   *string   `json:"step_label,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Position is a step of a workflow; scope_id names the execution it ran in.
type Position struct {
	Workflow string `json:"workflow"`
	Step     int    `json:"step"`
	ScopeID  string `json:"scope_id"`
}

// stepState matches a step's own state (w.n) and the Pass a branching step records at (w.n.end).
var stepState = regexp.MustCompile(`^(.+)\.(\d+)(\.end)?$`)

// machineState is what the transitions need of a compiled state.
type machineState struct {
	Type    string `json:"Type"`
	Comment string `json:"Comment"`
	Next    string `json:"Next"`
}

// Transitions reads x's transitions from its Step Functions history, oldest first.
func (s *Service) Transitions(ctx context.Context, x *store.Execution) ([]Transition, error) {
	arn, err := s.executionARN(x.TaskID, x.ExecutionID)
	if err != nil {
		return nil, err
	}
	events, err := s.history(ctx, arn)
	if err != nil {
		return nil, err
	}
	states, err := s.states(ctx, arn)
	if err != nil {
		return nil, err
	}
	return transitions(x, states, events), nil
}

// transitions are the transitions of history events of x, whose machine has states.
func transitions(x *store.Execution, states map[string]machineState, events []types.HistoryEvent) []Transition {
	r := reader{x: x, states: states, waiting: map[string]bool{}}
	for _, e := range events {
		r.event(e)
	}
	return r.out
}

// states are the states of the definition execution arn started with: its states' names are its
// steps', which an update of the task afterwards renumbers in its new executions only. An
// execution's definition never changes, so it is kept for the next read of the same execution (a
// client polling GET /executions/{id} until it ends).
func (s *Service) states(ctx context.Context, arn string) (map[string]machineState, error) {
	if st, ok := s.defs.get(arn); ok {
		return st, nil
	}
	m, err := s.SFN.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: &arn})
	if err != nil {
		return nil, fault.FromAWS(err, "describe the state machine of the task's execution")
	}
	var def struct {
		States map[string]machineState `json:"States"`
	}
	if err := json.Unmarshal([]byte(awsv2.ToString(m.Definition)), &def); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "read the task's state machine")
	}
	s.defs.put(arn, def.States)
	return def.States, nil
}

// maxDefs bounds the definitions a Service keeps: the executions read lately.
const maxDefs = 256

// defCache holds executions' states by execution ARN; its zero value is empty.
type defCache struct {
	mu sync.Mutex
	m  map[string]map[string]machineState
}

func (c *defCache) get(arn string) (map[string]machineState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[arn]
	return st, ok
}

func (c *defCache) put(arn string, st map[string]machineState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxDefs {
		c.m = map[string]map[string]machineState{} // started afresh: the polled ones come back at once
	}
	c.m[arn] = st
}

func (s *Service) history(ctx context.Context, arn string) ([]types.HistoryEvent, error) {
	var out []types.HistoryEvent
	in := &sfn.GetExecutionHistoryInput{ExecutionArn: &arn, MaxResults: 1000}
	for {
		h, err := s.SFN.GetExecutionHistory(ctx, in)
		if err != nil {
			return nil, fault.FromAWS(err, "read the task execution's history")
		}
		out = append(out, h.Events...)
		if h.NextToken == nil {
			return out, nil
		}
		in.NextToken = h.NextToken
	}
}

// reader turns history events into transitions.
type reader struct {
	x       *store.Execution
	states  map[string]machineState
	out     []Transition
	last    Position
	waiting map[string]bool
}

func (r *reader) add(typ string, at *time.Time, id int64, cur Position, next *Position, output any) {
	t := Transition{ID: r.x.ExecutionID + "-" + strconv.FormatInt(id, 10), ExecutionID: r.x.ExecutionID, Type: typ,
		Current: cur, Next: next, Output: output}
	if at != nil {
		t.CreatedAt, t.UpdatedAt = *at, *at
	}
	r.out = append(r.out, t)
	r.last = cur
}

func (r *reader) pos(wf string, step int) Position {
	return Position{Workflow: wf, Step: step, ScopeID: r.x.ExecutionID}
}

func decode(s *string) any {
	if s == nil {
		return nil
	}
	v, _ := jsonv.DecodeString(*s)
	return v
}

func (r *reader) event(e types.HistoryEvent) {
	switch {
	case e.ExecutionStartedEventDetails != nil:
		var in Input
		_ = json.Unmarshal([]byte(awsv2.ToString(e.ExecutionStartedEventDetails.Input)), &in)
		if in.Workflow == "" {
			in.Workflow = taskflow.DefaultWorkflow
		}
		p := r.pos(in.Workflow, 0)
		r.add("init", e.Timestamp, e.Id, p, &p, in.Input)
	case e.StateEnteredEventDetails != nil:
		name := awsv2.ToString(e.StateEnteredEventDetails.Name)
		if m := stepState.FindStringSubmatch(name); m != nil && m[3] == "" && strings.Contains(r.states[name].Comment, taskflow.WaitMark) {
			r.waiting[m[1]+"."+m[2]] = true
			p := r.pos(m[1], atoi(m[2]))
			r.add("wait", e.Timestamp, e.Id, p, &p, decode(e.StateEnteredEventDetails.Input))
		}
	case e.StateExitedEventDetails != nil:
		name := awsv2.ToString(e.StateExitedEventDetails.Name)
		m := stepState.FindStringSubmatch(name)
		if m == nil || r.states[name].Type == "Choice" {
			return
		}
		step := m[1] + "." + m[2]
		typ := "step"
		if r.waiting[step] {
			typ = "resume"
		}
		cur := r.pos(m[1], atoi(m[2]))
		var next *Position
		if _, ok := r.states[m[1]+"."+strconv.Itoa(cur.Step+1)]; ok && r.states[name].Next != "Done" {
			n := r.pos(m[1], cur.Step+1)
			next = &n
		}
		r.add(typ, e.Timestamp, e.Id, cur, next, decode(e.StateExitedEventDetails.Output))
	case e.ExecutionSucceededEventDetails != nil:
		r.add("finish", e.Timestamp, e.Id, r.last, nil, decode(e.ExecutionSucceededEventDetails.Output))
	case e.ExecutionFailedEventDetails != nil:
		d := e.ExecutionFailedEventDetails
		r.add("error", e.Timestamp, e.Id, r.last, nil, map[string]any{"error": awsv2.ToString(d.Error), "cause": awsv2.ToString(d.Cause)})
	case e.ExecutionTimedOutEventDetails != nil:
		r.add("error", e.Timestamp, e.Id, r.last, nil, map[string]any{"error": "States.Timeout"})
	case e.ExecutionAbortedEventDetails != nil:
		r.add("cancelled", e.Timestamp, e.Id, r.last, nil, map[string]any{"cause": awsv2.ToString(e.ExecutionAbortedEventDetails.Cause)})
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
