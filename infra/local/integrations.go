package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"sinew/internal/asl"
	"sinew/internal/asl/ddbtask"
	"sinew/internal/asl/eventstask"
	"sinew/internal/jsonv"
	"sinew/internal/localaws/quota"
	"sinew/internal/store"
)

// integrationPrefix marks a service-integration call among the calls the durable recorder
// journals beside Lambda invocations.
const integrationPrefix = "states-integration:"

// directIntegrations are the optimised integrations local mode has beside lambda:invoke and
// states:startExecution: DynamoDB's getItem/putItem/updateItem/deleteItem against DynamoDB Local,
// EventBridge's putEvents into local mode's bus. They reach those through the endpoints local mode
// set for its own handlers (setEnv).
func directIntegrations(q *quota.Limits) map[string]asl.Integration {
	// Local mode's own credentials, which setEnv put in the environment: DynamoDB Local keeps
	// local mode's table under their key id, and the events endpoint checks their signature.
	creds := credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), "")
	ddb := &ddbtask.HTTP{Endpoint: os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"), Region: region, Credentials: creds}
	if q != nil {
		// Throttled as DynamoDB throttles a hot partition: the task fails with
		// DynamoDB.ProvisionedThroughputExceededException, for the state machine's Retry.
		ddb.Client = &http.Client{Transport: q.Transport(store.AttrPK, nil)}
	}
	events := eventbridge.New(eventbridge.Options{Region: region, Credentials: creds,
		BaseEndpoint: aws.String(os.Getenv("AWS_ENDPOINT_URL_EVENTBRIDGE"))})
	return eventstask.Register(ddbtask.Register(nil, ddb), events)
}

// journaledIntegrations runs each integration through the recorder, so an execution replayed
// after a restart gets the journaled answer of a call that had finished instead of making it
// again (a second putItem, updateItem or event).
func journaledIntegrations(rec asl.LambdaInvoker, direct map[string]asl.Integration) map[string]asl.Integration {
	out := make(map[string]asl.Integration, len(direct))
	for key := range direct {
		out[key] = asl.IntegrationFunc(func(ctx context.Context, call *asl.TaskCall) (any, error) {
			params, err := jsonv.Encode(call.Parameters)
			if err != nil {
				return nil, asl.TaskFailure("States.Runtime", "The Parameters cannot be encoded: "+err.Error())
			}
			payload, err := json.Marshal(journaledCall{Service: call.Service, API: call.API, Pattern: call.Pattern,
				ExecutionArn: call.ExecutionArn, StateName: call.StateName, Parameters: params})
			if err != nil {
				return nil, asl.TaskFailure("States.Runtime", "The Parameters cannot be encoded: "+err.Error())
			}
			resp, err := rec.Invoke(ctx, asl.LambdaRequest{FunctionName: integrationPrefix + key, Payload: payload})
			if err != nil {
				return nil, err
			}
			if resp.FunctionError != "" {
				var fe struct{ Error, Cause string }
				_ = json.Unmarshal(resp.Payload, &fe)
				return nil, asl.TaskFailure(fe.Error, fe.Cause)
			}
			return jsonv.Decode(resp.Payload)
		})
	}
	return out
}

// journaledCall is an integration call as the recorder journals it.
type journaledCall struct {
	Service, API, Pattern   string
	ExecutionArn, StateName string
	Parameters              json.RawMessage // as jsonv encodes it: numbers and key order kept
}

// withIntegrations is the recorder's inner invoker: integration calls go to their integration,
// the rest to the functions.
type withIntegrations struct {
	fns    asl.LambdaInvoker
	direct map[string]asl.Integration
	iam    *iamRecorder // nil unless recording for the IAM check
}

func (w withIntegrations) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	key, ok := strings.CutPrefix(req.FunctionName, integrationPrefix)
	if !ok {
		return w.fns.Invoke(ctx, req)
	}
	in, ok := w.direct[key]
	if !ok {
		return nil, errors.New("no integration " + key)
	}
	var c journaledCall
	if err := json.Unmarshal(req.Payload, &c); err != nil {
		return nil, err
	}
	w.iam.engineIntegration(c)
	params, err := jsonv.Decode(c.Parameters)
	if err != nil {
		return nil, err
	}
	out, err := in.Invoke(ctx, &asl.TaskCall{Service: c.Service, API: c.API, Pattern: c.Pattern,
		ExecutionArn: c.ExecutionArn, StateName: c.StateName, Parameters: params})
	var se *asl.StatesError
	switch {
	case errors.As(err, &se):
		data, _ := json.Marshal(struct{ Error, Cause string }{se.Name, se.Cause})
		return &asl.LambdaResponse{Payload: data, FunctionError: "Unhandled"}, nil
	case err != nil:
		return nil, err // not an answer: a replay makes the call again
	}
	data, err := jsonv.Encode(out)
	if err != nil {
		return nil, err
	}
	return &asl.LambdaResponse{Payload: data}, nil
}
