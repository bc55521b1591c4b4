package iamrec

import (
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/localaws/localnames"
)

// Lookup answers what a request's input alone does not say and local mode's services know.
type Lookup struct {
	// Key gives the KMS key that KeyId ref (an alias too) or, with ref "", a ciphertext blob names.
	Key func(ref string, blob []byte) (arn string, aliases []string, ok bool)
	// TaskMachine gives the ARN of the state machine whose execution issued a task token.
	TaskMachine func(token string) string
}

// Derive turns one API call's input (the SDK's *XxxInput) into the authorizations IAM makes for it,
// without their principal. An operation it does not know is one Request marked Underived.
func Derive(op string, input any, lk Lookup) []Request {
	var rs []Request
	switch in := input.(type) {
	case *dynamodb.GetItemInput, *dynamodb.PutItemInput, *dynamodb.UpdateItemInput, *dynamodb.DeleteItemInput,
		*dynamodb.DescribeTableInput, *dynamodb.CreateTableInput, *dynamodb.DeleteTableInput,
		*dynamodb.DescribeTimeToLiveInput, *dynamodb.UpdateTimeToLiveInput, *dynamodb.BatchGetItemInput,
		*dynamodb.BatchWriteItemInput, *dynamodb.TransactGetItemsInput, *dynamodb.TransactWriteItemsInput,
		*dynamodb.QueryInput, *dynamodb.ScanInput, *dynamodb.ListTablesInput:
		rs = deriveDynamoDB(op, in)
	case *kms.DecryptInput, *kms.EncryptInput, *kms.GenerateDataKeyInput, *kms.GenerateDataKeyWithoutPlaintextInput,
		*kms.ReEncryptInput, *kms.DescribeKeyInput, *kms.ListKeysInput:
		rs = deriveKMS(op, in, lk)
	case *sfn.StartExecutionInput, *sfn.StartSyncExecutionInput, *sfn.DescribeExecutionInput, *sfn.StopExecutionInput,
		*sfn.GetExecutionHistoryInput, *sfn.ListExecutionsInput, *sfn.DescribeStateMachineInput, *sfn.DescribeStateMachineForExecutionInput,
		*sfn.ListStateMachinesInput, *sfn.CreateStateMachineInput, *sfn.UpdateStateMachineInput, *sfn.DeleteStateMachineInput,
		*sfn.SendTaskSuccessInput,
		*sfn.SendTaskFailureInput, *sfn.SendTaskHeartbeatInput:
		rs = deriveStates(op, in, lk)
	case *lambda.InvokeInput:
		rs = []Request{{Action: "lambda:InvokeFunction", Resource: FunctionARN(deref(in.FunctionName), deref(in.Qualifier))}}
	case *eventbridge.PutEventsInput:
		var buses []string
		for _, e := range in.Entries {
			buses = append(buses, EventBusARN(deref(e.EventBusName)))
		}
		for _, b := range uniq(buses) {
			rs = append(rs, Request{Action: "events:PutEvents", Resource: b})
		}
	case *secretsmanager.GetSecretValueInput:
		rs = []Request{{Action: "secretsmanager:GetSecretValue", Resource: arnOr(deref(in.SecretId),
			"arn:aws:secretsmanager:"+localnames.Region+":"+localnames.Account+":secret:")}}
	case *bedrockruntime.ConverseInput:
		rs = deriveBedrock(deref(in.ModelId))
	default:
		return []Request{{Service: "", Operation: op, Action: op, Underived: true}}
	}
	for i := range rs {
		rs[i].Operation = op
		rs[i].Service, _, _ = strings.Cut(rs[i].Action, ":")
	}
	return rs
}

// deriveDynamoDB: an item action on its table (an index's ARN for Query and Scan of an index); a
// batch is authorized per table as the batch's own action, a transaction per item as the item's
// action (there is no IAM action for TransactWriteItems or TransactGetItems).
func deriveDynamoDB(op string, input any) []Request {
	one := func(action, table string) []Request {
		return []Request{{Action: "dynamodb:" + action, Resource: TableARN(table)}}
	}
	switch in := input.(type) {
	case *dynamodb.QueryInput:
		return []Request{{Action: "dynamodb:Query", Resource: IndexARN(deref(in.TableName), deref(in.IndexName))}}
	case *dynamodb.ScanInput:
		return []Request{{Action: "dynamodb:Scan", Resource: IndexARN(deref(in.TableName), deref(in.IndexName))}}
	case *dynamodb.ListTablesInput:
		return []Request{{Action: "dynamodb:ListTables", Resource: "*"}}
	case *dynamodb.BatchGetItemInput:
		var rs []Request
		for _, t := range slices.Sorted(maps.Keys(in.RequestItems)) {
			rs = append(rs, one("BatchGetItem", t)...)
		}
		return rs
	case *dynamodb.BatchWriteItemInput:
		var rs []Request
		for _, t := range slices.Sorted(maps.Keys(in.RequestItems)) {
			rs = append(rs, one("BatchWriteItem", t)...)
		}
		return rs
	case *dynamodb.TransactGetItemsInput:
		var rs []Request
		for _, it := range in.TransactItems {
			if it.Get != nil {
				rs = append(rs, one("GetItem", deref(it.Get.TableName))...)
			}
		}
		return dedupe(rs)
	case *dynamodb.TransactWriteItemsInput:
		return dedupe(transactWrite(in, one))
	}
	return one(op, tableOf(input))
}

func transactWrite(in *dynamodb.TransactWriteItemsInput, one func(string, string) []Request) []Request {
	var rs []Request
	for _, it := range in.TransactItems {
		switch {
		case it.Put != nil:
			rs = append(rs, one("PutItem", deref(it.Put.TableName))...)
		case it.Update != nil:
			rs = append(rs, one("UpdateItem", deref(it.Update.TableName))...)
		case it.Delete != nil:
			rs = append(rs, one("DeleteItem", deref(it.Delete.TableName))...)
		case it.ConditionCheck != nil:
			rs = append(rs, one("ConditionCheckItem", deref(it.ConditionCheck.TableName))...)
		}
	}
	return rs
}

// tableOf is the TableName of a single-table operation's input.
func tableOf(input any) string {
	switch in := input.(type) {
	case *dynamodb.GetItemInput:
		return deref(in.TableName)
	case *dynamodb.PutItemInput:
		return deref(in.TableName)
	case *dynamodb.UpdateItemInput:
		return deref(in.TableName)
	case *dynamodb.DeleteItemInput:
		return deref(in.TableName)
	case *dynamodb.DescribeTableInput:
		return deref(in.TableName)
	case *dynamodb.CreateTableInput:
		return deref(in.TableName)
	case *dynamodb.DeleteTableInput:
		return deref(in.TableName)
	case *dynamodb.DescribeTimeToLiveInput:
		return deref(in.TableName)
	case *dynamodb.UpdateTimeToLiveInput:
		return deref(in.TableName)
	}
	return ""
}

// dedupe keeps the first of equal requests: IAM authorizes an action on a resource once per call.
func dedupe(rs []Request) []Request {
	seen := map[string]bool{}
	var out []Request
	for _, r := range rs {
		if k := r.Action + " " + r.Resource; !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

func uniq(ss []string) []string {
	slices.Sort(ss)
	return slices.Compact(ss)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// arnOr is ref when it is an ARN, else prefix+ref.
// profilePrefixes are the geographies of Bedrock's system-defined inference profiles
// (https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html).
var profilePrefixes = []string{"us", "us-gov", "eu", "apac", "jp", "au", "ca", "global"}

// deriveBedrock: a model id is one authorization on its foundation model; an inference profile's
// id is two, as Bedrock makes them: the profile, and the model it routes to with the profile in
// the bedrock:InferenceProfileArn condition key.
func deriveBedrock(id string) []Request {
	if strings.HasPrefix(id, "arn:") {
		return []Request{{Action: "bedrock:InvokeModel", Resource: id}}
	}
	prefix, model, _ := strings.Cut(id, ".")
	if !slices.Contains(profilePrefixes, prefix) || model == "" {
		return []Request{{Action: "bedrock:InvokeModel", Resource: "arn:aws:bedrock:" + localnames.Region + "::foundation-model/" + id}}
	}
	profile := "arn:aws:bedrock:" + localnames.Region + ":" + localnames.Account + ":inference-profile/" + id
	return []Request{
		{Action: "bedrock:InvokeModel", Resource: profile},
		{Action: "bedrock:InvokeModel", Resource: "arn:aws:bedrock:" + localnames.Region + "::foundation-model/" + model,
			Context: map[string]any{"bedrock:InferenceProfileArn": profile}},
	}
}

func arnOr(ref, prefix string) string {
	if strings.HasPrefix(ref, "arn:") {
		return ref
	}
	return prefix + ref
}
