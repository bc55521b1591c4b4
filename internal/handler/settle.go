package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/fault"
	"sinew/internal/workflow"
)

// SettleDeps are the handler's dependencies.
type SettleDeps struct {
	Workflow *workflow.Service // needs Store
	// Sweep settles the open records whose status change was lost, on a scheduled event (nil:
	// such an event is refused).
	Sweep *workflow.Reconciler
}

// DetailTypeScheduled is the detail-type of the events a schedule (an EventBridge rule's or
// EventBridge Scheduler's) sends settle to sweep.
const DetailTypeScheduled = "Scheduled Event"

// NewSettle is the settle Lambda's handler: the state machines' last step, the target of Step
// Functions' "Execution Status Change" events, and the sweep's, on a schedule. It takes each form:
// the state machine's outcome {call, context, result | error} → the result object; an "Execution
// Status Change" event → the final execution record (null when the execution is not one of
// sinew's); a "Scheduled Event" → what the sweep did (workflow.SweepStats).
func NewSettle(d SettleDeps) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var probe struct {
			DetailType *string `json:"detail-type"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fault.Invalid("event", "the event must be a JSON object")
		}
		if probe.DetailType != nil && *probe.DetailType == DetailTypeScheduled {
			return sweep(ctx, d.Sweep, raw)
		}
		if probe.DetailType != nil {
			var ev workflow.StatusChange
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, fault.Invalid("detail", "the event is not an Execution Status Change event: %v", err)
			}
			x, err := d.Workflow.SettleEvent(ctx, ev)
			if err != nil || x == nil {
				return nil, err
			}
			return x, nil
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
		return d.Workflow.Settle(ctx, o)
	}
}

// SettleFromEnv builds the dependencies from the environment.
func SettleFromEnv(ctx context.Context) (SettleDeps, error) {
	env, err := Load(ctx)
	if err != nil {
		return SettleDeps{}, err
	}
	st := env.Store(NoKey{})
	deps := SettleDeps{Workflow: &workflow.Service{Store: st}}
	if env.Config.ToolCallARN != "" && env.Config.AgentLoopARN != "" {
		deps.Sweep = &workflow.Reconciler{Store: st, SFN: sfn.NewFromConfig(env.AWS),
			ARNs: map[string]string{workflow.ToolCall: env.Config.ToolCallARN, workflow.AgentLoop: env.Config.AgentLoopARN}}
	}
	return deps, nil
}

// sweep runs the sweep of a scheduled event. The event's detail may bound it ({"limit": n,
// "grace_seconds": n}: local mode's short period takes a short grace); a schedule's own detail is
// empty, for the defaults.
func sweep(ctx context.Context, r *workflow.Reconciler, raw json.RawMessage) (any, error) {
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
