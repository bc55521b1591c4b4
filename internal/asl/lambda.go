package asl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"sinew/internal/jsonv"
)

// LambdaInvoker calls a Lambda function: local mode runs Go handlers in-process, deployed code is
// never here (Step Functions itself calls Lambda).
type LambdaInvoker interface {
	Invoke(ctx context.Context, req LambdaRequest) (*LambdaResponse, error)
}

// LambdaRequest is one invocation.
type LambdaRequest struct {
	FunctionName string // name or ARN, possibly with a qualifier
	Qualifier    string
	Payload      []byte
}

// LambdaResponse is the function's answer: either a payload, or a function error whose payload is
// {"errorMessage", "errorType", ...} (what Lambda returns with X-Amz-Function-Error).
type LambdaResponse struct {
	Payload         []byte
	FunctionError   string // "" on success; "Unhandled" or the error type otherwise
	ExecutedVersion string
}

// FunctionErrorResponse is the answer of a function that failed with errorType and message, in
// the payload shape Lambda runtimes write ({"errorMessage", "errorType"}).
func FunctionErrorResponse(errorType, message string) *LambdaResponse {
	return &LambdaResponse{FunctionError: "Unhandled",
		Payload: []byte(encodeJSON(map[string]any{"errorMessage": message, "errorType": errorType}))}
}

// LambdaServiceError is a failure of the Lambda API itself (not of the function), named
// "Lambda.<Code>" in the state machine, e.g. Lambda.ResourceNotFoundException.
type LambdaServiceError struct {
	Code    string
	Message string
}

func (e *LambdaServiceError) Error() string { return e.Code + ": " + e.Message }

// functionError turns a function error payload into the States error AWS reports: the name is the
// payload's errorType (Lambda.Unknown without one) and the cause the payload as JSON text.
func functionError(resp *LambdaResponse, compact bool) *StatesError {
	name := "Lambda.Unknown"
	cause := string(resp.Payload)
	if v, err := jsonv.Decode(resp.Payload); err == nil {
		if m, ok := v.(map[string]any); ok {
			if t, ok := m["errorType"].(string); ok && t != "" {
				name = t
			}
		}
		if compact {
			cause = mustJSON(v)
		}
	}
	return newErr(name, cause)
}

func lambdaServiceError(err error) *StatesError {
	var se *LambdaServiceError
	if errors.As(err, &se) {
		return newErr("Lambda."+se.Code, se.Message)
	}
	var ste *StatesError
	if errors.As(err, &ste) {
		return ste
	}
	return newErr("Lambda.AWSLambdaException", err.Error())
}

// lambdaInvoke is the optimised arn:aws:states:::lambda:invoke integration.
type lambdaInvoke struct {
	invoker LambdaInvoker
}

var lambdaInvokeParams = map[string]bool{"FunctionName": true, "Payload": true, "InvocationType": true, "Qualifier": true, "ClientContext": true, "LogType": true}

func (l *lambdaInvoke) Invoke(ctx context.Context, call *TaskCall) (any, error) {
	params, ok := call.Parameters.(map[string]any)
	if !ok {
		return nil, newErr(ErrTaskFailed, "The Parameters of a lambda:invoke task must be an object")
	}
	for k := range params {
		if !lambdaInvokeParams[k] {
			return nil, newErr(ErrRuntime, fmt.Sprintf("The field '%s' is not supported by the lambda:invoke integration", k))
		}
	}
	fn, _ := params["FunctionName"].(string)
	if fn == "" {
		return nil, newErr(ErrTaskFailed, "The field 'FunctionName' is required")
	}
	qual, _ := params["Qualifier"].(string)
	payload := []byte("{}")
	if p, ok := params["Payload"]; ok {
		if s, isStr := p.(string); isStr {
			payload = []byte(s)
		} else {
			payload = []byte(mustJSON(p))
		}
	}
	resp, err := l.invoker.Invoke(ctx, LambdaRequest{FunctionName: fn, Qualifier: qual, Payload: payload})
	if err != nil {
		return nil, lambdaServiceError(err)
	}
	if resp.FunctionError != "" {
		return nil, functionError(resp, true)
	}
	version := resp.ExecutedVersion
	if version == "" {
		version = "$LATEST"
	}
	var out any = string(resp.Payload)
	if v, err := jsonv.Decode(resp.Payload); err == nil {
		out = v
	} else if len(strings.TrimSpace(string(resp.Payload))) == 0 {
		out = nil
	}
	reqID := requestID()
	return map[string]any{
		"ExecutedVersion": version,
		"Payload":         out,
		"SdkHttpMetadata": map[string]any{
			"AllHttpHeaders": map[string]any{
				"X-Amz-Executed-Version": []any{version},
				"x-amzn-RequestId":       []any{reqID},
				"Content-Length":         []any{fmt.Sprint(len(resp.Payload))},
				"Content-Type":           []any{"application/json"},
			},
			"HttpHeaders": map[string]any{
				"X-Amz-Executed-Version": version,
				"x-amzn-RequestId":       reqID,
				"Content-Length":         fmt.Sprint(len(resp.Payload)),
				"Content-Type":           "application/json",
			},
			"HttpStatusCode": int64(200),
		},
		"SdkResponseMetadata": map[string]any{"RequestId": reqID},
		"StatusCode":          int64(200),
	}, nil
}

func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
