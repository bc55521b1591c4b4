package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/testenv/ddblocal"
)

// bodyCatcher is an HTTP client that keeps the last request body and answers {}.
type bodyCatcher struct{ body []byte }

func (c *bodyCatcher) Do(r *http.Request) (*http.Response, error) {
	c.body, _ = io.ReadAll(r.Body)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}, nil
}

// TestRetable: for each operation sinew sends, the body the SDK serializes names the replay's
// table wherever it named sinew's and is otherwise the same, but for a TransactWriteItems' token,
// which is the replay's.
func TestRetable(t *testing.T) {
	const old, table, token = "sinew", "sinew-replay-1", "sinew-replay-1-7"
	key := map[string]types.AttributeValue{"pk": s("agent#a<b>&c"), "sk": s("META")}
	item := map[string]types.AttributeValue{"pk": s("agent#a<b>&d"), "sk": s("META"), "n": &types.AttributeValueMemberN{Value: "12345678901234567890.5"}}
	get := types.KeysAndAttributes{Keys: []map[string]types.AttributeValue{key}, ConsistentRead: aws.Bool(true)}
	tests := []struct {
		op   string
		call func(context.Context, *dynamodb.Client) error
	}{
		{"GetItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(old), Key: key})
			return err
		}},
		{"BatchGetItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{old: get}})
			return err
		}},
		{"PutItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(old), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
			return err
		}},
		{"UpdateItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(old), Key: key, UpdateExpression: aws.String("SET #s = if_not_exists(#s, :s)"),
				ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: map[string]types.AttributeValue{":s": s("done")},
				ReturnValues: types.ReturnValueAllNew})
			return err
		}},
		{"DeleteItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(old), Key: key})
			return err
		}},
		{"Query", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(old), IndexName: aws.String("gsi1"), KeyConditionExpression: aws.String("#g = :g"),
				ExpressionAttributeNames: map[string]string{"#g": "gsi1pk"}, ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("x<b>&")}})
			return err
		}},
		{"TransactWriteItems", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: aws.String(old), Item: item}},
				{Update: &types.Update{TableName: aws.String(old), Key: key, UpdateExpression: aws.String("SET #s = :s"),
					ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: map[string]types.AttributeValue{":s": s("done")}}},
				{Delete: &types.Delete{TableName: aws.String(old), Key: key}},
				{ConditionCheck: &types.ConditionCheck{TableName: aws.String(old), Key: key, ConditionExpression: aws.String("attribute_exists(pk)")}},
			}})
			return err
		}},
		{"TransactGetItems", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
				{Get: &types.Get{TableName: aws.String(old), Key: key}}, {Get: &types.Get{TableName: aws.String(old), Key: item}},
			}})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			bc := &bodyCatcher{}
			c := ddblocal.NewClient("http://127.0.0.1:1", func(o *dynamodb.Options) { o.HTTPClient = bc })
			if err := tc.call(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			got, err := retable(bc.body, table, token)
			if err != nil {
				t.Fatalf("retable(%s): %v", bc.body, err)
			}
			// What it should be: the recorded body with every "sinew" (only ever a table name
			// here) the replay's table, and the token the replay's.
			want := decodeJSON(t, bytes.ReplaceAll(bc.body, []byte(`"`+old+`"`), []byte(`"`+table+`"`)))
			if _, ok := want["ClientRequestToken"]; ok {
				want["ClientRequestToken"] = token
			} else if tc.op == "TransactWriteItems" {
				t.Errorf("the SDK's TransactWriteItems has no ClientRequestToken: %s", bc.body)
			}
			if g := decodeJSON(t, got); !reflect.DeepEqual(g, want) {
				t.Errorf("retable:\n got %s\nwant %v\nfrom %s", got, want, bc.body)
			}
			if bytes.Contains(got, []byte(`"`+old+`"`)) || !bytes.Contains(got, []byte(`"`+table+`"`)) || !bytes.Contains(got, []byte("<b>&")) {
				t.Errorf("retable: %s still names %s, or does not name %s, or escaped <b>&", got, old, table)
			}
		})
	}
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}
