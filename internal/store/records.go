package store

import (
	"context"
	"errors"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
)

// record is what the generic helpers need of a stored record type.
type record interface {
	normalize()
	// metadata points at the record's metadata, or is nil for records without sealed setup.
	metadata() *map[string]any
	stamp(created, updated time.Time)
	createdAt() time.Time
}

// owned is a record read with what a write needs to keep: its version, sealed entries and the
// native attributes others keep on its item (keptAttrs).
type owned[T any] struct {
	rec    *T
	ver    int64
	sealed map[string][]byte
	kept   map[string]types.AttributeValue
}

// readRecord reads the record at k; NotFound when it is missing or being deleted.
func readRecord[T any, P interface {
	*T
	record
}](ctx context.Context, s *Store, k itemKey, what, id string) (*owned[T], error) {
	item, err := s.get(ctx, k, what)
	if err != nil {
		return nil, err
	}
	return decodeRecord[T, P](item, what, id)
}

func decodeRecord[T any, P interface {
	*T
	record
}](item map[string]types.AttributeValue, what, id string) (*owned[T], error) {
	if item == nil || getBool(item, attrDeleting) {
		return nil, notFound(what, id)
	}
	var v T
	if err := decodeDoc(item, &v); err != nil {
		return nil, err
	}
	P(&v).normalize()
	return &owned[T]{rec: &v, ver: getN(item, attrVer), sealed: getSealed(item), kept: keptOf(item)}, nil
}

// keptAttrs are native attributes written onto a record's item by others than its own updates (a
// chat's claim on a session's turn, see chatturn.go): an update carries them over as it read
// them. Their writers bump the record's version, so an update that read them stale loses its
// conditional write and reads again.
var keptAttrs = []string{attrTurn, attrTurnUntil, attrTurnKey, attrTurnOpen}

func keptOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	var out map[string]types.AttributeValue
	for _, n := range keptAttrs {
		if v, ok := item[n]; ok {
			if out == nil {
				out = map[string]types.AttributeValue{}
			}
			out[n] = v
		}
	}
	return out
}

// recordItem is the item of a record: its doc, version and sealed entries, plus extra attributes.
func recordItem(k itemKey, kind string, doc any, ver int64, sealed map[string][]byte, extra map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	d, err := encodeDoc(doc)
	if err != nil {
		return nil, err
	}
	item := k.av()
	item[attrDoc] = d
	item[attrVer] = num(ver)
	item[attrKind] = str(kind)
	if len(sealed) > 0 {
		item[attrSealed] = sealedAV(sealed)
	}
	for n, v := range extra {
		item[n] = v
	}
	return item, nil
}

// condNew is the condition of a create; condVersion that of an update of version ver of a record
// that is not being deleted.
func condNew() (string, map[string]string, map[string]types.AttributeValue) {
	return "attribute_not_exists(#pk)", map[string]string{"#pk": AttrPK}, nil
}

func condVersion(ver int64) (string, map[string]string, map[string]types.AttributeValue) {
	return "#ver = :ver AND attribute_not_exists(#del)",
		map[string]string{"#ver": attrVer, "#del": attrDeleting},
		map[string]types.AttributeValue{":ver": num(ver)}
}

// condLive checks that an owner exists and is not being deleted: every create under an owner
// carries it, so nothing can be added under an owner being deleted.
func condLive(s *Store, k itemKey) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                &s.table,
		Key:                      k.av(),
		ConditionExpression:      awsv2.String("attribute_exists(#pk) AND attribute_not_exists(#del)"),
		ExpressionAttributeNames: map[string]string{"#pk": AttrPK, "#del": attrDeleting},
	}}
}

func putTx(s *Store, item map[string]types.AttributeValue, cond string, names map[string]string, values map[string]types.AttributeValue) types.TransactWriteItem {
	p := &types.Put{TableName: &s.table, Item: item}
	if cond != "" {
		p.ConditionExpression = &cond
		p.ExpressionAttributeNames = names
		p.ExpressionAttributeValues = values
	}
	return types.TransactWriteItem{Put: p}
}

func deleteTx(s *Store, k itemKey) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table, Key: k.av()}}
}

// txOp is one item of a transaction and the error its failed condition means.
type txOp struct {
	item types.TransactWriteItem
	fail error
}

// errRetry marks a failed version check: the read-modify-write reads again.
var errRetry = fault.New(fault.Conflict, "changed concurrently")

// transact writes ops all or nothing. A cancelled transaction answers the fail error of its first
// failed condition; DynamoDB names each in CancellationReasons, in the order of ops.
func (s *Store) transact(ctx context.Context, ops []txOp, what string) error {
	if len(ops) > 100 {
		return fault.New(fault.TooLarge, "%s touches %d items; at most 100 can be written at once", what, len(ops))
	}
	items := make([]types.TransactWriteItem, len(ops))
	for i, o := range ops {
		items[i] = o.item
	}
	var err error
	for attempt := 0; ; attempt++ {
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return nil
		}
		// A transaction that collided with another on the same items (and failed no condition)
		// is tried again: the other's outcome decides ours, e.g. a name taken is a Conflict, not
		// a "try again" for the caller.
		if _, failed := txFailed(err); failed || !txCollided(err) || attempt == 4 {
			break
		}
		if err := sleep(ctx, time.Duration(10<<attempt)*time.Millisecond); err != nil {
			return dbErr(err, what)
		}
	}
	if failed, ok := txFailed(err); ok {
		for i, f := range failed {
			if f && i < len(ops) && ops[i].fail != nil {
				return ops[i].fail
			}
		}
		return fault.Wrap(fault.Conflict, err, "%s: a concurrent change got in the way; try again", what)
	}
	return dbErr(err, what)
}

func putInput(s *Store, item map[string]types.AttributeValue, cond string, names map[string]string, values map[string]types.AttributeValue) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{TableName: &s.table, Item: item, ConditionExpression: &cond,
		ExpressionAttributeNames: names, ExpressionAttributeValues: values}
}

// updateLoop runs a read-modify-write until its conditional write wins, at most five times: a
// concurrent writer in between makes it read again, never overwrite blindly.
func updateLoop(ctx context.Context, what, id string, try func() (retry bool, err error)) error {
	for attempt := 0; attempt < 5; attempt++ {
		retry, err := try()
		if !retry {
			return err
		}
		if err := sleep(ctx, time.Duration(5<<attempt)*time.Millisecond); err != nil {
			return dbErr(err, "update "+what)
		}
	}
	return fault.New(fault.Conflict, "%s %s changed while it was being updated; try again", what, id)
}

// markDeleting marks an owner being deleted; NotFound when missing. A repeated delete of an owner
// already marked goes on with it, so a delete stopped half way can be finished.
func (s *Store) markDeleting(ctx context.Context, k itemKey, what, id string) (map[string]types.AttributeValue, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		ReturnValues:              types.ReturnValueAllNew,
		TableName:                 &s.table,
		Key:                       k.av(),
		UpdateExpression:          awsv2.String("SET #del = :t"),
		ConditionExpression:       awsv2.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  map[string]string{"#del": attrDeleting, "#pk": AttrPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": boolv(true)},
	})
	if _, ok := isCondFailed(err); ok {
		return nil, notFound(what, id)
	}
	if err != nil {
		return nil, dbErr(err, "delete "+what)
	}
	return out.Attributes, nil
}

// txCollided reports a transaction cancelled because another one was changing the same items.
func txCollided(err error) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return false
	}
	for _, r := range tce.CancellationReasons {
		if strv(r.Code) == "TransactionConflict" {
			return true
		}
	}
	return false
}
