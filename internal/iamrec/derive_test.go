package iamrec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

const (
	table   = "arn:aws:dynamodb:us-east-1:000000000000:table/sinew"
	keyARN  = "arn:aws:kms:us-east-1:000000000000:key/1b4e28ba-2fa1-11d2-883f-0016d3cca427"
	machine = "arn:aws:states:us-east-1:000000000000:stateMachine:tool_call"
)

// lookup resolves the one local key by its alias, its id or a blob, and one task token.
var lookup = Lookup{
	Key: func(ref string, blob []byte) (string, []string, bool) {
		if ref == "alias/sinew-secrets" || ref == keyARN || (ref == "" && string(blob) == "blob") {
			return keyARN, []string{"alias/sinew-secrets"}, true
		}
		return "", nil, false
	},
	TaskMachine: func(tok string) string {
		if tok == "AQtoken" {
			return machine
		}
		return ""
	},
}

func req(action, resource string) Request { return Request{Action: action, Resource: resource} }

// TestDerive checks the authorizations derived from each operation's input: actions, resources
// (aliases and blobs resolved to keys, names to ARNs, tokens to their machine) and condition keys.
func TestDerive(t *testing.T) {
	ec := map[string]string{"developer": "d1", "owner": "agent:a1"}
	ecCtx := map[string]any{"kms:EncryptionContextKeys": []string{"developer", "owner"},
		"kms:EncryptionContext:developer": "d1", "kms:EncryptionContext:owner": "agent:a1"}
	withCtx := func(r Request, ctx map[string]any) Request {
		r.Context = ctx
		r.KeyAliases = []string{"alias/sinew-secrets"}
		return r
	}
	tests := []struct {
		name  string
		op    string
		input any
		want  []Request
	}{
		{"GetItem", "GetItem", &dynamodb.GetItemInput{TableName: aws.String("sinew")}, []Request{req("dynamodb:GetItem", table)}},
		{"Query on the index", "Query", &dynamodb.QueryInput{TableName: aws.String("sinew"), IndexName: aws.String("gsi1")},
			[]Request{req("dynamodb:Query", table+"/index/gsi1")}},
		{"Query on a table ARN", "Query", &dynamodb.QueryInput{TableName: aws.String(table)}, []Request{req("dynamodb:Query", table)}},
		{"BatchGetItem per table", "BatchGetItem", &dynamodb.BatchGetItemInput{RequestItems: map[string]ddbtypes.KeysAndAttributes{"sinew": {}, "other": {}}},
			[]Request{req("dynamodb:BatchGetItem", "arn:aws:dynamodb:us-east-1:000000000000:table/other"), req("dynamodb:BatchGetItem", table)}},
		{"TransactWriteItems as its items' actions", "TransactWriteItems", &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
			{Put: &ddbtypes.Put{TableName: aws.String("sinew")}}, {Update: &ddbtypes.Update{TableName: aws.String("sinew")}},
			{Put: &ddbtypes.Put{TableName: aws.String("sinew")}}, {ConditionCheck: &ddbtypes.ConditionCheck{TableName: aws.String("sinew")}},
			{Delete: &ddbtypes.Delete{TableName: aws.String("sinew")}}}},
			[]Request{req("dynamodb:PutItem", table), req("dynamodb:UpdateItem", table), req("dynamodb:ConditionCheckItem", table), req("dynamodb:DeleteItem", table)}},
		{"TransactGetItems as GetItem", "TransactGetItems", &dynamodb.TransactGetItemsInput{TransactItems: []ddbtypes.TransactGetItem{
			{Get: &ddbtypes.Get{TableName: aws.String("sinew")}}}}, []Request{req("dynamodb:GetItem", table)}},
		{"ListTables on *", "ListTables", &dynamodb.ListTablesInput{}, []Request{req("dynamodb:ListTables", "*")}},
		{"GenerateDataKey by alias", "GenerateDataKey", &kms.GenerateDataKeyInput{KeyId: aws.String("alias/sinew-secrets"), EncryptionContext: ec},
			[]Request{withCtx(req("kms:GenerateDataKey", keyARN), map[string]any{"kms:EncryptionContextKeys": []string{"developer", "owner"},
				"kms:EncryptionContext:developer": "d1", "kms:EncryptionContext:owner": "agent:a1", "kms:RequestAlias": "alias/sinew-secrets"})}},
		{"Decrypt by the blob's key", "Decrypt", &kms.DecryptInput{CiphertextBlob: []byte("blob"), EncryptionContext: ec},
			[]Request{withCtx(req("kms:Decrypt", keyARN), ecCtx)}},
		{"Decrypt without a context", "Decrypt", &kms.DecryptInput{KeyId: aws.String(keyARN), CiphertextBlob: []byte("x")},
			[]Request{withCtx(req("kms:Decrypt", keyARN), nil)}},
		{"ReEncrypt from and to", "ReEncrypt", &kms.ReEncryptInput{CiphertextBlob: []byte("blob"), DestinationKeyId: aws.String(keyARN),
			SourceEncryptionContext: ec, DestinationEncryptionContext: map[string]string{"developer": "d2"}},
			[]Request{withCtx(req("kms:ReEncryptFrom", keyARN), ecCtx), withCtx(req("kms:ReEncryptTo", keyARN),
				map[string]any{"kms:EncryptionContextKeys": []string{"developer"}, "kms:EncryptionContext:developer": "d2"})}},
		{"Decrypt of an unknown key", "Decrypt", &kms.DecryptInput{KeyId: aws.String("alias/other"), CiphertextBlob: []byte("x")},
			[]Request{{Action: "kms:Decrypt", Context: map[string]any{"kms:RequestAlias": "alias/other"}}}},
		{"StartExecution", "StartExecution", &sfn.StartExecutionInput{StateMachineArn: aws.String(machine)}, []Request{req("states:StartExecution", machine)}},
		{"UpdateStateMachine on the machine", "UpdateStateMachine", &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(machine)}, []Request{req("states:UpdateStateMachine", machine)}},
		{"DeleteStateMachine on the machine", "DeleteStateMachine", &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(machine)}, []Request{req("states:DeleteStateMachine", machine)}},
		{"DescribeExecution on the execution", "DescribeExecution", &sfn.DescribeExecutionInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:000000000000:execution:tool_call:x")},
			[]Request{req("states:DescribeExecution", "arn:aws:states:us-east-1:000000000000:execution:tool_call:x")}},
		{"SendTaskSuccess on the token's machine", "SendTaskSuccess", &sfn.SendTaskSuccessInput{TaskToken: aws.String("AQtoken")},
			[]Request{req("states:SendTaskSuccess", machine)}},
		{"SendTaskFailure of an unknown token", "SendTaskFailure", &sfn.SendTaskFailureInput{TaskToken: aws.String("AQgone")},
			[]Request{req("states:SendTaskFailure", "")}},
		{"Invoke by name", "Invoke", &lambda.InvokeInput{FunctionName: aws.String("integration")},
			[]Request{req("lambda:InvokeFunction", "arn:aws:lambda:us-east-1:000000000000:function:integration")}},
		{"Invoke a qualified ARN", "Invoke", &lambda.InvokeInput{FunctionName: aws.String("arn:aws:lambda:us-east-1:000000000000:function:system:live")},
			[]Request{req("lambda:InvokeFunction", "arn:aws:lambda:us-east-1:000000000000:function:system:live")}},
		{"PutEvents per bus", "PutEvents", &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{}, {EventBusName: aws.String("default")},
			{EventBusName: aws.String("arn:aws:events:us-east-1:000000000000:event-bus/other")}}},
			[]Request{req("events:PutEvents", "arn:aws:events:us-east-1:000000000000:event-bus/default"),
				req("events:PutEvents", "arn:aws:events:us-east-1:000000000000:event-bus/other")}},
		{"Converse with a model id", "Converse", &bedrockruntime.ConverseInput{ModelId: aws.String("anthropic.claude-3-haiku-20240307-v1:0")},
			[]Request{req("bedrock:InvokeModel", "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0")}},
		{"Converse through an inference profile", "Converse", &bedrockruntime.ConverseInput{ModelId: aws.String("us.anthropic.claude-haiku-4-5-20251001-v1:0")},
			[]Request{req("bedrock:InvokeModel", "arn:aws:bedrock:us-east-1:000000000000:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0"),
				{Action: "bedrock:InvokeModel", Resource: "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
					Context: map[string]any{"bedrock:InferenceProfileArn": "arn:aws:bedrock:us-east-1:000000000000:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0"}}}},
		{"an unknown operation", "ListTagsOfResource", &dynamodb.ListTagsOfResourceInput{}, []Request{{Action: "ListTagsOfResource", Operation: "ListTagsOfResource", Underived: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Derive(tt.op, tt.input, lookup)
			for i := range tt.want {
				if !tt.want[i].Underived {
					tt.want[i].Operation = tt.op
					tt.want[i].Service, _, _ = strings.Cut(tt.want[i].Action, ":")
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Derive(%s)\n got  %+v\n want %+v", tt.op, got, tt.want)
			}
		})
	}
}

// TestDeriveIntegration checks the Step Functions integrations' authorizations.
func TestDeriveIntegration(t *testing.T) {
	tests := []struct {
		service, api, params string
		want                 []Request
	}{
		{"dynamodb", "putItem", `{"TableName":"sinew","Item":{}}`, []Request{req("dynamodb:PutItem", table)}},
		{"dynamodb", "getItem", `{"TableName":"` + table + `"}`, []Request{req("dynamodb:GetItem", table)}},
		{"events", "putEvents", `{"Entries":[{"Source":"s"},{"EventBusName":"b"}]}`, []Request{
			req("events:PutEvents", "arn:aws:events:us-east-1:000000000000:event-bus/b"), req("events:PutEvents", "arn:aws:events:us-east-1:000000000000:event-bus/default")}},
		{"sqs", "sendMessage", `{}`, []Request{{Action: "sqs:SendMessage", Underived: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.service+":"+tt.api, func(t *testing.T) {
			for i := range tt.want {
				tt.want[i].Service, tt.want[i].Operation = tt.service, tt.api
			}
			if got := DeriveIntegration(tt.service, tt.api, []byte(tt.params)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestMachineOfExecution maps execution ARNs to their state machine's.
func TestMachineOfExecution(t *testing.T) {
	for in, want := range map[string]string{
		"arn:aws:states:us-east-1:000000000000:execution:tool_call:abc": machine,
		machine: "",
		"":      "",
	} {
		if got := MachineOfExecution(in); got != want {
			t.Errorf("MachineOfExecution(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReadDir reads what Write wrote, a killed process's partial last line left out, and refuses a
// file broken elsewhere.
func TestReadDir(t *testing.T) {
	tests := []struct {
		name    string
		tail    string // appended to the written file
		want    int
		wantErr bool
	}{
		{"whole", "", 2, false},
		{"partial last line", `{"principal":"api","acti`, 2, false},
		{"broken line before others", "{\n" + `{"principal":"api"}` + "\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(req("dynamodb:GetItem", table), req("kms:Decrypt", keyARN)); err != nil {
				t.Fatal(err)
			}
			if _, err := w.f.WriteString(tt.tail); err != nil {
				t.Fatal(err)
			}
			w.Close()
			rs, files, err := ReadDir(dir)
			if (err != nil) != tt.wantErr || (err == nil && (len(rs) != tt.want || files != 1)) {
				t.Errorf("ReadDir = %d requests in %d files, %v; want %d (error %v)", len(rs), files, err, tt.want, tt.wantErr)
			}
		})
	}
}
