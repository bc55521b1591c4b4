// Package eventstask is the engine's optimised EventBridge integration: Task states with Resource
// arn:aws:states:::events:putEvents (and .waitForTaskToken, which the engine handles). As AWS's
// integration does (https://docs.aws.amazon.com/step-functions/latest/dg/connect-eventbridge.html),
// a Detail given as a JSON object is sent as its JSON text, the execution's and state machine's
// ARNs are appended to each entry's Resources, and a response with FailedEntryCount above zero
// fails the task with EventBridge.FailedEntry.
package eventstask

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"

	"sinew/internal/asl"
	"sinew/internal/jsonv"
)

// API is the one EventBridge call the integration makes (an *eventbridge.Client has it).
type API interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// Register adds the integration to an engine configuration's registry.
func Register(into map[string]asl.Integration, api API) map[string]asl.Integration {
	if into == nil {
		into = map[string]asl.Integration{}
	}
	into["events:putEvents"] = asl.IntegrationFunc(func(ctx context.Context, call *asl.TaskCall) (any, error) {
		return putEvents(ctx, api, call)
	})
	return into
}

func putEvents(ctx context.Context, api API, call *asl.TaskCall) (any, error) {
	in, err := request(call)
	if err != nil {
		return nil, err
	}
	out, err := api.PutEvents(ctx, in)
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return nil, asl.TaskFailure("EventBridge."+ae.ErrorCode(), ae.ErrorMessage())
		}
		return nil, asl.TaskFailure("EventBridge.SdkClientException", err.Error())
	}
	entries := make([]any, len(out.Entries))
	for i, e := range out.Entries {
		m := map[string]any{}
		for k, v := range map[string]*string{"EventId": e.EventId, "ErrorCode": e.ErrorCode, "ErrorMessage": e.ErrorMessage} {
			if v != nil {
				m[k] = *v
			}
		}
		entries[i] = m
	}
	res := map[string]any{"Entries": entries, "FailedEntryCount": int64(out.FailedEntryCount)}
	if out.FailedEntryCount > 0 {
		return nil, asl.TaskFailure("EventBridge.FailedEntry", jsonv.EncodeString(res))
	}
	return res, nil
}

// request reads the task's Parameters as a PutEvents request; its error is the task's failure.
func request(call *asl.TaskCall) (*eventbridge.PutEventsInput, error) {
	p, ok := call.Parameters.(map[string]any)
	if !ok {
		return nil, asl.TaskFailure("States.Runtime", "The Parameters of an events:putEvents task must be an object")
	}
	list, ok := p["Entries"].([]any)
	if !ok {
		return nil, asl.TaskFailure("States.Runtime", "The field 'Entries' of an events:putEvents task must be an array")
	}
	machine := machineOf(call.ExecutionArn)
	in := &eventbridge.PutEventsInput{Entries: make([]types.PutEventsRequestEntry, len(list))}
	for i, raw := range list {
		e, ok := raw.(map[string]any)
		if !ok {
			return nil, asl.TaskFailure("States.Runtime", fmt.Sprintf("Entries[%d] of an events:putEvents task must be an object", i))
		}
		var entry types.PutEventsRequestEntry
		for field, dst := range map[string]**string{"Source": &entry.Source, "DetailType": &entry.DetailType, "EventBusName": &entry.EventBusName, "TraceHeader": &entry.TraceHeader} {
			if s, ok := e[field].(string); ok {
				*dst = aws.String(s)
			}
		}
		switch d := e["Detail"].(type) {
		case nil:
		case string:
			entry.Detail = aws.String(d)
		default:
			entry.Detail = aws.String(jsonv.EncodeString(d))
		}
		if rs, ok := e["Resources"].([]any); ok {
			for _, r := range rs {
				if s, ok := r.(string); ok {
					entry.Resources = append(entry.Resources, s)
				}
			}
		}
		entry.Resources = append(entry.Resources, call.ExecutionArn, machine)
		in.Entries[i] = entry
	}
	return in, nil
}

// machineOf is the state machine ARN of an execution ARN
// (arn:aws:states:region:account:execution:machine:name).
func machineOf(execArn string) string {
	m := strings.Replace(execArn, ":execution:", ":stateMachine:", 1)
	if i := strings.LastIndex(m, ":"); i > 0 && strings.Count(m, ":") > 6 {
		return m[:i]
	}
	return m
}
