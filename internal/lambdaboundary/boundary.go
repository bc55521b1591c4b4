// Package lambdaboundary is where a Lambda handler's errors get their fixed names (package fault).
// aws-lambda-go names an error after its Go type unless the handler returns a
// messages.InvokeResponse_Error value (not a pointer, not wrapped), so every Lambda's constructor
// (package handler) wraps its handler with Wrap, and local mode's in-process invoker goes through
// Invoke, which names errors the way the Lambda runtime does: the state machines' Retry and Catch
// see the same names in both worlds.
package lambdaboundary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Error converts err into the value the Lambda runtime reports as is: Type is err's fault Kind
// (Sinew.Transient, ...; an untyped error is Sinew.Internal) and Message is the caller-safe
// fault.Message. An InvokeResponse_Error already named Sinew.* (one Lambda relaying another's
// failure) keeps its name and message.
func Error(err error) messages.InvokeResponse_Error {
	var ire messages.InvokeResponse_Error
	if errors.As(err, &ire) && strings.HasPrefix(ire.Type, "Sinew.") {
		return messages.InvokeResponse_Error{Type: ire.Type, Message: ire.Message}
	}
	return messages.InvokeResponse_Error{Type: string(fault.KindOf(err)), Message: fault.Message(err)}
}

// Wrap turns a handler into one whose errors are Error values and whose panics are Sinew.Internal
// errors that also end the process (ShouldExit), as the runtime does for a panic, since a panicking
// handler may have left its state broken. The full error, which may carry internals the caller must
// not see, goes to the log.
func Wrap[In, Out any](h func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				slog.ErrorContext(ctx, "handler panicked", "panic", fmt.Sprint(p), "request_id", requestID(ctx), "stack", string(debug.Stack()))
				var zero Out
				out = zero
				err = messages.InvokeResponse_Error{Type: string(fault.Internal), Message: fault.Message(errors.New("panic")), ShouldExit: true}
			}
		}()
		out, err = h(ctx, in)
		if err == nil {
			return out, nil
		}
		ire := Error(err)
		level := slog.LevelWarn
		var routing interface{ Routing() bool }
		if ire.Type == string(fault.Internal) {
			level = slog.LevelError
		} else if errors.As(err, &routing) && routing.Routing() {
			// Not a failure: the way a Task's caught error sends the execution on to another state.
			level = slog.LevelDebug
		}
		slog.Log(ctx, level, "handler failed", "error_type", ire.Type, "message", ire.Message, "error", err.Error(), "request_id", requestID(ctx))
		var zero Out
		return zero, ire
	}
}

// Handler is the lambda.Handler of h through Wrap: what local mode's in-process invoker runs, so it
// decodes the event and encodes the answer exactly as the deployed function does. The event is
// decoded by DecodeEvent, not by the runtime, so an event of the wrong shape is a
// Sinew.InvalidInput naming what is wrong rather than an error named after a Go type.
func Handler[In, Out any](h func(context.Context, In) (Out, error)) lambda.Handler {
	return strictHandler[In, Out]{Wrap(h)}
}

type strictHandler[In, Out any] struct {
	h func(context.Context, In) (Out, error) // already through Wrap
}

// MaxEvent is Lambda's limit on a synchronous invocation's event: 6 MB.
const MaxEvent = 6 << 20

// awsEvents is the package of the events AWS itself makes (API Gateway's, EventBridge's): AWS adds
// fields to them over time, so their unknown fields are ignored rather than refused.
const awsEvents = "github.com/aws/aws-lambda-go/events"

func (s strictHandler[In, Out]) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if len(payload) > MaxEvent {
		// Lambda refuses such an event before any handler runs; in-process invokers must too.
		err := fault.New(fault.TooLarge, "the event is %d bytes; a Lambda function accepts at most %d (6 MB)", len(payload), MaxEvent)
		slog.WarnContext(ctx, "event refused", "error_type", string(fault.TooLarge), "bytes", len(payload), "request_id", requestID(ctx))
		return nil, Error(err)
	}
	var in In
	decode := DecodeEvent
	if reflect.TypeFor[In]().PkgPath() == awsEvents {
		decode = decodeAWSEvent
	}
	if err := decode(payload, &in); err != nil {
		ire := Error(err)
		slog.WarnContext(ctx, "event refused", "error_type", ire.Type, "message", ire.Message, "request_id", requestID(ctx))
		return nil, ire
	}
	out, err := s.h(ctx, in)
	if err != nil {
		return nil, err
	}
	// As the runtime encodes an answer: HTML characters unescaped, no trailing newline.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		slog.ErrorContext(ctx, "answer does not encode", "error", err.Error(), "request_id", requestID(ctx))
		return nil, Error(fault.Wrap(fault.Internal, err, "internal error"))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// DecodeEvent decodes a Lambda event into v strictly (jsonv.Strict): an empty event, malformed
// JSON, a value of the wrong type, an unknown field and data after the value are InvalidInput
// errors naming the field.
func DecodeEvent(payload []byte, v any) error { return eventJSON.Decode(payload, v) }

// decodeAWSEvent is DecodeEvent for the events AWS makes, whose unknown fields are ignored.
func decodeAWSEvent(payload []byte, v any) error {
	s := eventJSON
	s.AllowUnknown = true
	return s.Decode(payload, v)
}

var eventJSON = jsonv.Strict{Subject: "the event", Field: "event", UTF8: "JSON must be UTF-8",
	Unknown: "the event has an unknown field %q"}

// Invoke runs h in process as the Lambda runtime would: the answer's bytes, or the error the runtime
// would report, named by the runtime's own rule (an InvokeResponse_Error value as is, any other error
// or panic after its Go type, as in AWS: a handler made by Handler names an undecodable event
// Sinew.InvalidInput, one made by lambda.NewHandler after the decoder's error type). The context
// gets a Lambda context with a fresh request id unless it already has one.
func Invoke(ctx context.Context, h lambda.Handler, payload []byte) (out []byte, ierr *messages.InvokeResponse_Error) {
	if _, ok := lambdacontext.FromContext(ctx); !ok {
		ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: uuid.NewString()})
	}
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(messages.InvokeResponse_Error); ok {
				ierr = &e
				return
			}
			out, ierr = nil, &messages.InvokeResponse_Error{Type: typeName(p), Message: fmt.Sprint(p), ShouldExit: true}
		}
	}()
	out, err := h.Invoke(ctx, payload)
	if err != nil {
		if e, ok := err.(messages.InvokeResponse_Error); ok {
			return nil, &e
		}
		return nil, &messages.InvokeResponse_Error{Type: typeName(err), Message: err.Error()}
	}
	return out, nil
}

// typeName is the runtime's rule for naming an error it was not given a name for.
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return "nil"
	}
	if t.Kind() == reflect.Pointer {
		return t.Elem().Name()
	}
	return t.Name()
}

// Payload is a failed invocation's answer body as the Lambda Invoke API returns it:
// {"errorMessage": ..., "errorType": ...}. Step Functions takes the Task's error name from errorType.
func Payload(e messages.InvokeResponse_Error) []byte {
	b, err := json.Marshal(struct {
		Message string `json:"errorMessage"`
		Type    string `json:"errorType"`
	}{e.Message, e.Type})
	if err != nil { // two strings always marshal
		panic(err)
	}
	return b
}

// ParsePayload reads a failed invocation's answer body back; ok is false when b is not one.
func ParsePayload(b []byte) (e messages.InvokeResponse_Error, ok bool) {
	var p struct {
		Message *string `json:"errorMessage"`
		Type    *string `json:"errorType"`
	}
	if json.Unmarshal(b, &p) != nil || p.Type == nil {
		return e, false
	}
	e.Type = *p.Type
	if p.Message != nil {
		e.Message = *p.Message
	}
	return e, true
}

func requestID(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		return lc.AwsRequestID
	}
	return ""
}
