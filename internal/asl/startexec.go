package asl

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Child is an execution a states:startExecution task started (an *Execution, or what
// Config.StartChild gives).
type Child interface {
	Describe() Description
	Done() <-chan struct{}
}

// MachineResolver finds a state machine by ARN for states:startExecution tasks.
type MachineResolver func(arn string) (*Machine, bool)

// startExecution is the optimised arn:aws:states:::states:startExecution integration, run by the
// engine itself: request-response returns {ExecutionArn, StartDate}; .sync and .sync:2 wait for
// the child and return its description (Input/Output as JSON text for .sync, parsed for .sync:2);
// a child that does not succeed fails the task with States.TaskFailed and the description as
// cause (recorded in v2/callback/test_callback). A stopped or timed-out parent stops its child.
func (r *stateRun) startExecution(ctx context.Context, params any, ev *taskEvents) (any, *StatesError) {
	eng := r.f.x.eng
	p, ok := params.(map[string]any)
	if !ok {
		return nil, newErr(ErrTaskFailed, "The Parameters of a startExecution task must be an object")
	}
	arn, _ := p["StateMachineArn"].(string)
	if eng.cfg.Machines == nil {
		return nil, newErr("StepFunctions.StateMachineDoesNotExistException", "State Machine Does Not Exist: '"+arn+"'")
	}
	m, ok := eng.cfg.Machines(arn)
	if !ok {
		return nil, newErr("StepFunctions.StateMachineDoesNotExistException", "State Machine Does Not Exist: '"+arn+"'")
	}
	name, _ := p["Name"].(string)
	input := "{}"
	switch in := p["Input"].(type) {
	case nil:
	case string:
		input = in
	default:
		input = compactJSON(in)
	}
	in := StartInput{Machine: m, StateMachineArn: arn, Name: name, Input: input, Key: r.f.x.ARN + "\x00" + r.position()}
	var child Child
	var err error
	if eng.cfg.StartChild != nil {
		child, err = eng.cfg.StartChild(ctx, in)
	} else {
		child, err = eng.Start(context.WithoutCancel(ctx), in)
	}
	if err != nil {
		code := "StepFunctions.InvalidExecutionInputException"
		if fault.KindOf(err) == fault.Conflict {
			code = "StepFunctions.ExecutionAlreadyExistsException"
		}
		return nil, newErr(code, fault.Message(err))
	}
	cd := child.Describe()
	started := map[string]any{"ExecutionArn": cd.ExecutionArn, "StartDate": millis(cd.StartDate)}
	if r.st.Task.resource.Pattern != PatternSync && r.st.Task.resource.Pattern != PatternSync2 {
		return started, nil
	}
	ev.submitted(started)
	select {
	case <-child.Done(): // first: a child that ended before a restart gives its result at once
	default:
		select {
		case <-child.Done():
		case <-ctx.Done():
			// The parent stopped or the task timed out: AWS stops the child of a .sync task.
			_ = eng.Stop(cd.ExecutionArn, "", "")
			return nil, newErr(ErrTimeout, "")
		}
	}
	d := child.Describe()
	desc := map[string]any{"ExecutionArn": d.ExecutionArn, "StateMachineArn": d.StateMachineArn, "Name": d.Name, "Status": d.Status,
		"StartDate": millis(d.StartDate), "StopDate": millis(d.StopDate), "InputDetails": map[string]any{"Included": true}}
	sync2 := r.st.Task.resource.Pattern == PatternSync2
	desc["Input"] = jsonField(d.Input, sync2)
	if d.Status == StatusSucceeded {
		desc["Output"] = jsonField(d.Output, sync2)
		desc["OutputDetails"] = map[string]any{"Included": true}
		return desc, nil
	}
	if d.Error != "" {
		desc["Error"] = d.Error
	}
	if d.Cause != "" {
		desc["Cause"] = d.Cause
	}
	return nil, newErr(ErrTaskFailed, compactJSON(desc))
}

// position names the visit r by its place in its execution: each state visit from the execution's
// own frame down, as state name, ordinal in its frame and attempt, with the index of the Map
// iteration or Parallel branch between. A replay after a restart gives the visit the same
// position, where event ids (which concurrent iterations share) and inputs (times) may differ.
func (r *stateRun) position() string {
	var parts []string
	for v := r; ; {
		parts = append(parts, v.st.Name+"\x00"+strconv.Itoa(v.step)+"."+strconv.Itoa(v.retryCount))
		f := v.f
		if f.up == nil {
			break
		}
		parts = append(parts, strconv.Itoa(f.branch))
		v = f.up
	}
	slices.Reverse(parts)
	return strings.Join(parts, "\x00")
}

func jsonField(s string, parse bool) any {
	if !parse {
		return s
	}
	v, err := jsonv.DecodeString(s)
	if err != nil {
		return s
	}
	return v
}

func millis(t time.Time) int64 { return t.UnixMilli() }
