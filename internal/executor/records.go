package executor

import (
	"context"
	"time"

	"sinew/internal/executor/guard"
	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// CallRecords keeps a tool_call's claim on its execution's own record, for the executors' guard
// (guard.Records): the idempotency claim, the call's record and the execution's record are one
// item, so the executor's claim makes the record if need be and its outcome is the execution's
// success, each one UpdateItem. The chat path, which has no execution, keeps its claims apart.
type CallRecords struct {
	Store *store.Store
	// Execution names the record (and what makes it, if no one has yet).
	Execution store.Execution
	// Call is the call the claim is for: a completed run's output becomes its result object.
	Call tool.Call
}

var _ guard.Records = CallRecords{}

// RecordsFor is the records of in's call: on its execution's record for a tool_call execution's
// call, else the idempotency records of fallback.
func RecordsFor(s *store.Store, in Envelope, fallback guard.Records) guard.Records {
	if !in.onRecord() || in.Context.ExecutionID == "" {
		return fallback
	}
	c := in.Context
	return CallRecords{Store: s, Call: in.Call, Execution: store.Execution{ExecutionID: c.ExecutionID, Workflow: workflow.ToolCall,
		AgentID: c.AgentID, TaskID: c.TaskID, SessionID: c.SessionID}}
}

// PutIdempotency claims the call unless the record holds a claim, which it answers. A completed
// run's claim is kept without its output, which the record's result object holds (see
// UpdateIdempotency): it is read from there, in the rare invocation that finds the call done.
func (r CallRecords) PutIdempotency(ctx context.Context, dev, key string, value any, _ time.Duration) (*store.IdemRecord, bool, error) {
	v, raw, created, err := r.Store.ClaimExecution(ctx, dev, r.Execution, value)
	if err != nil {
		return nil, false, err
	}
	if !created && guard.Lean(v) {
		x, err := r.Store.ExecutionRecord(ctx, dev, r.Execution.ExecutionID)
		if err != nil {
			return nil, false, err
		}
		res, _ := x.Output.(map[string]any)
		v = guard.WithOutput(v, res["output"])
	}
	return &store.IdemRecord{Key: key, Value: v, Raw: raw}, created, nil
}

// TakeOverIdempotency replaces the claim (a running one) only if the record still holds held's.
func (r CallRecords) TakeOverIdempotency(ctx context.Context, dev, key string, held *store.IdemRecord, value any) (*store.IdemRecord, bool, error) {
	var was string
	if held != nil {
		was = held.Raw
	}
	raw, took, err := r.Store.TakeOverExecutionClaim(ctx, dev, r.Execution, was, value)
	if err != nil || !took {
		return nil, false, err
	}
	return &store.IdemRecord{Key: key, Value: value, Raw: raw}, true, nil
}

// UpdateIdempotency replaces the claim; a completed run's also gives the execution its success
// with the call's result object, the output the state machine ends with, beside the claim less
// its output (the item is billed by its size: the output is kept once). A run's outcome is
// written until the table takes it (for up to OutcomeRetry): it is the execution's only record of
// success, the side effect has happened, and no later step would write it.
func (r CallRecords) UpdateIdempotency(ctx context.Context, dev, key string, value any) (*store.IdemRecord, error) {
	var output, lean any
	if out, ok := guard.Done(value); ok {
		output, lean = workflow.ResultObject(tool.ResultOf(&r.Call, out)), guard.WithoutOutput(value)
	}
	err := r.Store.SetExecutionClaim(ctx, dev, r.Execution, value, lean, output)
	_, running := value.(map[string]any)["until"]
	if !running {
		wait := 2 * time.Second
		for end := time.Now().Add(OutcomeRetry); err != nil && (fault.Is(err, fault.Transient) || fault.Is(err, fault.Timeout)) && ctx.Err() == nil && time.Now().Add(wait).Before(end); wait = min(2*wait, 30*time.Second) {
			select {
			case <-ctx.Done():
				return nil, err
			case <-time.After(wait):
			}
			err = r.Store.SetExecutionClaim(ctx, dev, r.Execution, value, lean, output)
		}
	}
	if err != nil {
		return nil, err
	}
	rec := &store.IdemRecord{Key: key, Value: value}
	if running {
		// A renewal's stored form, which the next renewal may be conditional on.
		rec.Raw, _ = store.ClaimRaw(value)
	}
	return rec, nil
}

// OutcomeRetry bounds how long an executor keeps writing a run's outcome while the table fails
// transiently: about the state machine's own Retry budget, which covered the write when a Settle
// step made it.
const OutcomeRetry = 2 * time.Minute
