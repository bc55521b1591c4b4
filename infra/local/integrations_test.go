package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/testenv/ddblocal"
)

// userIntegrationsDef is a user's own state machine over the optimised DynamoDB integrations and
// EventBridge putEvents.
const userIntegrationsDef = `{"StartAt":"Put","States":{
 "Put":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:putItem","ResultPath":null,
  "Parameters":{"TableName":"user-things","Item":{"pk":{"S.$":"$.id"},"n":{"N":"1"}}},"Next":"Add"},
 "Add":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:updateItem","ResultSelector":{"n.$":"$.Attributes.n.N"},"ResultPath":"$.updated",
  "Parameters":{"TableName":"user-things","Key":{"pk":{"S.$":"$.id"}},"UpdateExpression":"ADD n :one",
   "ExpressionAttributeValues":{":one":{"N":"41"}},"ReturnValues":"UPDATED_NEW"},"Next":"Get"},
 "Get":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:getItem","ResultSelector":{"n.$":"$.Item.n.N"},"ResultPath":"$.got",
  "Parameters":{"TableName":"user-things","Key":{"pk":{"S.$":"$.id"}}},"Next":"Tell"},
 "Tell":{"Type":"Task","Resource":"arn:aws:states:::events:putEvents","ResultSelector":{"failed.$":"$.FailedEntryCount"},"ResultPath":"$.told",
  "Parameters":{"Entries":[{"Source":"user.app","DetailType":"Thing counted","Detail":{"id.$":"$.id","n.$":"$.got.n"}}]},"Next":"Delete"},
 "Delete":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:deleteItem","ResultPath":null,
  "Parameters":{"TableName":"user-things","Key":{"pk":{"S.$":"$.id"}}},"Next":"Missing"},
 "Missing":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:getItem","Parameters":{"TableName":"no-such-table","Key":{"pk":{"S":"x"}}},
  "Catch":[{"ErrorEquals":["DynamoDB.ResourceNotFoundException"],"ResultPath":"$.caught","Next":"Done"}],"End":true},
 "Done":{"Type":"Pass","End":true}}}`

// userTable makes a user's own table (string key pk) in local mode's DynamoDB Local.
func userTable(t *testing.T, p *proc, name string) *dynamodb.Client {
	t.Helper()
	ddb := ddblocal.NewClientWith(p.Endpoints["aws"], p.Credentials())
	if _, err := ddb.CreateTable(context.Background(), &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}}}); err != nil {
		t.Fatal(err)
	}
	return ddb
}

func TestUserMachineUsesDynamoDBAndEventBridge(t *testing.T) {
	dir := t.TempDir()
	p := startLocal(t, dir, "--in-memory")
	ctx := context.Background()
	ddb := userTable(t, p, "user-things")
	c := p.sfn()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("user-integrations"), RoleArn: aws.String(role),
		Definition: aws.String(userIntegrationsDef)})
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"id":"thing-1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var d *sfn.DescribeExecutionOutput
	eventually(t, "the execution to end", func() bool {
		d, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		return err == nil && d.Status != types.ExecutionStatusRunning
	})
	if d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution %s: %s %s\nstderr:\n%s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause), p.Stderr)
	}
	var out struct {
		Updated, Got struct{ N string }
		Told         struct{ Failed int }
		Caught       struct{ Error string }
	}
	if err := json.Unmarshal([]byte(aws.ToString(d.Output)), &out); err != nil {
		t.Fatal(err)
	}
	if out.Updated.N != "42" || out.Got.N != "42" || out.Told.Failed != 0 || out.Caught.Error != "DynamoDB.ResourceNotFoundException" {
		t.Fatalf("output %s", aws.ToString(d.Output))
	}
	// The item was deleted in DynamoDB Local.
	got, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("user-things"),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "thing-1"}}})
	if err != nil || got.Item != nil {
		t.Fatalf("after deleteItem: %v %v", got.Item, err)
	}
	// The event is on local mode's bus, with the execution and machine appended to its resources.
	eventually(t, "the user's event in the feed", func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
		for _, line := range splitLines(data) {
			var e struct {
				Source    string         `json:"source"`
				Resources []string       `json:"resources"`
				Detail    map[string]any `json:"detail"`
			}
			if json.Unmarshal(line, &e) == nil && e.Source == "user.app" && e.Detail["id"] == "thing-1" && e.Detail["n"] == "42" &&
				slices.Equal(e.Resources, []string{aws.ToString(x.ExecutionArn), aws.ToString(sm.StateMachineArn)}) {
				return true
			}
		}
		return false
	})
	p.stop(t)
}

// TestIntegrationCallsNotRepeatedAfterKill9: a DynamoDB update that finished before a crash is not
// made again when the execution is replayed after the restart.
func TestIntegrationCallsNotRepeatedAfterKill9(t *testing.T) {
	dir := t.TempDir()
	p1 := startLocal(t, dir)
	ctx := context.Background()
	userTable(t, p1, "counters")
	def := `{"StartAt":"Count","States":{
 "Count":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:updateItem","ResultPath":null,
  "Parameters":{"TableName":"counters","Key":{"pk":{"S":"c"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}},"Next":"Pause"},
 "Pause":{"Type":"Wait","Seconds":3,"End":true}}}`
	c := p1.sfn()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("counter"), RoleArn: aws.String(role), Definition: aws.String(def)})
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Wait after the update", func() bool {
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn})
		return err == nil && slices.ContainsFunc(h.Events, func(e types.HistoryEvent) bool { return e.Type == types.HistoryEventTypeWaitStateEntered })
	})
	p1.kill9(t)

	p2 := startLocal(t, dir)
	c = p2.sfn()
	eventually(t, "the execution to end after the restart", func() bool {
		d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		return err == nil && d.Status == types.ExecutionStatusSucceeded
	})
	got, err := ddblocal.NewClientWith(p2.Endpoints["aws"], p2.Credentials()).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("counters"),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := got.Item["n"].(*ddbtypes.AttributeValueMemberN); !ok || n.Value != "1" {
		t.Fatalf("counter %v after the restart, want 1: the update ran again", got.Item["n"])
	}
	p2.stop(t)
}
