package handler

import (
	"context"

	"sinew/internal/dispatch"
	"sinew/internal/fault"
	"sinew/internal/merge"
	"sinew/internal/secrets"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Executor is what the integration and apicall handlers share: a call runs once per (developer,
// call id), its setup is read in the one merge BatchGetItem and opened only inside the run, every
// value it learns is redacted from logs and from the error it fails with, and a large output
// travels as a reference.
type Executor struct {
	Store *store.Store // with a sealer that opens setup
	Guard *dispatch.Guard
	// Redactor learns each call's setup values for the call's duration; the process's log
	// handler wraps it. Nil: a redactor of the executor's own, which still redacts errors.
	Redactor *secrets.Redactor
	// Tokens answers the task token tool_call's Dispatch state passes; nil: one client per process
	// from the environment.
	Tokens *Tokens
}

// Run runs one call of in: exec gets the merge's sources and a resolver of developer secrets
// scoped to the call. kind names the executor in the idempotency record ("integration").
func (x *Executor) Run(ctx context.Context, in workflow.Envelope, kind string,
	exec func(ctx context.Context, src *merge.Sources, res *secrets.Resolver) (any, error)) (any, error) {
	if x.Redactor == nil {
		x.Redactor = secrets.NewRedactor()
	}
	dev := in.Context.DeveloperID
	read := x.readMerge(ctx, dev, store.MergeRef{
		AgentID: in.Context.AgentID, TaskID: in.Context.TaskID, SessionID: in.Context.SessionID,
		Tool: in.Tool.Name, ToolID: in.Tool.ID,
	})
	defer read.cancel()
	return runGuarded(x.Store, x.Guard, in, kind+"/"+in.Tool.Name)(ctx, dev, in.Call.ID, func(ctx context.Context) (_ any, err error) {
		sc := x.Redactor.Scope()
		defer sc.Close()
		// What the call fails with is recorded and travels in the execution's history: redacted
		// with this call's values only (see secrets.Scope.Redact).
		defer func() { err = RedactErr(sc, err) }()
		src, err := read.wait(ctx)
		if err != nil {
			return nil, err
		}
		out, err := exec(ctx, src, secrets.NewResolver(x.Store, dev, sc))
		if err != nil {
			return nil, err
		}
		return x.Store.StoreValue(ctx, dev, out, workflow.PayloadTTL)
	})
}

// mergeRead is the merge's one BatchGetItem in flight.
type mergeRead struct {
	done   chan struct{}
	src    *merge.Sources
	err    error
	cancel context.CancelFunc
}

// readMerge starts reading the merge's sources. The read does not depend on the guard's claim, so
// it goes out beside the claim's write: a call then waits for one DynamoDB round trip before it
// runs instead of two. A run the guard never starts (a call recorded already, or one another
// invocation holds) leaves the read unused, and cancel stops it. A run the guard starts only after
// waiting for another invocation's claim to lapse (a crash's edge) uses sources read before that
// wait, at most dispatch.DefaultWait old: what the call was asked with.
func (x *Executor) readMerge(ctx context.Context, dev string, ref store.MergeRef) *mergeRead {
	ctx, cancel := context.WithCancel(ctx)
	r := &mergeRead{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(r.done)
		r.src, r.err = x.Store.MergeSources(ctx, dev, ref)
	}()
	return r
}

// wait answers the read's sources, or ctx's error if the run ends first.
func (r *mergeRead) wait(ctx context.Context) (*merge.Sources, error) {
	select {
	case <-r.done:
		return r.src, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// CheckEnvelope checks what every executor needs of its event: a valid call of type typ, the
// tool's definition under the same name, and the caller's context.
func CheckEnvelope(in workflow.Envelope, typ tool.Type, hasDef bool) error {
	if err := in.Call.Validate(); err != nil {
		return err
	}
	if in.Call.Type != typ {
		return fault.Invalid("call.type", "the %s executor runs %s calls, not %s", typ, typ, in.Call.Type)
	}
	if in.Tool == nil || !hasDef {
		return fault.Invalid("tool."+string(typ), "tool.%s is required: the tool's definition", typ)
	}
	if in.Tool.Name != in.Call.Name() {
		return fault.Invalid("tool.name", "tool.name %q does not match call.%s.name %q", in.Tool.Name, typ, in.Call.Name())
	}
	if in.Context.DeveloperID == "" || in.Context.AgentID == "" {
		return fault.Invalid("context", "context.developer_id and context.agent_id are required")
	}
	return nil
}

// runGuarded is the guard's run of in's call: on its execution's record when the state machine
// asks for that, skipping the claim's write when the claim was made for this invocation.
func runGuarded(st *store.Store, g *dispatch.Guard, in workflow.Envelope, what string) func(ctx context.Context, dev, callID string, fn func(context.Context) (any, error)) (any, error) {
	if in.Record {
		g = &dispatch.Guard{Records: workflow.RecordsFor(st, in, g.Records), TTL: g.TTL, Lease: g.Lease, Wait: g.Wait, Now: g.Now}
	}
	run := g.Run
	if in.Record && in.Held {
		run = g.RunHeld
	}
	return func(ctx context.Context, dev, callID string, fn func(context.Context) (any, error)) (any, error) {
		return run(ctx, dev, callID, what, fn)
	}
}
