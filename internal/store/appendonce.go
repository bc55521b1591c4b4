package store

import (
	"context"
	"errors"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
)

// MaxAppendOnce is how many messages AppendMessagesOnce writes at once: a transaction holds 100
// items, and the session's check and the batch's marker take two.
const MaxAppendOnce = 98

// appendMarkTTL is how long a batch's marker is kept: far longer than any retry of its writer.
const appendMarkTTL = 30 * 24 * time.Hour

// errAppended marks the marker's condition failing: the batch is in the history already.
var errAppended = errors.New("already appended")

// AppendMessagesOnce appends msgs to a session's history as AppendMessages does, unless a batch
// under the same key was appended before: the messages and a marker item for key are written in
// one transaction, the marker only if absent. A writer that runs again (agent_loop's model step
// retried by Step Functions after its answer was lost) thus never doubles the history. It reports
// whether this call appended. At most MaxAppendOnce messages; the session must exist.
func (s *Store) AppendMessagesOnce(ctx context.Context, dev, sessionID, key string, msgs []Message) (bool, error) {
	if err := checkIDs(dev, "session_id", sessionID); err != nil {
		return false, err
	}
	if err := checkOpaque("key", key, 512); err != nil {
		return false, err
	}
	if len(msgs) == 0 || len(msgs) > MaxAppendOnce {
		return false, fault.Invalid("messages", "give 1 to %d messages", MaxAppendOnce)
	}
	if err := checkMessages(msgs); err != nil {
		return false, err
	}
	puts, _, err := s.messageOps(dev, sessionID, msgs)
	if err != nil {
		return false, err
	}
	ops := append([]txOp{{condLive(s, sessionKey(dev, sessionID)), notFound("session", sessionID)}, s.appendMark(dev, sessionID, key)}, puts...)
	err = s.transact(ctx, ops, "append messages")
	if errors.Is(err, errAppended) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// appendMark is the marker of a batch appended under key: it fails (errAppended) when the batch
// is in the history already.
func (s *Store) appendMark(dev, sessionID, key string) txOp {
	mark := itemKey{ownerPK(dev, Owner{OwnerSession, sessionID}), "APPENDED#" + esc(key)}.av()
	mark[attrKind], mark[AttrTTL] = str("append-mark"), ttlOf(s.clock().Add(appendMarkTTL))
	return txOp{types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: mark,
		ConditionExpression:      awsv2.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": AttrPK}}}, errAppended}
}
