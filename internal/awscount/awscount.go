// Package awscount counts the requests an AWS SDK v2 client sends, by operation, so benchmarks can
// report a request budget (e.g. "the merge is one BatchGetItem") as a metric and local mode can
// report the request mix a load puts on DynamoDB Local. It is a middleware, so it sits in front of
// the real client: nothing is faked.
package awscount

import (
	"context"
	"maps"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// Counter counts requests. The zero value is ready; it is safe for concurrent use.
type Counter struct {
	// ByService keys the counts by "Service.Operation" (e.g. "DynamoDB.GetItem") instead of the
	// operation alone, for a counter shared by clients of several services.
	ByService bool

	mu    sync.Mutex
	ops   map[string]int64
	units map[string]int64
}

// Register adds the counting middleware to a client's stack. Use it as an APIOptions entry:
//
//	dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.Register) })
//
// It sits in the Finalize step after the retry middleware, so every attempt that goes on the wire is
// counted, retries included: a benchmark sees what DynamoDB would bill.
func (c *Counter) Register(stack *middleware.Stack) error {
	err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("sinew.awscount.units",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			return next.HandleInitialize(middleware.WithStackValue(ctx, unitsKey{}, requestUnits(in.Parameters)), in)
		}), middleware.Before)
	if err != nil {
		return err
	}
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("sinew.awscount",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			op := awsmiddleware.GetOperationName(ctx)
			if c.ByService {
				op = awsmiddleware.GetServiceID(ctx) + "." + op
			}
			units, _ := middleware.GetStackValue(ctx, unitsKey{}).(int64)
			c.add(op, units)
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

type unitsKey struct{}

func (c *Counter) add(op string, units int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ops == nil {
		c.ops, c.units = map[string]int64{}, map[string]int64{}
	}
	c.ops[op]++
	c.units[op] += units
}

// Total is the number of requests counted since the last Reset.
func (c *Counter) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, v := range c.ops {
		n += v
	}
	return n
}

// Ops gives a copy of the counts by operation name (e.g. "BatchGetItem").
func (c *Counter) Ops() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.ops)
}

// Reset sets every count to zero.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ops, c.units = nil, nil
}

// Units is the number of request units counted since the last Reset, by operation: what
// DynamoDB's on-demand pricing bills for the requests if every item is small (written under
// 1 KB, read under 4 KB, strongly consistent), that is one unit per item a request names and two
// per item of a transaction. A request of another service counts one unit.
func (c *Counter) Units() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.units)
}
