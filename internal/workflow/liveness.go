package workflow

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/fault"
	"sinew/internal/store"
)

// DefaultGrace is how long a record may wait for its execution's first state before Step Functions
// is asked whether the execution exists: longer than any route takes between recording an
// execution and starting it.
const DefaultGrace = time.Minute

// Describer is the part of the Step Functions client that tells whether an execution exists.
type Describer interface {
	DescribeExecution(context.Context, *sfn.DescribeExecutionInput, ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
}

// Liveness settles the records of executions that never started: a process that recorded an
// execution and died before starting it (or whose start failed and whose clean-up was lost)
// leaves a record "running" that nothing will ever end, and a session handed to it would stay
// busy. Any workflow's records are checked the same way.
type Liveness struct {
	Store *store.Store
	SFN   Describer
	// ARNs are the state machines' ARNs by workflow (tool_call, agent_loop).
	ARNs  map[string]string
	Grace time.Duration    // DefaultGrace when 0
	Now   func() time.Time // time.Now when nil
}

// neverStarted is the error a settled record carries.
const neverStarted = "the execution was recorded but never started (sinew stopped before starting it); start it again"

// Check answers x as it stands: a running record whose first state has not run, older than the
// grace, whose execution Step Functions does not know, is settled failed first. A nil Liveness
// answers x unchanged.
func (l *Liveness) Check(ctx context.Context, dev string, x *store.Execution) (*store.Execution, error) {
	if l == nil || x == nil || x.Status.Final() || x.FirstStateRan || l.now().Sub(x.CreatedAt) < l.grace() {
		return x, nil
	}
	exists, err := l.Exists(ctx, x.Workflow, x.ExecutionID)
	if err != nil || exists {
		return x, err
	}
	errObj := map[string]any{"type": string(fault.Transient), "message": neverStarted}
	got, _, err := l.Store.SetExecutionStatus(ctx, dev, x.ExecutionID, store.ExecFailed, nil, errObj)
	if err != nil {
		return nil, fmt.Errorf("settling execution %s, which never started: %w", x.ExecutionID, err)
	}
	return got, nil
}

// CheckAll is Check over a list, in place.
func (l *Liveness) CheckAll(ctx context.Context, dev string, xs []store.Execution) error {
	for i := range xs {
		got, err := l.Check(ctx, dev, &xs[i])
		if err != nil {
			return err
		}
		xs[i] = *got
	}
	return nil
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

func (l *Liveness) grace() time.Duration {
	if l.Grace <= 0 {
		return DefaultGrace
	}
	return l.Grace
}

func (l *Liveness) now() time.Time {
	if l.Now == nil {
		return time.Now()
	}
	return l.Now()
}

// NewLiveness is a Liveness over st and a Step Functions client, for both state machines.
func NewLiveness(st *store.Store, c Describer, toolCallARN, agentLoopARN string) *Liveness {
	return &Liveness{Store: st, SFN: c, ARNs: map[string]string{ToolCall: toolCallARN, AgentLoop: agentLoopARN}}
}
