package executor

import (
	"context"

	"sinew/internal/executor/guard"
	"sinew/internal/merge"
	"sinew/internal/secrets"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// Executor runs one call of its type: the call's output (a reference once large), or a typed error
// the Lambda boundary names. Integration, APICall and System are the server-side ones.
type Executor interface {
	Run(ctx context.Context, in Envelope) (any, error)
}

// Handler is a server-side executor's Lambda handler: {call, tool, context} → the result object,
// a tool's failure the error result when the envelope asks for error results. With a task token
// (tool_call's Dispatch) the outcome goes to the token instead (tk: nil answers nothing and fails
// the invocation), and the invocation answers {}. Each tool's failure, on every path, is counted
// by the ToolErrors metric (LogToolError).
func Handler(x Executor, tk *Tokens) func(context.Context, Envelope) (map[string]any, error) {
	return func(ctx context.Context, in Envelope) (map[string]any, error) {
		out, err := x.Run(ctx, in)
		if toolFailure(err) {
			LogToolError(ctx, &in.Call, err)
		}
		return answerOrReturn(ctx, tk, in.TaskToken, in.answersWhole(), in.ErrorResult, &in.Call, out, err)
	}
}

// Runner is what the integration and apicall executors share: a call runs once per (developer,
// call id), its setup is read in the one merge BatchGetItem and opened only inside the run, every
// value it learns is redacted from logs and from the error it fails with, and a large output
// travels as a reference.
type Runner struct {
	Store *store.Store // with a sealer that opens setup
	Guard *guard.Guard // nil: one over Store's idempotency records
	// Redactor learns each call's setup values for the call's duration; the process's log
	// handler wraps it. Nil: a redactor of the call's own, which still redacts errors.
	Redactor *secrets.Redactor
}

// run runs one call of in: exec gets the merge's sources and a resolver of developer secrets
// scoped to the call.
func (r *Runner) run(ctx context.Context, in Envelope,
	exec func(ctx context.Context, src *merge.Sources, res *secrets.Resolver) (any, error)) (any, error) {
	red := r.Redactor
	if red == nil {
		red = secrets.NewRedactor()
	}
	dev := in.Context.DeveloperID
	read := r.readMerge(ctx, dev, in)
	defer read.cancel()
	return runGuarded(r.Store, r.Guard, in)(ctx, func(ctx context.Context) (_ any, err error) {
		sc := red.Scope()
		defer sc.Close()
		// What the call fails with is recorded and travels in the execution's history: redacted
		// with this call's values only (see secrets.Scope.Redact).
		defer func() { err = RedactErr(sc, err) }()
		src, err := read.wait(ctx)
		if err != nil {
			return nil, err
		}
		out, err := exec(ctx, src, secrets.NewResolver(r.Store, dev, sc))
		if err != nil {
			return nil, err
		}
		return r.Store.StoreValue(ctx, dev, out, workflow.PayloadTTL)
	})
}

// mergeRead is the merge's one BatchGetItem in flight.
type mergeRead struct {
	done   chan struct{}
	src    *merge.Sources
	err    error
	cancel context.CancelFunc
}

// readMerge starts reading the merge's sources, unless in's context holds them: the call's
// preparation read them and they need no sealed value (workflow.Metadata). The read does not
// depend on the guard's claim, so it goes out beside the claim's write: a call then waits for one
// DynamoDB round trip before it runs instead of two. A run the guard never starts (a call recorded
// already, or one another invocation holds) leaves the read unused, and cancel stops it. A run the
// guard starts only after waiting for another invocation's claim to lapse (a crash's edge) uses
// sources read before that wait, at most guard.DefaultWait old: what the call was asked with.
func (r *Runner) readMerge(ctx context.Context, dev string, in Envelope) *mergeRead {
	ctx, cancel := context.WithCancel(ctx)
	m := &mergeRead{done: make(chan struct{}), cancel: cancel}
	if md := in.Context.Metadata; md != nil {
		m.src = md.Sources()
		close(m.done)
		return m
	}
	ref := store.MergeRef{AgentID: in.Context.AgentID, TaskID: in.Context.TaskID, SessionID: in.Context.SessionID,
		Tool: in.Tool.Name, ToolID: in.Tool.ID}
	go func() {
		defer close(m.done)
		m.src, m.err = r.Store.MergeSources(ctx, dev, ref)
	}()
	return m
}

// wait answers the read's sources, or ctx's error if the run ends first.
func (m *mergeRead) wait(ctx context.Context) (*merge.Sources, error) {
	select {
	case <-m.done:
		return m.src, m.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runGuarded is the guard's run of in's call: on its execution's record for a tool_call
// execution's call, skipping the claim's write when the claim was made for this invocation. g
// nil: a guard over st's idempotency records.
func runGuarded(st *store.Store, g *guard.Guard, in Envelope) func(ctx context.Context, fn func(context.Context) (any, error)) (any, error) {
	if g == nil {
		g = &guard.Guard{Records: st}
	}
	run := g.Run
	if in.onRecord() {
		g = &guard.Guard{Records: RecordsFor(st, in, g.Records), TTL: g.TTL, Lease: g.Lease, Wait: g.Wait, Now: g.Now}
		run = g.Run
		if in.Held {
			run = g.RunHeld
		}
	}
	return func(ctx context.Context, fn func(context.Context) (any, error)) (any, error) {
		return run(ctx, in.Context.DeveloperID, in.Call.ID, guard.What(in.Call), fn)
	}
}
