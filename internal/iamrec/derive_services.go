package iamrec

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/localaws/localnames"
)

// deriveKMS: the action on the key KMS resolves (an alias to its key, a Decrypt without KeyId to
// the blob's key), with the encryption context as kms:EncryptionContext:<k> and
// kms:EncryptionContextKeys, and kms:RequestAlias when the request named an alias. ReEncrypt is
// ReEncryptFrom on the source key under the source context and ReEncryptTo on the destination key
// under the destination context.
func deriveKMS(op string, input any, lk Lookup) []Request {
	switch in := input.(type) {
	case *kms.DecryptInput:
		return []Request{keyRequest("kms:Decrypt", deref(in.KeyId), in.CiphertextBlob, in.EncryptionContext, lk)}
	case *kms.EncryptInput:
		return []Request{keyRequest("kms:Encrypt", deref(in.KeyId), nil, in.EncryptionContext, lk)}
	case *kms.GenerateDataKeyInput:
		return []Request{keyRequest("kms:GenerateDataKey", deref(in.KeyId), nil, in.EncryptionContext, lk)}
	case *kms.GenerateDataKeyWithoutPlaintextInput:
		return []Request{keyRequest("kms:GenerateDataKeyWithoutPlaintext", deref(in.KeyId), nil, in.EncryptionContext, lk)}
	case *kms.ReEncryptInput:
		return []Request{
			keyRequest("kms:ReEncryptFrom", deref(in.SourceKeyId), in.CiphertextBlob, in.SourceEncryptionContext, lk),
			keyRequest("kms:ReEncryptTo", deref(in.DestinationKeyId), nil, in.DestinationEncryptionContext, lk),
		}
	case *kms.DescribeKeyInput:
		return []Request{keyRequest("kms:DescribeKey", deref(in.KeyId), nil, nil, lk)}
	}
	return []Request{{Action: "kms:" + op, Resource: "*"}}
}

func keyRequest(action, ref string, blob []byte, ec map[string]string, lk Lookup) Request {
	r := Request{Action: action}
	if lk.Key != nil {
		if arn, aliases, ok := lk.Key(ref, blob); ok {
			r.Resource, r.KeyAliases = arn, aliases
		}
	}
	ctx := map[string]any{}
	if len(ec) > 0 {
		keys := slices.Sorted(maps.Keys(ec))
		ctx["kms:EncryptionContextKeys"] = keys
		for _, k := range keys {
			ctx["kms:EncryptionContext:"+k] = ec[k]
		}
	}
	if a := aliasOf(ref); a != "" {
		ctx["kms:RequestAlias"] = a
	}
	if len(ctx) > 0 {
		r.Context = ctx
	}
	return r
}

// aliasOf is the alias name a KeyId names (alias/x, or an alias ARN), else "".
func aliasOf(ref string) string {
	if strings.HasPrefix(ref, "alias/") {
		return ref
	}
	if strings.HasPrefix(ref, "arn:") {
		if parts := strings.SplitN(ref, ":", 6); len(parts) == 6 && strings.HasPrefix(parts[5], "alias/") {
			return parts[5]
		}
	}
	return ""
}

// deriveStates: executions' actions on the execution, the others on the state machine; SendTask*
// on the state machine whose execution issued the token, which is how Step Functions authorizes it.
func deriveStates(op string, input any, lk Lookup) []Request {
	r := Request{Action: "states:" + op}
	switch in := input.(type) {
	case *sfn.StartExecutionInput:
		r.Resource = deref(in.StateMachineArn)
	case *sfn.StartSyncExecutionInput:
		r.Resource = deref(in.StateMachineArn)
	case *sfn.DescribeExecutionInput:
		r.Resource = deref(in.ExecutionArn)
	case *sfn.StopExecutionInput:
		r.Resource = deref(in.ExecutionArn)
	case *sfn.GetExecutionHistoryInput:
		r.Resource = deref(in.ExecutionArn)
	case *sfn.ListExecutionsInput:
		r.Resource = deref(in.StateMachineArn)
	case *sfn.DescribeStateMachineInput:
		r.Resource = deref(in.StateMachineArn)
	case *sfn.DescribeStateMachineForExecutionInput:
		r.Resource = deref(in.ExecutionArn)
	case *sfn.ListStateMachinesInput:
		r.Resource = "*"
	case *sfn.CreateStateMachineInput:
		r.Resource = localnames.StateMachineARN(deref(in.Name))
	case *sfn.UpdateStateMachineInput:
		r.Resource = deref(in.StateMachineArn)
	case *sfn.DeleteStateMachineInput:
		r.Resource = deref(in.StateMachineArn)
	case *sfn.SendTaskSuccessInput:
		r.Resource = taskMachine(deref(in.TaskToken), lk)
	case *sfn.SendTaskFailureInput:
		r.Resource = taskMachine(deref(in.TaskToken), lk)
	case *sfn.SendTaskHeartbeatInput:
		r.Resource = taskMachine(deref(in.TaskToken), lk)
	}
	return []Request{r}
}

func taskMachine(token string, lk Lookup) string {
	if lk.TaskMachine == nil {
		return ""
	}
	return lk.TaskMachine(token)
}

// MachineOfExecution is the ARN of the state machine of an execution ARN
// (arn:aws:states:r:a:execution:machine:name), "" when it is none.
func MachineOfExecution(exec string) string {
	parts := strings.Split(exec, ":")
	if len(parts) < 8 || parts[5] != "execution" {
		return ""
	}
	parts[5] = "stateMachine"
	return strings.Join(parts[:7], ":")
}

// MachineName is the name in a state machine or execution ARN.
func MachineName(arn string) string {
	parts := strings.Split(arn, ":")
	if len(parts) < 7 {
		return ""
	}
	return parts[6]
}

// FunctionARN is the ARN Lambda authorizes an Invoke of ref (a name, name:qualifier, partial ARN or
// ARN) with qualifier against: the qualified ARN when either gives a qualifier.
func FunctionARN(ref, qualifier string) string {
	name, qual := ref, ""
	if strings.HasPrefix(ref, "arn:") || strings.Contains(ref, ":function:") {
		_, after, _ := strings.Cut(ref, ":function:")
		name = after
	}
	name, qual, _ = strings.Cut(name, ":")
	if qualifier != "" {
		qual = qualifier
	}
	arn := localnames.FunctionARN(name)
	if qual != "" {
		arn += ":" + qual
	}
	return arn
}

// TableARN is the ARN of a TableName (a name or an ARN).
func TableARN(table string) string {
	return arnOr(table, "arn:aws:dynamodb:"+localnames.Region+":"+localnames.Account+":table/")
}

// IndexARN is the ARN of a table's index, or of the table when index is "".
func IndexARN(table, index string) string {
	if index == "" {
		return TableARN(table)
	}
	return TableARN(table) + "/index/" + index
}

// EventBusARN is the ARN of an EventBusName (a name or an ARN; "" is the default bus).
func EventBusARN(bus string) string {
	if bus == "" {
		bus = localnames.EventBus
	}
	return arnOr(bus, "arn:aws:events:"+localnames.Region+":"+localnames.Account+":event-bus/")
}

// DeriveIntegration is the authorization of a Step Functions optimised integration's call
// (service, API as the Resource names them: dynamodb, putItem) with its Parameters: the API's
// action on the table (DynamoDB) or on each entry's bus (EventBridge).
func DeriveIntegration(service, api string, params []byte) []Request {
	var p struct {
		TableName, IndexName string
		Entries              []struct{ EventBusName string }
		StateMachineArn      string
	}
	_ = json.Unmarshal(params, &p) // what it cannot read stays empty: an unknown resource, reported
	action := service + ":" + strings.ToUpper(api[:min(1, len(api))]) + api[min(1, len(api)):]
	var rs []Request
	switch service {
	case "dynamodb":
		rs = []Request{{Action: action, Resource: IndexARN(p.TableName, p.IndexName)}}
	case "events":
		var buses []string
		for _, e := range p.Entries {
			buses = append(buses, EventBusARN(e.EventBusName))
		}
		for _, b := range uniq(buses) {
			rs = append(rs, Request{Action: action, Resource: b})
		}
	case "states":
		rs = []Request{{Action: action, Resource: p.StateMachineArn}}
	default:
		rs = []Request{{Action: action, Underived: true}}
	}
	for i := range rs {
		rs[i].Service, rs[i].Operation = service, api
	}
	return rs
}
