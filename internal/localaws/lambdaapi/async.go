package lambdaapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"sinew/internal/localaws/outbox"
)

// Files of the Event invocations' journal under the local directory (StartAsync).
const (
	AsyncJournalFileName    = "lambda-async.journal"
	AsyncDeadLetterFileName = "lambda-async-dead-letter.jsonl"
)

// LambdaRetryDelays are Lambda's waits before the two retries of a failed asynchronous invocation
// (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html).
var LambdaRetryDelays = []time.Duration{time.Minute, 2 * time.Minute}

// DefaultAsyncRetry is Lambda's default asynchronous invocation configuration: two retries, and
// an event kept six hours at most.
var DefaultAsyncRetry = outbox.RetryPolicy{MaximumRetryAttempts: 2, MaximumEventAge: 6 * time.Hour}

// AsyncOptions configure the journaled Event invocations.
type AsyncOptions struct {
	Retry       *outbox.RetryPolicy       // nil: DefaultAsyncRetry
	Backoff     func(n int) time.Duration // the wait before retry n; nil: LambdaRetryDelays
	Concurrency int                       // invocations running at once; 0: outbox.DefaultConcurrency
}

// asyncEvent is an Event invocation as the journal keeps it.
type asyncEvent struct {
	Function string          `json:"function"`
	Payload  json.RawMessage `json:"payload"`
}

const asyncConsumer = "lambda-async"

// StartAsync journals the Event invocations in dir from now on: one is durable (fdatasync) before
// its 202, runs until the function succeeds, with Lambda's retries (then it goes to the dead-letter
// file), and one a crash or a stop cut off runs after the next start; the invocations journaled
// before this start run now. Call it once the functions are registered, before the endpoint
// serves. Without it, Event invocations are kept in memory only.
func (s *Service) StartAsync(dir string, o AsyncOptions) error {
	if o.Retry == nil {
		o.Retry = &DefaultAsyncRetry
	}
	if o.Backoff == nil {
		o.Backoff = func(n int) time.Duration { return LambdaRetryDelays[min(n, len(LambdaRetryDelays))-1] }
	}
	ob, err := outbox.Open(filepath.Join(dir, AsyncJournalFileName), outbox.Options{
		DeadLetterPath: filepath.Join(dir, AsyncDeadLetterFileName), Logger: s.log})
	if err != nil {
		return fmt.Errorf("lambdaapi: %w", err)
	}
	err = ob.AddConsumer(outbox.Consumer{Name: asyncConsumer, Retry: *o.Retry, Backoff: o.Backoff, Concurrency: o.Concurrency,
		Deliver: s.deliverEvent})
	if err != nil {
		_ = ob.Close()
		return fmt.Errorf("lambdaapi: %w", err)
	}
	s.mu.Lock()
	s.outbox = ob
	s.mu.Unlock()
	return nil
}

// queueEvent accepts an Event invocation: journaled when StartAsync ran, else run in memory.
func (s *Service) queueEvent(ctx context.Context, name string, inv Invoker, payload []byte) error {
	s.mu.RLock()
	ob := s.outbox
	s.mu.RUnlock()
	if ob == nil {
		s.async.Add(1)
		go s.runEvent(context.WithoutCancel(ctx), name, inv, payload)
		return nil
	}
	data, err := json.Marshal(asyncEvent{Function: name, Payload: payload})
	if err != nil {
		return err
	}
	return ob.Put(outbox.Entry{ID: uuid.NewString(), Data: data, Consumers: []string{asyncConsumer}})
}

// deliverEvent runs a journaled Event invocation once, within the function's timeout; a function
// error is an error, to retry (its message may quote the payload: only its type is told).
func (s *Service) deliverEvent(ctx context.Context, id string, data json.RawMessage) error {
	var ev asyncEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("a journaled invocation is not one: %w", err)
	}
	inv, name, aerr := s.resolve(ev.Function, "")
	if aerr != nil {
		return errors.New(aerr.message)
	}
	bounded := WithTimeout(InvokerFunc(func(ctx context.Context, p []byte) ([]byte, *FunctionError, error) {
		return s.run(ctx, name, inv, p)
	}), s.timeoutOf(name))
	_, ferr, err := bounded.Invoke(WithEvent(ctx), ev.Payload)
	switch {
	case err != nil:
		return err
	case ferr != nil:
		return fmt.Errorf("function error %s", ferr.Type)
	}
	s.log.InfoContext(ctx, "lambda event invocation done", "function", name, "id", id)
	return nil
}
