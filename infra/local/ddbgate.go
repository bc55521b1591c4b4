package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// DynamoDB Local runs every SQL statement on one thread and a table's writes one at a time under
// the table's write lock (its reads take only a brief shared lock): requests past a few in flight
// only wait inside its JVM, a thread each, and past a few dozen they time out on the lock and come
// back as errors the SDK retries. Under make soak's load, whose started executions all run at once, local mode had
// 240 DynamoDB requests in flight on average (333 at most), 190 of DynamoDB Local's threads were
// parked on that lock, a request took 0.6-3 s, and a replay of the same mix served a third fewer
// requests per second at 240 in flight than at 64. So the in-process functions keep at most
// defaultDDBInFlight requests in flight to it and the rest queue here, first come first served,
// where waiting costs nothing. AWS's DynamoDB has no such lock; the bound is local mode's alone.
const (
	defaultDDBInFlight = 16
	// envDDBInFlight changes the bound, for measuring it (0: no bound).
	envDDBInFlight = "SINEW_LOCAL_DYNAMODB_IN_FLIGHT"
)

// ddbGate bounds the DynamoDB requests in flight. It sits in the Deserialize step, after the
// retry loop, so an attempt holds a slot only while it is on the wire, not while it backs off.
type ddbGate struct {
	slots  chan struct{}
	waited atomic.Int64 // nanoseconds spent waiting for a slot, summed over the requests
	queued atomic.Int64 // requests that found every slot taken
}

// newDDBGate is a gate of the size envDDBInFlight asks for, defaultDDBInFlight when unset; nil
// when it asks for no bound.
func newDDBGate() (*ddbGate, error) {
	n := defaultDDBInFlight
	if s := os.Getenv(envDDBInFlight); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s=%q: want a count of requests (0: no bound)", envDDBInFlight, s)
		}
		n = v
	}
	if n == 0 {
		return nil, nil
	}
	return &ddbGate{slots: make(chan struct{}, n)}, nil
}

// Register adds the gate to a client's stack; it passes other services' requests through.
func (g *ddbGate) Register(stack *middleware.Stack) error {
	if g == nil {
		return nil
	}
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("sinew.ddbgate",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			if awsmiddleware.GetServiceID(ctx) != "DynamoDB" {
				return next.HandleDeserialize(ctx, in)
			}
			select {
			case g.slots <- struct{}{}:
			default:
				g.queued.Add(1)
				start := time.Now()
				select {
				case g.slots <- struct{}{}:
				case <-ctx.Done():
					return middleware.DeserializeOutput{}, middleware.Metadata{}, fmt.Errorf("waiting to send a DynamoDB request: %w", ctx.Err())
				}
				g.waited.Add(int64(time.Since(start)))
			}
			defer func() { <-g.slots }()
			return next.HandleDeserialize(ctx, in)
		}), middleware.After)
}
