// Package awscount counts the requests an AWS SDK v2 client sends, by operation, so benchmarks can
// report a request budget (e.g. "the merge is one BatchGetItem") as a metric and local mode can
// report the request mix a load puts on DynamoDB Local. It is a middleware, so it sits in front of
// the real client: nothing is faked.
package awscount

import (
	"context"
	"maps"
	"math"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// Counter counts requests, and for DynamoDB the request units they consumed. The zero value is
// ready; it is safe for concurrent use.
type Counter struct {
	// ByService keys the counts by "Service.Operation" (e.g. "DynamoDB.GetItem") instead of the
	// operation alone, for a counter shared by clients of several services.
	ByService bool
	// LeaveCapacity sends DynamoDB requests as the caller made them, without asking for their
	// consumed capacity: for a counter that wants the request counts alone (local mode's request
	// mix), so DynamoDB Local is spared the accounting. Units and Capacity then estimate from the
	// requests (see Capacity.Estimated).
	LeaveCapacity bool

	mu       sync.Mutex
	ops      map[string]int64
	capacity map[string]Capacity
}

// Register adds the counting middleware to a client's stack. Use it as an APIOptions entry:
//
//	dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.Register) })
//
// Requests are counted in the Finalize step after the retry middleware, so every attempt that goes
// on the wire is counted, retries included. A DynamoDB request also asks for its consumed capacity
// (ReturnConsumedCapacity INDEXES, on a copy of the caller's parameters) and the counter adds up
// what DynamoDB reports for the operation's final answer: an attempt that failed and was retried
// (throttled, a server error) is not billed. Only the counted clients of tests and local mode
// register this (local mode with LeaveCapacity); the deployed functions never ask for capacity.
func (c *Counter) Register(stack *middleware.Stack) error {
	err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("sinew.awscount.units",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			sent := &sentAs{}
			params := in.Parameters
			if !c.LeaveCapacity {
				in.Parameters = withCapacity(params)
			}
			out, md, err := next.HandleInitialize(middleware.WithStackValue(ctx, sentKey{}, sent), in)
			if sent.op != "" {
				if units, ok := capacityOf(params, out.Result, err); ok {
					c.addCapacity(sent.op, units)
				}
			}
			return out, md, err
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
			if sent, ok := middleware.GetStackValue(ctx, sentKey{}).(*sentAs); ok {
				sent.op = op
			}
			c.add(op)
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

// sentAs carries the key a request was counted under from the Finalize step, where the operation
// is known, back to the Initialize step, where its result is.
type sentAs struct{ op string }

type sentKey struct{}

func (c *Counter) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ops == nil {
		c.ops = map[string]int64{}
	}
	c.ops[op]++
}

func (c *Counter) addCapacity(op string, units Capacity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.capacity == nil {
		c.capacity = map[string]Capacity{}
	}
	c.capacity[op] = c.capacity[op].add(units)
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
	c.ops, c.capacity = nil, nil
}

// Capacity gives a copy of the DynamoDB request units counted since the last Reset, by operation
// (see Capacity and capacityOf for where the figures come from).
func (c *Counter) Capacity() map[string]Capacity {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.capacity)
}

// Units is the number of request units counted since the last Reset, by operation: for DynamoDB
// what on-demand pricing bills (read request units for a read operation, write request units for
// a write; table and secondary indexes together; see Capacity), rounded up to a whole unit per
// operation, since an eventually consistent read costs half a unit; a request of another service
// counts one unit.
func (c *Counter) Units() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	units := make(map[string]int64, len(c.ops))
	for op, n := range c.ops {
		if u, ok := c.capacity[op]; ok {
			units[op] = int64(math.Ceil(u.Read + u.Write))
		} else {
			units[op] = n
		}
	}
	return units
}
