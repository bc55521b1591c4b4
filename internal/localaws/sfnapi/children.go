package sfnapi

import (
	"context"
	"strings"

	"sinew/internal/asl"
	"sinew/internal/fault"
	"sinew/internal/localaws/durable"
)

// StartChild starts the child execution of a states:startExecution task (the engine's
// Config.StartChild). A Standard child is an execution of its own, recorded and journaled as one
// that StartExecution starts: it is listed and described, announces its status changes, and goes
// on after a restart. A parent replayed after a restart gets back the child it started the first
// time (the parent's journal holds its name), running or ended, so the parent completes. An
// Express child runs on the engine alone, as StartExecution runs one.
func (s *Service) StartChild(ctx context.Context, in asl.StartInput) (asl.Child, error) {
	s.mu.Lock()
	m, ok := s.machines[in.StateMachineArn]
	s.mu.Unlock()
	if !ok || m.rec.Type == "EXPRESS" {
		// Not journaled: neither as its own execution nor under its parent.
		in.Express = ok
		x, err := s.opts.Engine.Start(durable.WithExecution(context.WithoutCancel(ctx), ""), in)
		if err != nil {
			return nil, err
		}
		go func() { <-x.Done(); s.opts.Engine.Forget(x.ARN) }()
		return x, nil
	}
	input := in.Input
	if strings.TrimSpace(input) == "" {
		input = "{}"
	}
	name, replayed, err := s.opts.Recorder.Child(ctx, m.rec.Arn, input, in.Name, in.Key)
	if err != nil {
		return nil, err
	}
	arn := strings.Replace(m.rec.Arn, ":stateMachine:", ":execution:", 1) + ":" + name
	s.mu.Lock()
	if e, ok := s.execs[arn]; ok {
		s.mu.Unlock()
		rec, _ := e.snapshot()
		// The parent's own child (replayed), or, as StartExecution answers, the same name and
		// input while it runs.
		if !replayed && (rec.Status != asl.StatusRunning || rec.Input != input) {
			return nil, &fault.Error{Kind: fault.Conflict, Field: "name", Msg: "Execution Already Exists: '" + arn + "'"}
		}
		if rec.Status == asl.StatusRunning {
			// Started here if Recover has not reached it yet; waits if it is being started.
			if err := s.resumeRecord(ctx, e); err != nil {
				return nil, err
			}
		}
		return newChild(e), nil
	}
	e := &execution{rec: s.startRecord(m, arn, name, input), resumed: true}
	e.runMu.Lock() // another start of the same child waits until this one runs
	defer e.runMu.Unlock()
	s.execs[arn] = e
	s.mu.Unlock()
	if err := s.opts.Store.PutExecution(e.rec); err != nil {
		s.forget(arn)
		return nil, err
	}
	if err := s.run(ctx, e, m.m); err != nil {
		s.forget(arn)
		_ = s.opts.Store.DeleteExecution(arn)
		return nil, err
	}
	s.publish(e.rec)
	return newChild(e), nil
}

// resumeRecord runs a recovered execution that Recover has not reached yet.
func (s *Service) resumeRecord(ctx context.Context, e *execution) error {
	e.mu.Lock()
	rec := e.rec
	e.mu.Unlock()
	s.mu.Lock()
	mm, ok := s.machines[rec.MachineArn]
	s.mu.Unlock()
	var m *asl.Machine
	if ok && mm.rec.Definition == rec.Definition {
		m = mm.m
	} else {
		var err error
		if m, err = asl.Parse([]byte(rec.Definition), asl.Options{JSONata: s.opts.JSONata}); err != nil {
			return fault.Invalid("definition", "the child execution %s cannot go on: its definition no longer parses: %v", rec.Arn, err)
		}
	}
	return s.resume(context.WithoutCancel(ctx), e, m)
}

// child is a Standard child execution as its parent sees it: its record, with the engine's state
// while it runs, and the start date of its first start.
type child struct {
	e    *execution
	done <-chan struct{}
}

func newChild(e *execution) *child {
	e.mu.Lock()
	x, closed := e.x, e.closed
	e.mu.Unlock()
	if x != nil {
		return &child{e: e, done: closed}
	}
	ended := make(chan struct{})
	close(ended)
	return &child{e: e, done: ended}
}

func (c *child) Done() <-chan struct{} { return c.done }

func (c *child) Describe() asl.Description {
	rec, _ := c.e.snapshot()
	return asl.Description{ExecutionArn: rec.Arn, StateMachineArn: rec.MachineArn, Name: rec.Name, Status: rec.Status,
		StartDate: rec.Start, StopDate: rec.Stop, Input: rec.Input, Output: rec.Output, Error: rec.Error, Cause: rec.Cause}
}
