package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"sinew/internal/asl"
	"sinew/internal/localaws/awsjson"
	"sinew/internal/localaws/lambdaapi"
	"sinew/internal/localaws/quota"
)

// quotasUsage is --quotas' help.
const quotasUsage = "apply AWS's quotas: off, aws (Step Functions' StartExecution and state-transition buckets, " +
	"Lambda's account concurrency of 1,000, DynamoDB's per-partition throughput), new-account (Lambda concurrency 10), " +
	"or either scaled, as aws*0.01 (see internal/localaws/quota/README.md)"

// parseQuotas reads --quotas.
func parseQuotas(s string) (*quota.Limits, error) {
	p, err := quota.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("--quotas: %w", err)
	}
	return quota.New(p), nil
}

// logQuotas says which quotas apply.
func logQuotas(log *slog.Logger, l *quota.Limits) {
	if l == nil {
		return
	}
	p := l.Profile()
	log.Info("AWS quotas applied", "profile", p.Name,
		"start_execution", fmt.Sprintf("%g burst, %g/s", p.StartExecution.Size, p.StartExecution.Refill),
		"state_transition", fmt.Sprintf("%g burst, %g/s", p.StateTransition.Size, p.StateTransition.Refill),
		"lambda_concurrency", p.LambdaConcurrency, "partition_rcu", p.PartitionRead, "partition_wcu", p.PartitionWrite)
}

// sfnThrottle is the Step Functions API's StartExecution bucket, answering AWS's
// ThrottlingException (HTTP 400).
func sfnThrottle(l *quota.Limits) func(op string) error {
	if l == nil {
		return nil
	}
	return func(op string) error {
		if op != "StartExecution" {
			return nil
		}
		if err := l.StartExecution(); err != nil {
			return awsjson.Errorf(http.StatusBadRequest, "ThrottlingException", "Rate exceeded")
		}
		return nil
	}
}

// engineTransitions is the engine's state-transition bucket (nil without quotas: the engine then
// checks nothing).
func engineTransitions(l *quota.Limits) func(context.Context) error {
	if l == nil {
		return nil
	}
	return l.Transition
}

// withConcurrency bounds inv by the account's Lambda concurrency: a synchronous invocation past it
// is refused with TooManyRequestsException (lambdaapi.Throttled), an Event one waits for a slot.
func withConcurrency(l *quota.Limits, inv lambdaapi.Invoker) lambdaapi.Invoker {
	if l == nil {
		return inv
	}
	return lambdaapi.InvokerFunc(func(ctx context.Context, p []byte) ([]byte, *lambdaapi.FunctionError, error) {
		release, err := l.Lambda(ctx, lambdaapi.IsEvent(ctx))
		if th, ok := err.(*quota.Throttle); ok {
			return nil, nil, &lambdaapi.Throttled{Reason: th.Reason, Message: th.Message}
		}
		if err != nil {
			return nil, nil, err
		}
		defer release()
		return inv.Invoke(ctx, p)
	})
}

// throttledTask is what a Lambda task sees of a throttled invocation: Lambda.TooManyRequestsException,
// with the cause Step Functions reports, which the state machine's Retry names.
func throttledTask(th *lambdaapi.Throttled) error {
	return &asl.LambdaServiceError{Code: "TooManyRequestsException", Message: fmt.Sprintf(
		"%s (Service: AWSLambda; Status Code: 429; Error Code: TooManyRequestsException; Request ID: %s; Proxy: null)", th.Message, uuid.NewString())}
}
