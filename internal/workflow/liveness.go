package workflow

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/fault"
	"sinew/internal/store"
)

// Liveness settles, as they are read, the records of executions that never started (a process that
// recorded an execution and died before starting it, or whose start failed and whose clean-up was
// lost, leaves a record "running" that nothing will ever end, and a session handed to it would stay
// busy) and of executions Step Functions has ended whose status change never reached settle
// (Reconciler). Any workflow's records are checked the same way.
type Liveness struct {
	Store *store.Store
	SFN   Describer
	// ARNs are the state machines' ARNs by workflow (tool_call, agent_loop).
	ARNs  map[string]string
	Grace time.Duration    // DefaultGrace when 0
	Now   func() time.Time // time.Now when nil

	once sync.Once
	rec  *Reconciler // made from the fields above at the first check (reconcile.go)
}

// Check answers x as it stands: a record that is not final, whose execution Step Functions has
// ended, or does not know (past the grace, or once its first state ran), is settled first. A nil
// Liveness answers x unchanged.
func (l *Liveness) Check(ctx context.Context, dev string, x *store.Execution) (*store.Execution, error) {
	if l == nil {
		return x, nil
	}
	return l.reconciler().Reconcile(ctx, dev, x)
}

// CheckAll is Check over a list, in place, for ReadBudget records at most.
func (l *Liveness) CheckAll(ctx context.Context, dev string, xs []store.Execution) error {
	if l == nil {
		return nil
	}
	return l.reconciler().ReconcileAll(ctx, dev, xs)
}

// Exists asks Step Functions whether the execution named name of workflow exists (whatever its
// status).
func (l *Liveness) Exists(ctx context.Context, wf, name string) (bool, error) {
	arn, ok := l.ARNs[wf]
	if !ok || !strings.Contains(arn, ":stateMachine:") {
		return false, fault.New(fault.Internal, "the %s state machine's ARN is not configured", wf)
	}
	arn = strings.Replace(arn, ":stateMachine:", ":execution:", 1) + ":" + name
	_, err := l.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: &arn})
	switch {
	case err == nil:
		return true, nil
	case fault.AWSCode(err) == "ExecutionDoesNotExist":
		return false, nil
	}
	return false, fault.Wrap(fault.Transient, err, "asking Step Functions about execution %s", name)
}

// NewLiveness is a Liveness over st and a Step Functions client, for both state machines.
func NewLiveness(st *store.Store, c Describer, toolCallARN, agentLoopARN string) *Liveness {
	return &Liveness{Store: st, SFN: c, ARNs: map[string]string{ToolCall: toolCallARN, AgentLoop: agentLoopARN}}
}

// reconciler is the Reconciler behind Check, made once from l's fields: its memory of executions
// found running lately is what keeps a polling client from asking Step Functions at each read.
func (l *Liveness) reconciler() *Reconciler {
	l.once.Do(func() {
		l.rec = &Reconciler{Store: l.Store, SFN: l.SFN, ARNs: l.ARNs, Grace: l.Grace, Now: l.Now}
	})
	return l.rec
}

// CheckCalls reconciles the executions of the pending calls a list shows (ReadBudget of
// them at most): changed tells that one was settled, so the list is to be read again.
func (l *Liveness) CheckCalls(ctx context.Context, dev string, calls []store.PendingCall) (changed bool, err error) {
	if l == nil {
		return false, nil
	}
	return l.reconciler().ReconcileCalls(ctx, dev, calls)
}
