package quota

import (
	"context"
	"regexp"
	"strings"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// ErrorCode, ErrorMessage and ErrorFault make a Throttle a smithy API error, so an AWS SDK's
// retryer sees the throttle it names (ProvisionedThroughputExceededException is one it retries
// with back-off), and fault.FromAWS its code.
func (e *Throttle) ErrorCode() string    { return e.Code }
func (e *Throttle) ErrorMessage() string { return e.Message }

// ErrorFault is the client's: the caller is to slow down.
func (e *Throttle) ErrorFault() int { return 1 }

type chargeKey struct{}

// charge is a DynamoDB request's draw on one partition.
type charge struct {
	table, key string
	write      bool
	units      float64
}

// DynamoDB registers l's per-partition throughput on an AWS SDK client's stack: items sharing the
// value of pkAttr (the partition key) in a table share a partition. Each attempt is charged (the
// check runs inside the retry loop), so the SDK retries a throttled one with its back-off, as
// against DynamoDB. Single-item reads and writes and Queries are charged, one capacity unit per
// started KB written or 4 KB read as the request's item size gives it (a Query one unit);
// batches, transactions and scans are not.
func (l *Limits) DynamoDB(pkAttr string) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		if l == nil || (l.p.PartitionRead <= 0 && l.p.PartitionWrite <= 0) {
			return nil
		}
		err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("sinew.quota.partition",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if c, ok := chargeOf(in.Parameters, pkAttr); ok {
					ctx = middleware.WithStackValue(ctx, chargeKey{}, c)
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		if err != nil {
			return err
		}
		return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("sinew.quota.partition.attempt",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if awsmiddleware.GetServiceID(ctx) == "DynamoDB" {
					if c, ok := middleware.GetStackValue(ctx, chargeKey{}).(charge); ok {
						if err := l.Partition(c.table, c.key, c.write, c.units); err != nil {
							return middleware.FinalizeOutput{}, middleware.Metadata{}, err
						}
					}
				}
				return next.HandleFinalize(ctx, in)
			}), "Retry", middleware.After)
	}
}

// chargeOf reads a DynamoDB request's partition and capacity.
func chargeOf(params any, pk string) (charge, bool) {
	switch p := params.(type) {
	case *dynamodb.GetItemInput:
		return itemCharge(p.TableName, p.Key, pk, false, 1)
	case *dynamodb.PutItemInput:
		return itemCharge(p.TableName, p.Item, pk, true, units(p.Item, 1024))
	case *dynamodb.UpdateItemInput:
		return itemCharge(p.TableName, p.Key, pk, true, 1)
	case *dynamodb.DeleteItemInput:
		return itemCharge(p.TableName, p.Key, pk, true, 1)
	case *dynamodb.QueryInput:
		if p.IndexName != nil || p.KeyConditionExpression == nil {
			return charge{}, false // an index has partitions of its own
		}
		v, ok := queryKey(*p.KeyConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues, pk)
		if !ok {
			return charge{}, false
		}
		return itemCharge(p.TableName, map[string]types.AttributeValue{pk: v}, pk, false, 1)
	}
	return charge{}, false
}

func itemCharge(table *string, item map[string]types.AttributeValue, pk string, write bool, u float64) (charge, bool) {
	if table == nil {
		return charge{}, false
	}
	k, ok := scalar(item[pk])
	if !ok {
		return charge{}, false
	}
	return charge{table: *table, key: k, write: write, units: u}, true
}

func scalar(v types.AttributeValue) (string, bool) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return "S" + v.Value, true
	case *types.AttributeValueMemberN:
		return "N" + v.Value, true
	case *types.AttributeValueMemberB:
		return "B" + string(v.Value), true
	}
	return "", false
}

// units is the capacity an item costs: one unit per started block of its size (names and scalar
// values counted; nested values at their string and number lengths).
func units(item map[string]types.AttributeValue, block int) float64 {
	n := 0
	for k, v := range item {
		n += len(k) + size(v)
	}
	return float64((n + block - 1) / block)
}

func size(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberM:
		n := 0
		for k, e := range v.Value {
			n += len(k) + size(e)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 0
		for _, e := range v.Value {
			n += size(e)
		}
		return n
	}
	return 1
}

var eqRE = regexp.MustCompile(`([#A-Za-z_][A-Za-z0-9_]*)\s*=\s*(:[A-Za-z0-9_]+)`)

// queryKey finds the partition key's value in a Query's key condition (pk = :v, or #n = :v with
// #n naming pk).
func queryKey(expr string, names map[string]string, values map[string]types.AttributeValue, pk string) (types.AttributeValue, bool) {
	for _, m := range eqRE.FindAllStringSubmatch(expr, -1) {
		name := m[1]
		if strings.HasPrefix(name, "#") {
			name = names[name]
		}
		if name == pk {
			v, ok := values[m[2]]
			return v, ok
		}
	}
	return nil, false
}
