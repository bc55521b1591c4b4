package store

import (
	"context"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
)

// The open index. An execution's record carries gsi2pk and gsi2sk from the write that makes it
// until the write that gives it a final status removes them, so GSI2 (sparse, keys only) holds the
// executions that are not final, across developers: what the sweep (package workflow's Reconciler)
// looks through for records whose Step Functions execution ended without them, its status change
// lost. gsi2pk spreads them over OpenShards partitions, so no one partition takes every start and
// end; gsi2sk is the time from which the sweep's grace runs (the record's making, then each check
// that found the execution running moves it on), so a Query on a shard finds the records due for
// a look, oldest first, and none that were looked at lately.
//
// A write that makes the record if no one has (execSeed) sets the keys only if they are missing:
// one that lands on a record already final puts them back, and the sweep, finding it final,
// removes them (CloseOpen).

// OpenShards is how many partitions of GSI2 hold the open executions.
const OpenShards = 8

func openPart(shard int) string { return "OPEN#" + strconv.Itoa(shard) }

// openShard is the shard of an execution.
func openShard(dev, id string) int {
	h := fnv.New32a()
	h.Write([]byte(dev))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return int(h.Sum32() % OpenShards)
}

// openKeys are the open index's keys of an execution whose grace runs from at.
func openKeys(dev, id string, at time.Time) (pk, sk types.AttributeValue) {
	return str(openPart(openShard(dev, id))), str(sortTime(at))
}

// openRemove is the clause of an UpdateExpression that takes a record out of the open index.
const openRemove = " REMOVE #o2pk, #o2sk"

// openNames are the open index's attribute names in expressions.
func openNames(names map[string]string) map[string]string {
	names["#o2pk"], names["#o2sk"] = AttrGSI2PK, AttrGSI2SK
	return names
}

// OpenRef is an open execution as the open index gives it.
type OpenRef struct {
	Dev, ExecutionID string
	Since            time.Time // when its grace runs from
	since            string    // as stored, for DeferOpen's condition
}

// OpenExecutions gives up to limit executions of shard (0 to OpenShards-1) whose grace runs from
// before the given time, oldest first. Records that became final meanwhile may be among them.
func (s *Store) OpenExecutions(ctx context.Context, shard int, before time.Time, limit int) ([]OpenRef, error) {
	if shard < 0 || shard >= OpenShards || limit <= 0 {
		return nil, fault.Invalid("shard", "shard must be 0 to %d and limit positive", OpenShards-1)
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &s.table,
		IndexName:                 awsv2.String(GSI2),
		KeyConditionExpression:    awsv2.String("#p = :p AND #s <= :before"),
		ExpressionAttributeNames:  map[string]string{"#p": AttrGSI2PK, "#s": AttrGSI2SK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": str(openPart(shard)), ":before": str(sortTime(before))},
		Limit:                     awsv2.Int32(int32(limit)),
	})
	if err != nil {
		return nil, dbErr(err, "list open executions")
	}
	refs := make([]OpenRef, 0, len(out.Items))
	for _, it := range out.Items {
		dev, id, ok := parseExecPK(getS(it, AttrPK))
		if !ok || getS(it, AttrSK) != "EXEC" {
			continue
		}
		since := getS(it, AttrGSI2SK)
		at, _ := time.Parse("2006-01-02T15:04:05.000000000Z", since)
		refs = append(refs, OpenRef{Dev: dev, ExecutionID: id, Since: at, since: since})
	}
	return refs, nil
}

// parseExecPK gives the developer and execution of an execution's partition key (execPK).
func parseExecPK(pk string) (dev, id string, ok bool) {
	rest, ok := strings.CutPrefix(pk, "DEV#")
	if !ok {
		return "", "", false
	}
	d, i, ok := strings.Cut(rest, "#EXEC#")
	if !ok {
		return "", "", false
	}
	dev, err1 := url.PathUnescape(d)
	id, err2 := url.PathUnescape(i)
	return dev, id, err1 == nil && err2 == nil
}

// DeferOpen moves the time an open execution's grace runs from to next, unless its record left the
// open index or was moved meanwhile (false then).
func (s *Store) DeferOpen(ctx context.Context, ref OpenRef, next time.Time) (bool, error) {
	if err := checkExec(ref.Dev, ref.ExecutionID); err != nil {
		return false, err
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       execKey(ref.Dev, ref.ExecutionID).av(),
		UpdateExpression:          awsv2.String("SET #o2sk = :next"),
		ConditionExpression:       awsv2.String("#o2sk = :since"),
		ExpressionAttributeNames:  map[string]string{"#o2sk": AttrGSI2SK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":next": str(sortTime(next)), ":since": str(ref.since)},
	})
	if _, ok := isCondFailed(err); ok {
		return false, nil
	}
	if err != nil {
		return false, dbErr(err, "defer an open execution's check")
	}
	return true, nil
}

// CloseOpen takes a final execution's record out of the open index (a write that made it again
// after its end put it back); a record that is not final is left as it is.
func (s *Store) CloseOpen(ctx context.Context, dev, id string) error {
	if err := checkExec(dev, id); err != nil {
		return err
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       execKey(dev, id).av(),
		UpdateExpression:          awsv2.String(strings.TrimPrefix(openRemove, " ")),
		ConditionExpression:       awsv2.String("attribute_exists(#o2pk) AND NOT #st IN (:run, :await)"),
		ExpressionAttributeNames:  openNames(map[string]string{"#st": attrStatus}),
		ExpressionAttributeValues: map[string]types.AttributeValue{":run": str(string(ExecRunning)), ":await": str(string(ExecAwaitingInput))},
	})
	if _, ok := isCondFailed(err); ok {
		return nil
	}
	return wrapDB(err, "close an open execution")
}
