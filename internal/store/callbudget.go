package store

import (
	"context"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
)

// attrCalls is the count of a call budget item.
const attrCalls = "calls"

// callBudgetKey is the item counting the tool calls of one chat turn, kept beside the idempotency
// records (the same functions read and write both).
func callBudgetKey(dev, turn string) itemKey { return idemKey(dev, "call-budget#"+turn) }

// TakeCalls adds n to the tool calls counted for a chat turn and answers the count before them.
// One atomic ADD, so takers in other processes at once (a turn's nested chats run in the system
// function, its continuation in agent_loop) each see their own share; the item lives ttl from its
// first take.
func (s *Store) TakeCalls(ctx context.Context, dev, turn string, n int, ttl time.Duration) (int, error) {
	if err := checkDev(dev); err != nil {
		return 0, err
	}
	if err := checkOpaque("turn", turn, 128); err != nil {
		return 0, err
	}
	if n < 0 || ttl <= 0 {
		return 0, fault.New(fault.Internal, "store: TakeCalls(%d, %s): want n >= 0 and a positive time to live", n, ttl)
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       callBudgetKey(dev, turn).av(),
		UpdateExpression:          awsv2.String("ADD #calls :n SET #ttl = if_not_exists(#ttl, :exp), #kind = :kind"),
		ExpressionAttributeNames:  map[string]string{"#calls": attrCalls, "#ttl": AttrTTL, "#kind": attrKind},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": num(int64(n)), ":exp": ttlOf(s.clock().Add(ttl)), ":kind": str("call-budget")},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, dbErr(err, "count the turn's tool calls")
	}
	return int(getN(out.Attributes, attrCalls)) - n, nil
}
