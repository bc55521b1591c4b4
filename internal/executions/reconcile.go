package executions

import (
	"context"

	"sinew/internal/store"
	"sinew/internal/workflow"
)

// reconciler is the Reconciler behind Check, made once from l's fields: its memory of executions
// found running lately is what keeps a polling client from asking Step Functions at each read.
func (l *Liveness) reconciler() *workflow.Reconciler {
	l.once.Do(func() {
		l.rec = &workflow.Reconciler{Store: l.Store, SFN: l.SFN, ARNs: l.ARNs, Grace: l.Grace, Now: l.Now}
	})
	return l.rec
}

// CheckCalls reconciles the executions of the pending calls a list shows (workflow.ReadBudget of
// them at most): changed tells that one was settled, so the list is to be read again.
func (l *Liveness) CheckCalls(ctx context.Context, dev string, calls []store.PendingCall) (changed bool, err error) {
	if l == nil {
		return false, nil
	}
	return l.reconciler().ReconcileCalls(ctx, dev, calls)
}
