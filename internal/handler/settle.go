package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/workflow"
)

// SettleDeps are the handler's dependencies.
type SettleDeps struct {
	Workflow *workflow.Service // needs Store
}

// NewSettle is the settle Lambda's handler: the state machines' last step, and the target of Step
// Functions' "Execution Status Change" events. It takes either form: the state machine's outcome {call, context, result |
// error} → the result object; or an "Execution Status Change" event → the final execution record
// (null when the execution is not one of sinew's).
func NewSettle(d SettleDeps) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var probe struct {
			DetailType *string `json:"detail-type"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fault.Invalid("event", "the event must be a JSON object")
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
	return SettleDeps{Workflow: &workflow.Service{Store: env.Store(NoKey{})}}, nil
}
