package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/fault"
	"sinew/internal/store"
)

// Records and Step Functions. An execution's record is made final by its last state, its executor
// or settle on its status-change event. Step Functions sends that event to EventBridge on a best-effort
// basis (https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-states.html), and one that
// cannot be delivered goes to a dead-letter queue; local mode may lose it too. A record whose event
// is lost would wait forever, so the Reconciler settles, from DescribeExecution, any record that
// is not final while its execution has ended or does not exist: when the record is read (GET
// /executions, GET /calls, a chat's busy check), and by the sweep, which looks through the open
// index (store.OpenExecutions) at the records nobody reads. A lost event delays a record; it
// never strands it.

// Describer is the part of the Step Functions client the Reconciler uses.
type Describer interface {
	DescribeExecution(context.Context, *sfn.DescribeExecutionInput, ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
}

// Reconciler defaults.
const (
	// DefaultGrace is how long a record may wait for its execution's first state before Step
	// Functions is asked whether the execution exists: longer than any route takes between
	// recording an execution and starting it. The sweep looks at a record once its grace passed.
	DefaultGrace = time.Minute
	// DefaultLag is how long after a record last changed a read leaves it to its status-change
	// event, which normally arrives within a second or two of the execution's end.
	DefaultLag = 5 * time.Second
	// DefaultRecheck is how long a read trusts an answer that the execution is running (per
	// process), so that a client polling a record does not ask Step Functions each time.
	DefaultRecheck = 15 * time.Second
	// DefaultMaxGap bounds how long the sweep waits before looking again at a record whose
	// execution runs: the gap grows with the record's age up to it.
	DefaultMaxGap = time.Hour
	// ReadBudget is how many records one read of a list asks Step Functions about at most: the
	// others wait for a later read or the sweep.
	ReadBudget = 10
)

// Messages of records settled without their execution's outcome.
const (
	NeverStarted  = "the execution was recorded but never started (sinew stopped before starting it); start it again"
	ExecutionGone = "Step Functions no longer knows the execution (it ended more than 90 days ago, or local mode's data was removed): its outcome is lost"
)

// Reconciler settles records from Step Functions. Its zero value's settings are the defaults; it
// is safe for concurrent use.
type Reconciler struct {
	Store *store.Store
	SFN   Describer
	// ARNs are the state machines' ARNs by workflow (tool_call, agent_loop).
	ARNs    map[string]string
	Grace   time.Duration // DefaultGrace when 0
	Lag     time.Duration // DefaultLag when 0; negative: none
	Recheck time.Duration // DefaultRecheck when 0; negative: none
	MaxGap  time.Duration // DefaultMaxGap when 0
	Now     func() time.Time
	Log     *slog.Logger

	mu      sync.Mutex
	running map[string]time.Time // when a read last asked about the execution and left it, by dev\x00id
}

// Reconcile answers x as it stands: a record that is not final, whose execution Step Functions has
// ended (or does not know, past the grace), is settled from DescribeExecution first and read
// again. A record that changed lately, or whose execution was found running lately, is answered
// as it is; so is every record when Step Functions cannot be asked (the failure is logged: the
// sweep asks again). A nil Reconciler answers x unchanged.
func (r *Reconciler) Reconcile(ctx context.Context, dev string, x *store.Execution) (*store.Execution, error) {
	if r == nil || x == nil {
		return x, nil
	}
	now := r.now()
	if !r.due(dev, x, now) {
		return x, nil
	}
	settled, err := r.check(ctx, dev, x, now, orDefault(r.Grace, DefaultGrace))
	if err != nil {
		r.log().WarnContext(ctx, "reconcile: Step Functions could not be asked; the record is answered as it stands", "execution", x.ExecutionID, "error", err)
	}
	if !settled {
		// Running, or Step Functions did not answer (throttled, say): not asked again for a while.
		r.markAsked(dev+"\x00"+x.ExecutionID, now)
		return x, nil
	}
	return r.Store.GetExecution(ctx, dev, x.ExecutionID)
}

// due reports whether a read of x asks Step Functions: x is not final, did not change lately, and
// was not asked about lately.
func (r *Reconciler) due(dev string, x *store.Execution, now time.Time) bool {
	if x.Status.Final() {
		return false
	}
	if lag := orDefault(r.Lag, DefaultLag); lag > 0 && !x.UpdatedAt.IsZero() && now.Sub(x.UpdatedAt) < lag {
		return false
	}
	return !r.recentlyAsked(dev+"\x00"+x.ExecutionID, now)
}

// ReconcileAll is Reconcile over a list, in place, asking Step Functions about ReadBudget records
// at most, four at a time.
func (r *Reconciler) ReconcileAll(ctx context.Context, dev string, xs []store.Execution) error {
	if r == nil {
		return nil
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	errs := make([]error, len(xs))
	asked := 0
	now := r.now()
	for i := range xs {
		if asked >= ReadBudget || !r.due(dev, &xs[i], now) {
			continue
		}
		asked++
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			got, err := r.Reconcile(ctx, dev, &xs[i])
			if err == nil && got != nil {
				got.PendingCalls = xs[i].PendingCalls // a list carries none
				xs[i] = *got
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ReconcileCalls reconciles the executions of pending calls a list shows (ReadBudget of them at
// most, those found running lately skipped): changed tells that one was settled, so the list no
// longer stands.
func (r *Reconciler) ReconcileCalls(ctx context.Context, dev string, calls []store.PendingCall) (changed bool, err error) {
	if r == nil {
		return false, nil
	}
	now := r.now()
	seen := map[string]bool{}
	asked := 0
	for _, c := range calls {
		if c.Status != store.CallPending || seen[c.ExecutionID] || asked >= ReadBudget || r.recentlyAsked(dev+"\x00"+c.ExecutionID, now) {
			continue
		}
		seen[c.ExecutionID] = true
		if lag := orDefault(r.Lag, DefaultLag); lag > 0 && now.Sub(c.CreatedAt) < lag {
			continue
		}
		asked++
		x, err := r.Store.GetExecution(ctx, dev, c.ExecutionID)
		if fault.Is(err, fault.NotFound) {
			continue
		}
		if err != nil {
			return changed, err
		}
		if x.Status.Final() {
			// Ended, its calls left pending (the settle that ended it stopped half way): they are
			// expired as that settle would have.
			for _, pc := range x.PendingCalls {
				if _, err := r.Store.SettleCall(ctx, dev, x.ExecutionID, pc.CallID, store.CallExpired); err != nil && !fault.Is(err, fault.Conflict) && !fault.Is(err, fault.NotFound) {
					return changed, err
				}
				changed = true
			}
			continue
		}
		got, err := r.Reconcile(ctx, dev, x)
		if err != nil {
			return changed, err
		}
		changed = changed || got.Status.Final()
	}
	return changed, nil
}

// check asks Step Functions about x's execution and settles x when it has ended, or does not exist
// (past the grace, or after its first state ran); settled tells which.
func (r *Reconciler) check(ctx context.Context, dev string, x *store.Execution, now time.Time, grace time.Duration) (settled bool, err error) {
	arn, err := r.executionARN(x.Workflow, x.ExecutionID)
	if err != nil {
		return false, err
	}
	out, err := r.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: &arn})
	switch {
	case fault.AWSCode(err) == "ExecutionDoesNotExist":
		msg := ExecutionGone
		if !x.FirstStateRan {
			if now.Sub(x.CreatedAt) < grace {
				return false, nil
			}
			msg = NeverStarted
		}
		errObj := map[string]any{"type": string(fault.Transient), "message": msg}
		svc := &Service{Store: r.Store, Log: r.Log}
		if _, err := svc.Finish(ctx, dev, x.ExecutionID, store.ExecFailed, nil, errObj); err != nil {
			return false, fmt.Errorf("settling execution %s, which Step Functions does not know: %w", x.ExecutionID, err)
		}
		r.log().InfoContext(ctx, "reconcile: settled a record whose execution does not exist", "execution", x.ExecutionID, "why", msg)
		return true, nil
	case err != nil:
		return false, fault.Wrap(fault.Transient, err, "asking Step Functions about execution %s", x.ExecutionID)
	case out.Status == types.ExecutionStatusRunning || out.Status == types.ExecutionStatusPendingRedrive:
		return false, nil
	}
	svc := &Service{Store: r.Store, Log: r.Log}
	if _, err := svc.settleAs(ctx, dev, describedChange(out)); err != nil {
		return false, fmt.Errorf("settling execution %s from Step Functions: %w", x.ExecutionID, err)
	}
	r.log().InfoContext(ctx, "reconcile: settled a record from Step Functions (its status change never reached settle)",
		"execution", x.ExecutionID, "status", string(out.Status))
	return true, nil
}

// describedChange is the status-change event DescribeExecution's answer stands for.
func describedChange(out *sfn.DescribeExecutionOutput) StatusChange {
	var ev StatusChange
	ev.DetailType, ev.Source = DetailTypeStatusChange, "aws.states"
	d := &ev.Detail
	d.ExecutionArn, d.StateMachineArn, d.Name = aws.ToString(out.ExecutionArn), aws.ToString(out.StateMachineArn), aws.ToString(out.Name)
	d.Status, d.Input, d.Output, d.Error, d.Cause = string(out.Status), out.Input, out.Output, out.Error, out.Cause
	return ev
}

func (r *Reconciler) executionARN(wf, name string) (string, error) {
	arn, ok := r.ARNs[wf]
	if !ok || !strings.Contains(arn, ":stateMachine:") {
		return "", fault.New(fault.Internal, "the %s state machine's ARN is not configured", wf)
	}
	return strings.Replace(arn, ":stateMachine:", ":execution:", 1) + ":" + name, nil
}

// recentlyAsked reports whether a read asked about key's execution, and found it running or got
// no answer, within the recheck time.
func (r *Reconciler) recentlyAsked(key string, now time.Time) bool {
	re := orDefault(r.Recheck, DefaultRecheck)
	if re <= 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.running[key]
	return ok && now.Sub(at) < re
}

// markAsked remembers that a read asked about key's execution; the memory is bounded (a process
// reads a person's worth of records at a time, and an entry older than the recheck time is worth
// nothing).
func (r *Reconciler) markAsked(key string, now time.Time) {
	re := orDefault(r.Recheck, DefaultRecheck)
	if re <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil || len(r.running) > 10000 {
		r.running = map[string]time.Time{}
	}
	r.running[key] = now
}

func (r *Reconciler) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

func (r *Reconciler) log() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
