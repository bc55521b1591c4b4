package store

import (
	"context"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
)

// attrFirstState marks an execution whose first state has run (EnsureExecution): from then on the
// execution is known to exist in Step Functions, and DiscardUnstarted leaves its record alone.
const attrFirstState = "first_state"

// EnsureExecution is what an execution's first state writes: it records the execution if no one
// has (a direct StartExecution), or leaves the record a route made before starting it as it is,
// and marks either way that the first state has run. One UpdateItem whose every SET is
// if_not_exists, so running it again (a retry, a redrive) changes nothing; it answers the record.
func (s *Store) EnsureExecution(ctx context.Context, dev string, x Execution) (*Execution, error) {
	if err := checkExec(dev, x.ExecutionID); err != nil {
		return nil, err
	}
	if x.Workflow != "tool_call" && x.Workflow != "agent_loop" {
		return nil, fault.Invalid("workflow", "workflow must be tool_call or agent_loop")
	}
	now := s.clock()
	doc, err := encodeDoc(struct {
		ExecutionID string    `json:"execution_id"`
		Workflow    string    `json:"workflow"`
		AgentID     string    `json:"agent_id,omitempty"`
		TaskID      string    `json:"task_id,omitempty"`
		SessionID   string    `json:"session_id,omitempty"`
		CreatedAt   time.Time `json:"created_at"`
	}{x.ExecutionID, x.Workflow, x.AgentID, x.TaskID, x.SessionID, now})
	if err != nil {
		return nil, err
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table,
		Key:       execKey(dev, x.ExecutionID).av(),
		UpdateExpression: awsv2.String("SET #doc = if_not_exists(#doc, :doc), #kind = if_not_exists(#kind, :kind), " +
			"#st = if_not_exists(#st, :st), #up = if_not_exists(#up, :up), #g1pk = if_not_exists(#g1pk, :g1pk), " +
			"#g1sk = if_not_exists(#g1sk, :g1sk), #first = :true"),
		ExpressionAttributeNames: map[string]string{"#doc": attrDoc, "#kind": attrKind, "#st": attrStatus, "#up": attrUpdated,
			"#g1pk": AttrGSI1PK, "#g1sk": AttrGSI1SK, "#first": attrFirstState},
		ExpressionAttributeValues: map[string]types.AttributeValue{":doc": doc, ":kind": str("exec"), ":st": str(string(ExecRunning)),
			":up": str(now.Format(time.RFC3339Nano)), ":g1pk": str(execsGSI(dev)), ":g1sk": str(sortTime(now) + "#" + x.ExecutionID),
			":true": boolv(true)},
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return nil, dbErr(err, "record execution")
	}
	return decodeExec(out.Attributes)
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
