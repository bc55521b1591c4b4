package asl

import (
	"context"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"strings"
)

// LambdaInvoker calls a Lambda function: local mode runs Go handlers in-process, deployed code is
// never here (Step Functions itself calls Lambda).
type LambdaInvoker interface {
	Invoke(ctx context.Context, req LambdaRequest) (*LambdaResponse, error)
}

// LambdaValueInvoker is a LambdaInvoker whose functions run in this process on JSON values (the
// forms of sinew/internal/jsonv) rather than bytes: the lambda:invoke integration hands the payload
// over as the engine holds it and takes the function's output as it is, with no encoding between.
// The function must not modify the payload, nor the output once returned (the execution history
// renders both later). A Payload given as a string still goes through Invoke, as bytes.
type LambdaValueInvoker interface {
	LambdaInvoker
	InvokeValue(ctx context.Context, req LambdaValueRequest) (LambdaValueResponse, error)
}

// LambdaValueRequest is one invocation of an in-process function.
type LambdaValueRequest struct {
	FunctionName string
	Qualifier    string
	Payload      any
}

// LambdaValueResponse is an in-process function's answer: its output, or with FunctionError set,
// its error object ({"errorMessage", "errorType"}).
type LambdaValueResponse struct {
	Payload         any
	FunctionError   string
	ExecutedVersion string
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
	if v, err := decodeJSON(resp.Payload); err == nil {
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
	var params invokeFields
	var room *lambdaResult
	switch x := call.Parameters.(type) {
	case *taskArgs:
		params, room = x, &x.result
	case map[string]any:
		params = objectFields(x)
	default:
		return nil, newErr(ErrTaskFailed, "The Parameters of a lambda:invoke task must be an object")
	}
	if k, ok := params.unsupported(); ok {
		return nil, newErr(ErrRuntime, fmt.Sprintf("The field '%s' is not supported by the lambda:invoke integration", k))
	}
	fnv, _ := params.field("FunctionName")
	fn, _ := fnv.(string)
	if fn == "" {
		return nil, newErr(ErrTaskFailed, "The field 'FunctionName' is required")
	}
	qv, _ := params.field("Qualifier")
	qual, _ := qv.(string)
	p, hasPayload := params.field("Payload")
	if !hasPayload {
		p = map[string]any{}
	}
	if vi, ok := l.invoker.(LambdaValueInvoker); ok {
		if _, isStr := p.(string); !isStr {
			return l.invokeValue(ctx, vi, fn, qual, p, room)
		}
	}
	payload := []byte("{}")
	if s, isStr := p.(string); isStr {
		payload = []byte(s)
	} else if hasPayload {
		payload = []byte(mustJSON(p))
	}
	resp, err := l.invoker.Invoke(ctx, LambdaRequest{FunctionName: fn, Qualifier: qual, Payload: payload})
	if err != nil {
		return nil, lambdaServiceError(err)
	}
	if resp.FunctionError != "" {
		return nil, functionError(resp, true)
	}
	var out any = string(resp.Payload)
	if v, err := decodeJSON(resp.Payload); err == nil {
		out = v
	} else if len(strings.TrimSpace(string(resp.Payload))) == 0 {
		out = nil
	}
	return invokeResult(resp.ExecutedVersion, out, len(resp.Payload)), nil
}

// invokeFields are a lambda:invoke task's parameters: an object, or taskArgs.
type invokeFields interface {
	field(name string) (any, bool)
	unsupported() (string, bool) // a field the integration does not take, if any
}

type objectFields map[string]any

func (o objectFields) field(name string) (any, bool) {
	v, ok := o[name]
	return v, ok
}

func (o objectFields) unsupported() (string, bool) {
	for k := range o {
		if !lambdaInvokeParams[k] {
			return k, true
		}
	}
	return "", false
}

// invokeValue calls an in-process function with the payload value itself.
// room, when not nil, is where its result goes (allocated with the task attempt).
func (l *lambdaInvoke) invokeValue(ctx context.Context, vi LambdaValueInvoker, fn, qual string, payload any, room *lambdaResult) (any, error) {
	resp, err := vi.InvokeValue(ctx, LambdaValueRequest{FunctionName: fn, Qualifier: qual, Payload: payload})
	if err != nil {
		return nil, lambdaServiceError(err)
	}
	if resp.FunctionError != "" {
		return nil, functionError(&LambdaResponse{Payload: []byte(encodeJSON(resp.Payload)), FunctionError: resp.FunctionError}, true)
	}
	n, ok := jsonSize(resp.Payload, math.MaxInt)
	if !ok {
		n = len(mustJSON(resp.Payload))
	}
	// The response metadata around the payload is some 500 bytes of JSON plus the version thrice.
	if room == nil {
		room = new(lambdaResult)
	}
	room.version, room.payload, room.size, room.reqID = resp.ExecutedVersion, resp.Payload, n, randomUUIDBytes()
	room.bound = n + 1024 + 4*len(resp.ExecutedVersion)
	return room, nil
}

// lambdaResult is invokeResult's value before its maps are built: most tasks read only its Payload
// (ResultSelector on `$.Payload`), and its history event renders it only when read.
type lambdaResult struct {
	version string
	payload any
	size    int
	reqID   [36]byte // drawn once, so every rendering agrees; made a string only when rendered
	bound   int      // an upper bound of the full result's JSON length, for the payload limit check
}

// full is the result AWS records (a new map each time, always the same).
func (l *lambdaResult) full() map[string]any {
	return invokeResultWith(l.version, l.payload, l.size, string(l.reqID[:]))
}

// materialize gives v as a JSON value: a lambdaResult's full result, anything else as it is.
func materialize(v any) any {
	if l, ok := v.(*lambdaResult); ok {
		return l.full()
	}
	return v
}

// invokeResult is the optimised integration's result: the function's output with the Lambda API's
// response metadata around it, as AWS records it. size is the payload's length in bytes.
func invokeResult(version string, out any, size int) map[string]any {
	return invokeResultWith(version, out, size, randomUUID())
}

// invokeResultWith is invokeResult with the request id reqID.
func invokeResultWith(version string, out any, size int, reqID string) map[string]any {
	if version == "" {
		version = "$LATEST"
	}
	length := strconv.Itoa(size)
	return map[string]any{
		"ExecutedVersion": version,
		"Payload":         out,
		"SdkHttpMetadata": map[string]any{
			"AllHttpHeaders": map[string]any{
				"X-Amz-Executed-Version": []any{version},
				"x-amzn-RequestId":       []any{reqID},
				"Content-Length":         []any{length},
				"Content-Type":           contentTypeJSON,
			},
			"HttpHeaders": map[string]any{
				"X-Amz-Executed-Version": version,
				"x-amzn-RequestId":       reqID,
				"Content-Length":         length,
				"Content-Type":           "application/json",
			},
			"HttpStatusCode": int64(200),
		},
		"SdkResponseMetadata": map[string]any{"RequestId": reqID},
		"StatusCode":          int64(200),
	}
}

// contentTypeJSON is shared by every result: values are never modified once made.
var contentTypeJSON = []any{"application/json"}

// randomUUID is a random UUID-shaped id, as Lambda's x-amzn-RequestId. It names something and
// guards nothing, so the runtime's fast random source serves.
func randomUUID() string {
	b := randomUUIDBytes()
	return string(b[:])
}

const hexDigits = "0123456789abcdef"

// randomUUIDBytes is randomUUID's text as an array, which needs no allocation of its own.
func randomUUIDBytes() (b [36]byte) {
	hi, lo := mrand.Uint64(), mrand.Uint64()
	var raw [16]byte
	for i := range 8 {
		raw[i], raw[8+i] = byte(hi>>(8*i)), byte(lo>>(8*i))
	}
	j := 0
	for i, c := range raw {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hexDigits[c>>4], hexDigits[c&0xF]
		j += 2
	}
	return b
}
