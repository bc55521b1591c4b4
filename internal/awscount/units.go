package awscount

import "github.com/aws/aws-sdk-go-v2/service/dynamodb"

// requestUnits is the request units a request's parameters name (see Counter.Units); a request
// this does not know counts one. Billing rules:
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
func requestUnits(params any) int64 {
	switch in := params.(type) {
	case *dynamodb.BatchGetItemInput:
		var n int64
		for _, ka := range in.RequestItems {
			n += int64(len(ka.Keys))
		}
		return n
	case *dynamodb.BatchWriteItemInput:
		var n int64
		for _, reqs := range in.RequestItems {
			n += int64(len(reqs))
		}
		return n
	case *dynamodb.TransactWriteItemsInput:
		return 2 * int64(len(in.TransactItems))
	case *dynamodb.TransactGetItemsInput:
		return 2 * int64(len(in.TransactItems))
	}
	return 1
}
