package ddbtask_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/asl"
	"sinew/internal/asl/ddbtask"
	"sinew/internal/jsonv"
	"sinew/internal/testenv/ddblocal"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

func newTable(t *testing.T) string {
	t.Helper()
	c := ddblocal.Client(t)
	name := "asl-ddbtask-" + strings.ReplaceAll(t.Name(), "/", "-")
	ctx := context.Background()
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

func engine(t *testing.T) *asl.Engine {
	api := &ddbtask.HTTP{Endpoint: ddblocal.Endpoint(t), Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	return asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Unix(0, 0)), Integrations: ddbtask.Register(nil, api)})
}

// The machine of the recorded DYNAMODB_PUT_UPDATE_GET_ITEM test, in its shape.
const putUpdateGet = `{"StartAt":"PutItem","States":{
  "PutItem":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:putItem","Parameters":{"TableName.$":"$.TableName","Item.$":"$.Item"},"ResultPath":"$.putItemOutput","Next":"UpdateItem"},
  "UpdateItem":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:updateItem","Parameters":{"TableName.$":"$.TableName","Key.$":"$.Key","UpdateExpression.$":"$.UpdateExpression","ExpressionAttributeValues.$":"$.ExpressionAttributeValues"},"ResultPath":"$.updateItemOutput","Next":"GetItem"},
  "GetItem":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:getItem","Parameters":{"TableName.$":"$.TableName","Key.$":"$.Key"},"ResultSelector":{"Item.$":"$.Item"},"ResultPath":"$.getItemOutput","Next":"DeleteItem"},
  "DeleteItem":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:deleteItem","Parameters":{"TableName.$":"$.TableName","Key.$":"$.Key"},"ResultPath":null,"End":true}}}`

func TestPutUpdateGetDelete(t *testing.T) {
	table := newTable(t)
	m, err := asl.Parse([]byte(putUpdateGet), asl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	input := `{"TableName":"` + table + `","Item":{"data":{"S":"HelloWorld"},"id":{"S":"id1"}},"Key":{"id":{"S":"id1"}},
	  "UpdateExpression":"set data2=:r","ExpressionAttributeValues":{":r":{"S":"HelloWorldUpdated"}}}`
	x, err := engine(t).Start(context.Background(), asl.StartInput{Machine: m, Input: input})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := x.Wait(context.Background())
	if d.Status != asl.StatusSucceeded {
		t.Fatalf("%+v", d)
	}
	out, _ := jsonv.DecodeString(d.Output)
	got := out.(map[string]any)["getItemOutput"]
	want, _ := jsonv.DecodeString(`{"Item":{"data":{"S":"HelloWorld"},"data2":{"S":"HelloWorldUpdated"},"id":{"S":"id1"}}}`)
	if !jsonv.Equal(got, want) {
		t.Fatalf("getItem gave %s", jsonv.EncodeString(got))
	}
	put := out.(map[string]any)["putItemOutput"].(map[string]any)
	if put["SdkHttpMetadata"].(map[string]any)["HttpStatusCode"] != int64(200) {
		t.Fatalf("putItem output %s", jsonv.EncodeString(put))
	}
	h := x.History()
	if h[2].TaskScheduledEventDetails.ResourceType != "dynamodb" || h[2].TaskScheduledEventDetails.Resource != "putItem" {
		t.Fatalf("TaskScheduled %+v", h[2].TaskScheduledEventDetails)
	}
}

func TestErrorsAreNamedLikeAWS(t *testing.T) {
	table := newTable(t)
	def := `{"StartAt":"Put","States":{"Put":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:putItem",
	  "Parameters":{"TableName.$":"$.t","Item":{"id":{"S":"x"}},"ConditionExpression":"attribute_not_exists(id)"},
	  "Retry":[{"ErrorEquals":["DynamoDB.ConditionalCheckFailedException"],"MaxAttempts":1,"IntervalSeconds":1}],"End":true}}}`
	m, err := asl.Parse([]byte(def), asl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine(t)
	for _, tc := range []struct{ table, err, cause string }{
		{"no-such-table", "DynamoDB.ResourceNotFoundException", "(Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ResourceNotFoundException;"},
		{table, "", ""}, // first put succeeds
		{table, "DynamoDB.ConditionalCheckFailedException", "Error Code: ConditionalCheckFailedException"},
	} {
		x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `{"t":"` + tc.table + `"}`})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := x.Wait(context.Background())
		if d.Error != tc.err || !strings.Contains(d.Cause, tc.cause) {
			t.Fatalf("table %s: %s %q, want %s ...%s...", tc.table, d.Error, d.Cause, tc.err, tc.cause)
		}
	}
}
