package lambdaapi

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// TimedOut is the error type Lambda reports for a function that ran past its timeout (Step
// Functions names the task's error after it; older runtimes' Lambda.Unknown covers the rest).
const TimedOut = "Sandbox.Timedout"

// WithTimeout bounds inv as Lambda bounds a function: past d (Lambda's maximum when d <= 0) the
// invocation answers the function error Lambda gives, Sandbox.Timedout with "Task timed out after N
// seconds", whatever the handler does with its context's deadline. A handler that ignores the
// deadline goes on in the background, as a function frozen mid-run would have had its effect.
func WithTimeout(inv Invoker, d time.Duration) Invoker {
	if d <= 0 {
		d = MaxTimeout
	}
	return InvokerFunc(func(outer context.Context, payload []byte) ([]byte, *FunctionError, error) {
		ctx, cancel := context.WithTimeout(outer, d)
		type answer struct {
			out  []byte
			ferr *FunctionError
			err  error
		}
		done := make(chan answer, 1)
		goWorker(func() {
			defer cancel()
			out, ferr, err := inv.Invoke(ctx, payload)
			done <- answer{out, ferr, err}
		})
		var a answer
		select {
		case a = <-done:
		case <-ctx.Done():
			if outer.Err() == nil && ctx.Err() == context.DeadlineExceeded {
				break // the function's own time ran out: it answers no more
			}
			a = <-done // the caller's cancellation or deadline: the handler sees it and answers
			return a.out, a.ferr, a.err
		}
		if outer.Err() == nil && ctx.Err() == context.DeadlineExceeded {
			return nil, &FunctionError{Type: TimedOut, Message: fmt.Sprintf("RequestId: %s Error: Task timed out after %.2f seconds", uuid.NewString(), d.Seconds())}, nil
		}
		return a.out, a.ferr, a.err
	})
}
