// Package settle is the settle Lambda: the state machines' last step after a failure, and the
// target of Step Functions' "Execution Status Change" events (package workflow's Settle and
// SettleEvent).
package settle

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"

	"sinew/internal/fault"
	"sinew/internal/handler"
	"sinew/internal/lambdaboundary"
	"sinew/internal/workflow"
)

// New builds the settle Lambda from env.
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	return lambdaboundary.Handler(Handler(&workflow.Service{Store: l.Store(handler.NoKey{})})), nil
}

// Handler is the settle Lambda's handler over w (which needs Store). It takes either form: the
// state machine's outcome {call, context, result | error} → the result object; or an "Execution
// Status Change" event → the final execution record (null when the execution is not one of
// sinew's).
func Handler(w *workflow.Service) func(context.Context, json.RawMessage) (any, error) {
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
			x, err := w.SettleEvent(ctx, ev)
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
		return w.Settle(ctx, o)
	}
}
