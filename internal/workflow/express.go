package workflow

import (
	"context"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// SyncStarter is the call that runs an Express execution to its end (StartSyncExecution): the
// Step Functions client has it; a port without it runs every call on tool_call.
type SyncStarter interface {
	StartSyncExecution(context.Context, *sfn.StartSyncExecutionInput, ...func(*sfn.Options)) (*sfn.StartSyncExecutionOutput, error)
}

var _ SyncStarter = (*sfn.Client)(nil)

// ExpressMaxSeconds is the longest bound a server-side tool may have (api_call.timeout) and still
// run on tool_call_express: Express executions end at five minutes, and Dispatch's retries need
// room within them.
const ExpressMaxSeconds = 120

// ExpressLifetime bounds how long a tool_call_express execution can run (AWS ends Express
// executions at five minutes) with a margin: a record of one is settled as gone only after it.
const ExpressLifetime = 6 * time.Minute

// DefaultSyncWait is how long POST /tool-calls waits for a call on tool_call_express before it
// answers 202 with the execution to poll: under API Gateway's 30 s integration timeout.
const DefaultSyncWait = 25 * time.Second

// StartOptions are a tool call's options besides the request.
type StartOptions struct {
	IdempotencyKey string
	// Async: the caller asked for the execution to poll (Prefer: respond-async), not the result.
	Async bool
	// Wait bounds the wait for a call on tool_call_express (Service.SyncWait's when 0).
	Wait time.Duration
}

// express reports whether p's call runs on tool_call_express: a server-side call whose bound fits
// an Express execution, when the machine is configured and the caller waits for the result. A
// function call waits for its client, up to a year: only Standard can.
func (s *Service) express(p *Prepared, o StartOptions) (SyncStarter, bool) {
	if o.Async || s.ToolCallExpressARN == "" || p.Call.Type == tool.TypeFunction {
		return nil, false
	}
	if a := p.Tool.APICall; a != nil && a.Timeout != nil && *a.Timeout > ExpressMaxSeconds {
		return nil, false
	}
	ss, ok := s.SFN.(SyncStarter)
	return ss, ok
}

func (s *Service) syncWait(o StartOptions) time.Duration {
	if o.Wait > 0 {
		return o.Wait
	}
	if s.SyncWait > 0 {
		return s.SyncWait
	}
	return DefaultSyncWait
}

// syncEnd is how a synchronous start ended.
type syncEnd struct {
	out *sfn.StartSyncExecutionOutput
	err error
}

// startExpress runs the call on tool_call_express and answers its record once it has ended, if
// that is within the route's wait; else the execution to poll, which goes on.
//
// A call answered in the request is written once: the executor's outcome makes its record (claim
// and outcome in one item, one UpdateItem). No one can ask for the record before the answer names
// it, so the route writes none first. record, when the name is new (no Idempotency-Key; the
// executor then runs held, its first attempt writing no claim), is the route's record of the
// execution with the executor's claim: written only when the wait runs out, before the 202, so
// GET /executions/{id} finds the call at once. A keyed call has none: the executor's claim makes
// the record, and a repeat, which starts the machine again under the same name, finds it, so the
// executor's guard answers the first run's outcome by the call's id, or waits for it: the call
// runs once. An execution that failed as a workflow (not the tool: a timeout, a fault) is settled
// here, since Express executions send no status change events.
func (s *Service) startExpress(ctx context.Context, ss SyncStarter, dev, name string, input []byte, o StartOptions,
	record func(context.Context) (*store.Execution, error)) (*Started, error) {
	ended := make(chan syncEnd, 1)
	go func() {
		ctx := context.WithoutCancel(ctx)
		out, err := ss.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: &s.ToolCallExpressARN,
			Name: &name, Input: awsv2.String(string(input))})
		if err == nil && out.Status != sfntypes.SyncExecutionStatusSucceeded {
			if _, serr := s.SettleEvent(ctx, syncStatusChange(out, string(input))); serr != nil {
				s.log().WarnContext(ctx, "settling a tool_call_express execution that did not succeed", "execution_id", name, "error", serr)
			}
		}
		ended <- syncEnd{out, err}
	}()
	t := time.NewTimer(s.syncWait(o))
	defer t.Stop()
	select {
	case e := <-ended:
		if e.err != nil {
			return nil, startErr(e.err, ToolCall)
		}
		x, err := s.Store.GetExecution(ctx, dev, name)
		if err != nil || !x.Status.Final() {
			// Ended, but its record is not readable as ended: the caller polls it like any other.
			s.log().WarnContext(ctx, "a tool_call_express execution ended; its record is not final yet", "execution_id", name, "error", err)
			return &Started{ExecutionID: name, Status: store.ExecRunning}, nil
		}
		return &Started{ExecutionID: name, Status: x.Status, Ended: x}, nil
	case <-t.C:
		if record != nil {
			if _, err := record(ctx); err != nil {
				// The execution runs, and its executor's outcome makes the record.
				s.log().WarnContext(ctx, "recording a tool_call_express execution past the wait", "execution_id", name, "error", err)
			}
		}
		return &Started{ExecutionID: name, Status: store.ExecRunning}, nil
	case <-ctx.Done():
		return nil, fault.Wrap(fault.Transient, ctx.Err(), "waiting for tool call %s", name)
	}
}

// syncStatusChange is the status change event an ended Express execution would have sent.
func syncStatusChange(out *sfn.StartSyncExecutionOutput, input string) StatusChange {
	var ev StatusChange
	ev.DetailType, ev.Source = DetailTypeStatusChange, "aws.states"
	d := &ev.Detail
	d.ExecutionArn, d.StateMachineArn, d.Name = awsv2.ToString(out.ExecutionArn), awsv2.ToString(out.StateMachineArn), awsv2.ToString(out.Name)
	d.Status, d.Input, d.Output, d.Error, d.Cause = string(out.Status), &input, out.Output, out.Error, out.Cause
	if out.Status == sfntypes.SyncExecutionStatusTimedOut {
		d.Status = "TIMED_OUT"
	}
	return ev
}
