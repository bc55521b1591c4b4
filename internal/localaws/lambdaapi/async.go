package lambdaapi

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// DefaultAsyncConcurrency bounds an Async queue's invocations running at once when its options
// give none: enough that one slow invocation does not hold back the events behind it, few enough
// that a burst of events does not flood what the function calls (DynamoDB Local).
const DefaultAsyncConcurrency = 16

// LambdaRetryDelays are Lambda's waits before the two retries of a failed asynchronous invocation
// (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html).
var LambdaRetryDelays = []time.Duration{time.Minute, 2 * time.Minute}

// AsyncOptions configure an Async queue.
type AsyncOptions struct {
	Name        string          // the function's name, for the log
	Concurrency int             // invocations running at once; 0 is DefaultAsyncConcurrency
	RetryDelays []time.Duration // the wait before each retry; nil is LambdaRetryDelays
	Logger      *slog.Logger
}

// Async invokes a function as Lambda runs asynchronous invocations (an EventBridge rule's Lambda
// target): Invoke queues the event and returns at once; the events run side by side, so a slow one
// holds back no other; one that fails, with a function error (a timeout included) or unable to run,
// is run again after each of RetryDelays, then dropped with an error logged (where a deployed
// function's event goes to its on-failure destination). It is safe for concurrent use.
type Async struct {
	inv    Invoker
	name   string
	delays []time.Duration
	log    *slog.Logger
	slots  chan struct{}
	wg     sync.WaitGroup
}

// NewAsync makes an Async queue in front of inv.
func NewAsync(inv Invoker, opts AsyncOptions) *Async {
	n := opts.Concurrency
	if n <= 0 {
		n = DefaultAsyncConcurrency
	}
	a := &Async{inv: inv, name: opts.Name, delays: opts.RetryDelays, log: opts.Logger, slots: make(chan struct{}, n)}
	if a.delays == nil {
		a.delays = LambdaRetryDelays
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	return a
}

// Invoke queues one invocation with payload; it runs until it succeeds, its retries are spent, or
// ctx ends.
func (a *Async) Invoke(ctx context.Context, payload []byte) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.deliver(ctx, payload)
	}()
}

// Wait waits until every queued invocation has ended.
func (a *Async) Wait() { a.wg.Wait() }

func (a *Async) deliver(ctx context.Context, payload []byte) {
	for attempt := 0; ; attempt++ {
		ferr, err := a.attempt(ctx, payload)
		if ferr == nil && err == nil {
			return
		}
		if ctx.Err() != nil {
			return
		}
		// A function error's message may quote the event: only its type is logged.
		why := slog.Group("failure", "error", err)
		if ferr != nil {
			why = slog.Group("failure", "error_type", ferr.Type)
		}
		if attempt >= len(a.delays) {
			a.log.ErrorContext(ctx, "lambda event invocation dropped after its retries", "function", a.name, "attempts", attempt+1, why)
			return
		}
		a.log.WarnContext(ctx, "lambda event invocation failed; retrying", "function", a.name, "attempt", attempt+1,
			"retry_in", a.delays[attempt].String(), why)
		// The wait holds no slot: events behind this one run meanwhile.
		select {
		case <-time.After(a.delays[attempt]):
		case <-ctx.Done():
			return
		}
	}
}

// attempt runs the function once, in one of the queue's slots.
func (a *Async) attempt(ctx context.Context, payload []byte) (*FunctionError, error) {
	select {
	case a.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-a.slots }()
	_, ferr, err := a.inv.Invoke(WithEvent(ctx), payload)
	return ferr, err
}
