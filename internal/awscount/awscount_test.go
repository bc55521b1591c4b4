package awscount_test

import (
	"context"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"sinew/internal/awscount"
	"sinew/internal/testenv/ddblocal"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

// failTwice serves DynamoDB's retryable InternalServerError twice, then answer; hits counts the
// requests it got.
func failTwice(t *testing.T, answer string) (*httptest.Server, *atomic.Int32) {
	hits := new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if hits.Add(1) <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"boom"}`))
			return
		}
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	return srv, hits
}

// TestCountsEveryAttempt: a server that fails twice with a retryable error, then answers. The
// counter sits after the SDK's retry middleware, so it sees the three requests on the wire.
func TestCountsEveryAttempt(t *testing.T) {
	srv, hits := failTwice(t, `{"TableNames":[]}`)

	var c awscount.Counter
	db := countedClient(srv.URL, &c)
	if _, err := db.ListTables(context.Background(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	if got := c.Ops(); got["ListTables"] != 3 || c.Total() != 3 || hits.Load() != 3 {
		t.Errorf("counted %v (total %d) for %d requests, want 3 ListTables", got, c.Total(), hits.Load())
	}
	if _, err := db.ListTables(context.Background(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	if c.Total() != 4 {
		t.Errorf("total %d after a fourth request", c.Total())
	}
	c.Reset()
	if c.Total() != 0 || len(c.Ops()) != 0 {
		t.Errorf("after Reset: %v", c.Ops())
	}
}

// TestByService: a counter shared by several services' clients keys its counts by service too.
func TestByService(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{"TableNames":[]}`))
	}))
	defer srv.Close()

	c := awscount.Counter{ByService: true}
	db := countedClient(srv.URL, &c)
	if _, err := db.ListTables(context.Background(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	if got := c.Ops(); got["DynamoDB.ListTables"] != 1 || len(got) != 1 {
		t.Errorf("counted %v, want DynamoDB.ListTables once", got)
	}
}

// TestUnitsWithoutReportedCapacity: a server that reports no ConsumedCapacity (here a fake that
// answers {} after two server errors) leaves the counter to estimate from the request: one unit per
// item, two per transactional item, once per operation however many attempts it took.
func TestUnitsWithoutReportedCapacity(t *testing.T) {
	srv, _ := failTwice(t, `{}`)
	var c awscount.Counter
	db := countedClient(srv.URL, &c)
	key := func(id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}}
	}
	ctx, tbl := context.Background(), aws.String("t")
	if _, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		"t": {Keys: []map[string]types.AttributeValue{key("a"), key("b"), key("c")}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: tbl, Item: key("a")}}, {Delete: &types.Delete{TableName: tbl, Key: key("b")}}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := c.Units(), map[string]int64{"BatchGetItem": 3, "TransactWriteItems": 4}; !maps.Equal(got, want) {
		t.Errorf("units %v, want %v", got, want)
	}
	want := map[string]awscount.Capacity{"BatchGetItem": {Read: 3, Estimated: 1}, "TransactWriteItems": {Write: 4, Estimated: 1}}
	if got := c.Capacity(); !maps.Equal(got, want) {
		t.Errorf("capacity %+v, want %+v", got, want)
	}
	if got := c.Ops(); got["BatchGetItem"] != 3 {
		t.Errorf("requests %v, want the three attempts of BatchGetItem", got)
	}
}

// TestUnits holds the units the counter takes from DynamoDB Local's ConsumedCapacity to AWS's
// documented billing rules (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html,
// GSI.html#GSI.ThroughputConsiderations, transaction-apis.html#transaction-capacity-handling), on
// sinew's own table (gsi1 sparse, projecting only the attributes its lists read: st and doc among
// them, x and b not). Each case runs on items of its own.
func TestUnits(t *testing.T) {
	ctx := context.Background()
	var c awscount.Counter
	plain := ddblocal.Client(t)
	db := ddblocal.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.Register) })
	tbl := aws.String(ddblocal.NewTable(t, plain))
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": str(pk), "sk": str("A")}
	}
	item := func(pk string, kv ...string) map[string]types.AttributeValue {
		m := key(pk)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = str(kv[i+1])
		}
		return m
	}
	indexed := func(pk string, kv ...string) map[string]types.AttributeValue {
		return item(pk, append([]string{"gsi1pk", "DEV#d#CALLS#pending", "gsi1sk", pk}, kv...)...)
	}
	put := func(m map[string]types.AttributeValue) func() error {
		return func() error {
			_, err := plain.PutItem(ctx, &dynamodb.PutItemInput{TableName: tbl, Item: m})
			return err
		}
	}
	update := func(pk, expr string, vals map[string]types.AttributeValue) func() error {
		return func() error {
			_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tbl, Key: key(pk), UpdateExpression: aws.String(expr), ExpressionAttributeValues: vals})
			return err
		}
	}
	batchGet := func(consistent bool, pks ...string) func() error {
		return func() error {
			var keys []map[string]types.AttributeValue
			for _, pk := range pks {
				keys = append(keys, key(pk))
			}
			_, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				*tbl: {Keys: keys, ConsistentRead: aws.Bool(consistent)}}})
			return err
		}
	}
	kb := func(n float64) string { return strings.Repeat("z", int(n*1024)) }
	tests := []struct {
		name    string
		setup   []func() error
		op      string
		do      func() error
		wantErr bool
		want    awscount.Capacity
	}{
		{name: "put outside the index: one unit", op: "PutItem",
			do: func() error {
				_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: tbl, Item: item("p1", "x", "1")})
				return err
			}, want: awscount.Capacity{Write: 1}},
		{name: "put into the index: one more for the index entry", op: "PutItem",
			do: func() error {
				_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: tbl, Item: indexed("p2")})
				return err
			}, want: awscount.Capacity{Write: 2, Index: 1}},
		{name: "update outside the index: one unit", op: "UpdateItem", setup: []func() error{put(item("u1", "x", "1"))},
			do: update("u1", "SET x = :v", map[string]types.AttributeValue{":v": str("2")}), want: awscount.Capacity{Write: 1}},
		{name: "update a projected attribute of an indexed item: the projected entry changes", op: "UpdateItem",
			setup: []func() error{put(indexed("u2", "st", "1"))},
			do:    update("u2", "SET st = :v", map[string]types.AttributeValue{":v": str("2")}), want: awscount.Capacity{Write: 2, Index: 1}},
		{name: "update an attribute the index does not project: the entry stays", op: "UpdateItem",
			setup: []func() error{put(indexed("u7", "x", "1"))},
			do:    update("u7", "SET x = :v", map[string]types.AttributeValue{":v": str("2")}), want: awscount.Capacity{Write: 1}},
		{name: "change the index key: delete and put in the index", op: "UpdateItem", setup: []func() error{put(indexed("u3"))},
			do: update("u3", "SET gsi1pk = :v", map[string]types.AttributeValue{":v": str("DEV#d#CALLS#done")}), want: awscount.Capacity{Write: 3, Index: 2}},
		{name: "remove the index key: the entry's delete", op: "UpdateItem", setup: []func() error{put(indexed("u4"))},
			do: update("u4", "REMOVE gsi1pk, gsi1sk", nil), want: awscount.Capacity{Write: 2, Index: 1}},
		{name: "update an indexed item of 1.5 KB: two units on the table and two on the index", op: "UpdateItem",
			setup: []func() error{put(indexed("u5", "doc", kb(1.5)))},
			do:    update("u5", "SET st = :v", map[string]types.AttributeValue{":v": str("2")}), want: awscount.Capacity{Write: 4, Index: 2}},
		{name: "an update that makes the item 2.5 KB: the larger size, after", op: "UpdateItem", setup: []func() error{put(item("u6"))},
			do: update("u6", "SET b = :v", map[string]types.AttributeValue{":v": str(kb(2.5))}), want: awscount.Capacity{Write: 3}},
		{name: "delete an indexed item: the table's and the entry's", op: "DeleteItem", setup: []func() error{put(indexed("d1"))},
			do: func() error {
				_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: tbl, Key: key("d1")})
				return err
			}, want: awscount.Capacity{Write: 2, Index: 1}},
		{name: "a failed conditional put is billed, estimated from the request", op: "PutItem", setup: []func() error{put(item("c1"))},
			do: func() error {
				_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: tbl, Item: item("c1"), ConditionExpression: aws.String("attribute_not_exists(pk)")})
				return err
			}, wantErr: true, want: awscount.Capacity{Write: 1, Estimated: 1}},
		// Two units per item on the table; DynamoDB Local doubles the index entry too (see capacityOf).
		{name: "a transaction of two puts, one indexed", op: "TransactWriteItems",
			do: func() error {
				_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Put: &types.Put{TableName: tbl, Item: indexed("t1")}}, {Put: &types.Put{TableName: tbl, Item: item("t2")}}}})
				return err
			}, want: awscount.Capacity{Write: 6, Index: 2}},
		// DynamoDB Local reports 2 table units here, one item's; AWS prepares and commits both.
		{name: "a transaction of two new indexed items", op: "TransactWriteItems",
			do: func() error {
				_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Update: &types.Update{TableName: tbl, Key: key("t6"), UpdateExpression: aws.String("SET gsi1pk = :g, gsi1sk = :g"),
						ExpressionAttributeValues: map[string]types.AttributeValue{":g": str("DEV#d#EXECS")}}},
					{Put: &types.Put{TableName: tbl, Item: indexed("t7"), ConditionExpression: aws.String("attribute_not_exists(pk)")}}}})
				return err
			}, want: awscount.Capacity{Write: 6, Index: 2}},
		// The request shows a 2.5 KB value: three units, twice.
		{name: "a transactional update that writes 2.5 KB", op: "TransactWriteItems", setup: []func() error{put(item("t8"))},
			do: func() error {
				_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Update: &types.Update{TableName: tbl, Key: key("t8"), UpdateExpression: aws.String("SET b = :v"),
						ExpressionAttributeValues: map[string]types.AttributeValue{":v": str(kb(2.5))}}},
					{Put: &types.Put{TableName: tbl, Item: item("t9")}}}})
				return err
			}, want: awscount.Capacity{Write: 8}},
		{name: "a transactional update that changes the index key", op: "TransactWriteItems", setup: []func() error{put(indexed("t5"))},
			do: func() error {
				_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Update: &types.Update{TableName: tbl, Key: key("t5"), UpdateExpression: aws.String("SET gsi1pk = :v"),
						ExpressionAttributeValues: map[string]types.AttributeValue{":v": str("DEV#d#CALLS#answered")}}}}})
				return err
			}, want: awscount.Capacity{Write: 6, Index: 4}},
		// DynamoDB Local reports 2 here, leaving the check out; AWS prepares and commits it too.
		{name: "a transaction's condition check is a transactional write of the item checked", op: "TransactWriteItems",
			setup: []func() error{put(item("t3"))},
			do: func() error {
				_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{ConditionCheck: &types.ConditionCheck{TableName: tbl, Key: key("t3"), ConditionExpression: aws.String("attribute_exists(pk)")}},
					{Put: &types.Put{TableName: tbl, Item: item("t4")}}}})
				return err
			}, want: awscount.Capacity{Write: 4}},
		// Each item rounded up to 4 KB; a key that finds nothing costs the minimum read.
		{name: "BatchGetItem strongly consistent: small, 5 KB, missing", op: "BatchGetItem",
			setup: []func() error{put(item("g1")), put(item("g2", "b", kb(5)))},
			do:    batchGet(true, "g1", "g2", "g-missing"), want: awscount.Capacity{Read: 4}},
		{name: "BatchGetItem eventually consistent: half", op: "BatchGetItem",
			setup: []func() error{put(item("g3")), put(item("g4", "b", kb(5)))},
			do:    batchGet(false, "g3", "g4", "g-missing"), want: awscount.Capacity{Read: 2}},
		{name: "GetItem eventually consistent: half a unit", op: "GetItem", setup: []func() error{put(item("r1"))},
			do: func() error {
				_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: tbl, Key: key("r1")})
				return err
			}, want: awscount.Capacity{Read: 0.5}},
		{name: "GetItem of a missing item: the minimum read", op: "GetItem",
			do: func() error {
				_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: tbl, Key: key("r-missing"), ConsistentRead: aws.Bool(true)})
				return err
			}, want: awscount.Capacity{Read: 1}},
		// An index is read eventually consistent, by the size of the entries returned together.
		{name: "Query on the index", op: "Query", setup: []func() error{put(indexed("q1"))},
			do: func() error {
				_, err := db.Query(ctx, &dynamodb.QueryInput{TableName: tbl, IndexName: aws.String("gsi1"), KeyConditionExpression: aws.String("gsi1pk = :p"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":p": str("DEV#d#CALLS#pending")}})
				return err
			}, want: awscount.Capacity{Read: 0.5, Index: 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range tt.setup {
				if err := f(); err != nil {
					t.Fatal(err)
				}
			}
			c.Reset()
			if err := tt.do(); (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tt.wantErr)
			}
			if got := c.Capacity(); len(got) != 1 || got[tt.op] != tt.want {
				t.Errorf("capacity %+v, want %s: %+v", got, tt.op, tt.want)
			}
			if got, want := c.Units()[tt.op], int64(math.Ceil(tt.want.Read+tt.want.Write)); got != want {
				t.Errorf("units %d, want %d", got, want)
			}
		})
	}
}

// TestCallerParametersUntouched: the counter asks for the capacity on a copy, so the caller's input
// is as it was and a caller that asked for the capacity itself still gets it.
func TestCallerParametersUntouched(t *testing.T) {
	ctx := context.Background()
	var c awscount.Counter
	db := ddblocal.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.Register) })
	tbl := aws.String(ddblocal.NewTable(t, ddblocal.Client(t)))
	in := &dynamodb.PutItemInput{TableName: tbl, Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "A"}}}
	if _, err := db.PutItem(ctx, in); err != nil {
		t.Fatal(err)
	}
	if in.ReturnConsumedCapacity != "" {
		t.Errorf("the caller's input now asks for %q", in.ReturnConsumedCapacity)
	}
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := db.PutItem(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if out.ConsumedCapacity == nil || aws.ToFloat64(out.ConsumedCapacity.CapacityUnits) != 1 {
		t.Errorf("consumed capacity %+v, want the one unit the caller asked to see", out.ConsumedCapacity)
	}
	if got := c.Capacity()["PutItem"]; got != (awscount.Capacity{Write: 2}) {
		t.Errorf("capacity %+v, want two writes", got)
	}
}

// countedClient is a DynamoDB client of url whose requests c counts.
func countedClient(url string, c *awscount.Counter) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(url),
		APIOptions:   append([]func(*middleware.Stack) error{}, c.Register),
	})
}

// TestLeaveCapacity: a counter that leaves the capacity alone sends the request as made (DynamoDB
// returns no ConsumedCapacity) and estimates its units from it.
func TestLeaveCapacity(t *testing.T) {
	ctx := context.Background()
	c := awscount.Counter{LeaveCapacity: true}
	db := ddblocal.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.Register) })
	tbl := aws.String(ddblocal.NewTable(t, ddblocal.Client(t)))
	out, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: tbl, Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "A"},
		"gsi1pk": &types.AttributeValueMemberS{Value: "g"}, "gsi1sk": &types.AttributeValueMemberS{Value: "g"}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.ConsumedCapacity != nil {
		t.Errorf("DynamoDB was asked for the capacity: %+v", out.ConsumedCapacity)
	}
	if got := c.Capacity()["PutItem"]; got != (awscount.Capacity{Write: 1, Estimated: 1}) {
		t.Errorf("capacity %+v, want one estimated write", got)
	}
}
