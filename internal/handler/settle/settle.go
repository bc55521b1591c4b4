// Package settle is the settle Lambda, which records how executions ended.
//
// It is the state machines' last step after a failure, the target of Step Functions' "Execution
// Status Change" events (package workflow's Settle and SettleEvent), and the sweep's, on a
// schedule (workflow.Reconciler).
package settle

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/fault"
	"sinew/internal/handler"
	"sinew/internal/lambdaboundary"
	"sinew/internal/workflow"
)

// DetailTypeScheduled is the detail-type of the events a schedule (an EventBridge rule's or
// EventBridge Scheduler's) sends settle to sweep.
const DetailTypeScheduled = "Scheduled Event"

// New builds the settle Lambda from env.
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	st := l.Store(handler.NoKey{})
	var sweep *workflow.Reconciler
	if l.Config.ToolCallARN != "" && l.Config.AgentLoopARN != "" {
		sweep = &workflow.Reconciler{Store: st, SFN: sfn.NewFromConfig(l.AWS),
			ARNs: map[string]string{workflow.ToolCall: l.Config.ToolCallARN, workflow.AgentLoop: l.Config.AgentLoopARN}}
	}
	return lambdaboundary.Handler(Handler(&workflow.Service{Store: st}, sweep)), nil
}

// Handler is the settle Lambda's handler over w (which needs Store) and sweep (nil: a scheduled
// event is refused). It takes each form: the state machine's outcome {call, context, result |
// error} → the result object; an "Execution Status Change" event → the final execution record
// (null when the execution is not one of sinew's); a "Scheduled Event" → what the sweep did
// (workflow.SweepStats).
func Handler(w *workflow.Service, sweep *workflow.Reconciler) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var probe struct {
			DetailType *string `json:"detail-type"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fault.Invalid("event", "the event must be a JSON object")
		}
		if probe.DetailType != nil && *probe.DetailType == DetailTypeScheduled {
			return runSweep(ctx, sweep, raw)
		}
		if probe.DetailType != nil {
			return statusChange(ctx, w, raw)
		}
		var o workflow.Outcome
		// Numbers stay exact (a client's output may hold integers past 2^53).
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		// The state machine sends exactly these keys; anything else is a caller's mistake.
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			return nil, fault.Invalid("event", "the outcome is malformed: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
		return w.Settle(ctx, o)
	}
}

// statusChange settles the execution an "Execution Status Change" event tells of.
func statusChange(ctx context.Context, w *workflow.Service, raw json.RawMessage) (any, error) {
	var ev workflow.StatusChange
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, fault.Invalid("detail", "the event is not an Execution Status Change event: %v", err)
	}
	x, err := w.SettleEvent(ctx, ev)
	if err != nil || x == nil {
		return nil, err
	}
	return x, nil
}

// runSweep runs the sweep of a scheduled event. The event's detail may bound it ({"limit": n,
// "grace_seconds": n}: local mode's short period takes a short grace); a schedule's own detail is
// empty, for the defaults.
func runSweep(ctx context.Context, r *workflow.Reconciler, raw json.RawMessage) (any, error) {
	if r == nil {
		return nil, fault.New(fault.Internal, "settle has no sweep: the state machines' ARNs are not configured")
	}
	var ev struct {
		Detail struct {
			Limit        int `json:"limit"`
			GraceSeconds int `json:"grace_seconds"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, fault.Invalid("detail", "the scheduled event's detail is malformed: %v", err)
	}
	return r.Sweep(ctx, workflow.SweepOptions{Limit: ev.Detail.Limit, Grace: time.Duration(ev.Detail.GraceSeconds) * time.Second})
}
