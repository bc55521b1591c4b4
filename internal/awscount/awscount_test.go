package awscount_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"sinew/internal/awscount"
)

// TestCountsEveryAttempt: a server that fails twice with a retryable error, then answers. The
// counter sits after the SDK's retry middleware, so it sees the three requests on the wire.
func TestCountsEveryAttempt(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if hits.Add(1) <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"boom"}`))
			return
		}
		_, _ = w.Write([]byte(`{"TableNames":[]}`))
	}))
	defer srv.Close()

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

// Request units follow DynamoDB's billing: one per item a request names, two per transactional
// item; retried attempts count again.
func TestUnits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	var c awscount.Counter
	db := countedClient(srv.URL, &c)
	key := func(id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}}
	}
	ctx, tbl := context.Background(), aws.String("t")
	calls := []func() error{
		func() error {
			_, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				"t": {Keys: []map[string]types.AttributeValue{key("a"), key("b"), key("c")}}}})
			return err
		},
		func() error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: tbl, Item: key("a")}}, {Delete: &types.Delete{TableName: tbl, Key: key("b")}}}})
			return err
		},
		func() error {
			_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: tbl, Key: key("a")})
			return err
		},
		func() error {
			_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: tbl, Key: key("b")})
			return err
		},
	}
	for _, call := range calls {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{"BatchGetItem": 3, "TransactWriteItems": 4, "GetItem": 2}
	if got := c.Units(); !maps.Equal(got, want) {
		t.Errorf("units %v, want %v", got, want)
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
