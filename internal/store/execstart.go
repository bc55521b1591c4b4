package store

import (
	"context"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// attrFirstState marks an execution whose first state has run (EnsureExecution): from then on the
// execution is known to exist in Step Functions, and DiscardUnstarted leaves its record alone.
const attrFirstState = "first_state"

// EnsureExecution is what an execution's first state writes: it records the execution if no one
// has (a direct StartExecution), or leaves the record a route made before starting it as it is,
// and marks either way that the first state has run. One UpdateItem whose every SET is
// if_not_exists, so running it again (a retry, a redrive) changes nothing; it answers the record.
func (s *Store) EnsureExecution(ctx context.Context, dev string, x Execution) (*Execution, error) {
	return s.RecordExecution(ctx, dev, x, nil)
}

// DiscardUnstarted deletes the record of an execution that a route recorded and then failed to
// start, so no "running" record is left for an execution that never ran. A record whose first
// state has run (the start did happen, its answer was lost), or whose status has moved on, is
// kept; it answers whether the record was deleted.
func (s *Store) DiscardUnstarted(ctx context.Context, dev, id string) (bool, error) {
	if err := checkExec(dev, id); err != nil {
		return false, err
	}
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 &s.table,
		Key:                       execKey(dev, id).av(),
		ConditionExpression:       awsv2.String("attribute_exists(#pk) AND attribute_not_exists(#first) AND #st = :run"),
		ExpressionAttributeNames:  map[string]string{"#pk": AttrPK, "#first": attrFirstState, "#st": attrStatus},
		ExpressionAttributeValues: map[string]types.AttributeValue{":run": str(string(ExecRunning))},
	})
	if _, ok := isCondFailed(err); ok {
		return false, nil
	}
	if err != nil {
		return false, dbErr(err, "discard unstarted execution")
	}
	return true, nil
}
