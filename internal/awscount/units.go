package awscount

import (
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Capacity is what DynamoDB consumed for the requests of one operation, in request units (on-demand
// billing: read request units for reads, write request units for writes).
type Capacity struct {
	// Read and Write are the units on the table and its secondary indexes together. An operation
	// consumes one kind only: a write's ReturnValues and condition expressions are billed as the
	// write, a transaction's ConditionCheck as a write of the item checked.
	Read, Write float64
	// Index is the part of Read or Write that went to the table's secondary indexes: writes that put,
	// change or delete an index entry, Queries on an index.
	Index float64
	// Estimated counts the requests whose units DynamoDB did not report (a failed conditional write,
	// a cancelled transaction, a server that ignores ReturnConsumedCapacity) and were taken from the
	// request instead: one unit per item it names, two per transactional item.
	Estimated int64
}

func (c Capacity) add(d Capacity) Capacity {
	return Capacity{Read: c.Read + d.Read, Write: c.Write + d.Write, Index: c.Index + d.Index, Estimated: c.Estimated + d.Estimated}
}

// withCapacity is a DynamoDB request's parameters asking for the consumed capacity by index
// (ReturnConsumedCapacity INDEXES), so the counter can read what DynamoDB billed. It copies the
// parameters rather than changing the caller's; a request that already asks for capacity, and a
// request of another service, goes as it is.
func withCapacity(params any) any {
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		return ask(in, func(v *dynamodb.GetItemInput) *types.ReturnConsumedCapacity { return &v.ReturnConsumedCapacity })
	case *dynamodb.BatchGetItemInput:
		return ask(in, func(v *dynamodb.BatchGetItemInput) *types.ReturnConsumedCapacity { return &v.ReturnConsumedCapacity })
	case *dynamodb.QueryInput:
		return ask(in, func(v *dynamodb.QueryInput) *types.ReturnConsumedCapacity { return &v.ReturnConsumedCapacity })
	case *dynamodb.ScanInput:
		return ask(in, func(v *dynamodb.ScanInput) *types.ReturnConsumedCapacity { return &v.ReturnConsumedCapacity })
	case *dynamodb.TransactGetItemsInput:
		return ask(in, func(v *dynamodb.TransactGetItemsInput) *types.ReturnConsumedCapacity {
			return &v.ReturnConsumedCapacity
		})
	case *dynamodb.PutItemInput:
		return ask(in, func(v *dynamodb.PutItemInput) *types.ReturnConsumedCapacity { return &v.ReturnConsumedCapacity })
	case *dynamodb.UpdateItemInput:
		return ask(in, func(v *dynamodb.UpdateItemInput) *types.ReturnConsumedCapacity { return &v.ReturnConsumedCapacity })
	case *dynamodb.DeleteItemInput:
		return ask(in, func(v *dynamodb.DeleteItemInput) *types.ReturnConsumedCapacity { return &v.ReturnConsumedCapacity })
	case *dynamodb.BatchWriteItemInput:
		return ask(in, func(v *dynamodb.BatchWriteItemInput) *types.ReturnConsumedCapacity { return &v.ReturnConsumedCapacity })
	case *dynamodb.TransactWriteItemsInput:
		return ask(in, func(v *dynamodb.TransactWriteItemsInput) *types.ReturnConsumedCapacity {
			return &v.ReturnConsumedCapacity
		})
	}
	return params
}

func ask[T any](in *T, field func(*T) *types.ReturnConsumedCapacity) *T {
	if r := *field(in); r != "" && r != types.ReturnConsumedCapacityNone {
		return in
	}
	cp := *in
	*field(&cp) = types.ReturnConsumedCapacityIndexes
	return &cp
}

// capacityOf is what a DynamoDB request consumed, from the ConsumedCapacity DynamoDB returned with
// its result; ok is false for a request of another service.
//
// Source of the figures: DynamoDB Local's ConsumedCapacity, which TestUnits holds to AWS's
// documented rules (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html,
// .../GSI.html#GSI.ThroughputConsiderations, .../transaction-apis.html#transaction-capacity-handling):
// item sizes rounded up to 1 KB for writes and 4 KB for reads, the larger of the item before and
// after a write, half a unit for an eventually consistent read, twice for a transaction, and per
// secondary index one write for each index entry a write puts, changes or deletes (two when the
// index key changes). Where DynamoDB Local departs from AWS the counter corrects it or says so:
//   - a BatchGetItem key that finds no item: DynamoDB Local reports nothing, AWS bills the minimum
//     read as for a GetItem (one unit, half when eventually consistent); the counter adds it;
//   - an error carries no ConsumedCapacity, yet AWS bills a failed conditional write (one write
//     unit for an item that did not exist, the new item's size for one that did) and the items of a
//     cancelled transaction: these are estimated from the request (Capacity.Estimated); requests
//     failing for other reasons (throttling, validation, server errors) are not billed;
//   - a transaction of several items: DynamoDB Local's table units are not always the two writes of
//     every item AWS bills (a ConditionCheck, or one of two new items, may go uncounted), so the
//     counter raises them to what the request shows at the least (txWriteFloor); its index units
//     are taken as reported and may be low for such a transaction in the same way;
//   - a transaction's index writes: DynamoDB Local counts them twice like the table's; AWS's
//     documentation states the doubling for the table's items only, so this may overstate a
//     transaction by one unit per index entry written (two when the index key changes);
//   - a BatchWriteItem delete of a missing item: DynamoDB Local reports two units, AWS one (sinew
//     deletes in batches only when removing whole records, outside any call's path).
func capacityOf(params, result any, err error) (Capacity, bool) {
	read, ok := isRead(params)
	if !ok {
		return Capacity{}, false
	}
	unit := func(n float64) Capacity {
		if read {
			return Capacity{Read: n}
		}
		return Capacity{Write: n}
	}
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		var tce *types.TransactionCanceledException
		if errors.As(err, &ccf) || errors.As(err, &tce) {
			c := unit(float64(requestUnits(params)))
			c.Estimated = 1
			return c, true
		}
		return Capacity{}, true
	}
	ccs, reported := consumed(result)
	if !reported {
		c := unit(float64(requestUnits(params)))
		c.Estimated = 1
		return c, true
	}
	var total, index float64
	for _, cc := range ccs {
		t, i := sum(cc)
		total, index = total+t, index+i
	}
	switch in := params.(type) {
	case *dynamodb.BatchGetItemInput:
		total += missingKeys(in, result.(*dynamodb.BatchGetItemOutput))
	case *dynamodb.TransactWriteItemsInput:
		total += atLeast(txWriteFloor(in), total-index)
	case *dynamodb.TransactGetItemsInput:
		total += atLeast(2*len(in.TransactItems), total-index)
	}
	c := unit(total)
	c.Index = index
	return c, true
}

// isRead says whether a DynamoDB operation consumes read units (else write units); ok is false for
// a request of another service or a DynamoDB operation the counter does not price.
func isRead(params any) (read, ok bool) {
	switch params.(type) {
	case *dynamodb.GetItemInput, *dynamodb.BatchGetItemInput, *dynamodb.QueryInput, *dynamodb.ScanInput, *dynamodb.TransactGetItemsInput:
		return true, true
	case *dynamodb.PutItemInput, *dynamodb.UpdateItemInput, *dynamodb.DeleteItemInput, *dynamodb.BatchWriteItemInput, *dynamodb.TransactWriteItemsInput:
		return false, true
	}
	return false, false
}

// consumed is the ConsumedCapacity of a DynamoDB result; reported is false when the result has none.
func consumed(result any) (ccs []types.ConsumedCapacity, reported bool) {
	one := func(cc *types.ConsumedCapacity) ([]types.ConsumedCapacity, bool) {
		if cc == nil {
			return nil, false
		}
		return []types.ConsumedCapacity{*cc}, true
	}
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		return out.ConsumedCapacity, out.ConsumedCapacity != nil
	case *dynamodb.BatchWriteItemOutput:
		return out.ConsumedCapacity, out.ConsumedCapacity != nil
	case *dynamodb.TransactGetItemsOutput:
		return out.ConsumedCapacity, out.ConsumedCapacity != nil
	case *dynamodb.TransactWriteItemsOutput:
		return out.ConsumedCapacity, out.ConsumedCapacity != nil
	}
	return nil, false
}

// sum is one table's consumed units, in all and on its secondary indexes.
func sum(cc types.ConsumedCapacity) (total, index float64) {
	for _, c := range cc.GlobalSecondaryIndexes {
		index += aws.ToFloat64(c.CapacityUnits)
	}
	for _, c := range cc.LocalSecondaryIndexes {
		index += aws.ToFloat64(c.CapacityUnits)
	}
	if cc.CapacityUnits != nil {
		return *cc.CapacityUnits, index
	}
	if cc.Table != nil {
		total = aws.ToFloat64(cc.Table.CapacityUnits)
	}
	return total + index, index
}

// atLeast is what raises a transaction's table units to floor, where DynamoDB Local reported fewer.
func atLeast(floor int, table float64) float64 {
	return max(0, float64(floor)-table)
}

// txWriteFloor is the table units a TransactWriteItems costs at the least by AWS's rules: each item
// prepared and committed, two writes of its size rounded up to 1 KB. The size is what the request
// shows of the item (a Put's whole item; an Update's key and new values; a Delete's or
// ConditionCheck's key), so this is a floor: DynamoDB Local, which sees the whole item, is taken
// where it reports more.
func txWriteFloor(in *dynamodb.TransactWriteItemsInput) int {
	var units int
	for _, ti := range in.TransactItems {
		var size int
		switch {
		case ti.Put != nil:
			size = itemSize(ti.Put.Item)
		case ti.Update != nil:
			size = itemSize(ti.Update.Key) + itemSize(ti.Update.ExpressionAttributeValues)
		case ti.Delete != nil:
			size = itemSize(ti.Delete.Key)
		case ti.ConditionCheck != nil:
			size = itemSize(ti.ConditionCheck.Key)
		}
		units += 2 * max(1, (size+1023)/1024)
	}
	return units
}

// itemSize is the size DynamoDB bills for an item's attributes: each name's UTF-8 bytes and its
// value's (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
func itemSize(item map[string]types.AttributeValue) int {
	var n int
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		var n int
		for _, e := range v.Value {
			n += len(e)
		}
		return n
	case *types.AttributeValueMemberNS:
		var n int
		for _, e := range v.Value {
			n += numberSize(e)
		}
		return n
	case *types.AttributeValueMemberBS:
		var n int
		for _, e := range v.Value {
			n += len(e)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize is a number's billed size: about one byte per two significant digits, plus one.
func numberSize(s string) int {
	digits := 0
	for _, r := range strings.TrimLeft(strings.TrimLeft(s, "-+"), "0.") {
		if r >= '0' && r <= '9' {
			digits++
		} else if r == 'e' || r == 'E' {
			break
		}
	}
	return (digits+1)/2 + 1
}

// missingKeys is the read units of the keys a BatchGetItem asked for that found no item (neither
// returned nor left unprocessed): the minimum read each, as AWS bills and DynamoDB Local does not
// report.
func missingKeys(in *dynamodb.BatchGetItemInput, out *dynamodb.BatchGetItemOutput) float64 {
	var units float64
	for table, ka := range in.RequestItems {
		missing := len(ka.Keys) - len(out.Responses[table]) - len(out.UnprocessedKeys[table].Keys)
		if missing <= 0 {
			continue
		}
		per := 0.5
		if aws.ToBool(ka.ConsistentRead) {
			per = 1
		}
		units += float64(missing) * per
	}
	return units
}

// requestUnits is the units a request names when DynamoDB reports none: one per item, two per item
// of a transaction, as if every item were small; a request this does not know counts one.
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
