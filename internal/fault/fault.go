// Package fault is sinew's typed error: a Kind that decides retries and HTTP statuses, the field at
// fault when there is one, and a message a person can act on. Domain code returns *Error (wrapping the
// cause); the Lambda and HTTP boundaries turn the Kind into a fixed error name or a status code.
//
// The names are a contract with the state machines, whose Retry and Catch match on them, and with
// every client that reads an error result. Lambda names an error after its Go type unless the
// handler returns a messages.InvokeResponse_Error value, so one function at the boundary
// (package lambdaboundary) converts every error, and local mode's in-process invoker names errors
// the same way. Only Sinew.Transient and Lambda's own service errors are retried: in the state
// machines by Retry (IntervalSeconds 2, BackoffRate 2, MaxAttempts 6, MaxDelaySeconds 60, FULL
// jitter), on the chat path by the dispatcher (3 attempts within the request's time budget).
// Sinew.Timeout is not retried: the caller chose the bound. Providers do not retry in loops of
// their own. An error a client reports through SendTaskFailure becomes Client.<its error>, the
// prefix added once by the settle step. Over HTTP each Kind has its status (httpapi.StatusOf) and
// the body {"error": {"type", "message", "field"}}; a 500 is only ever a fault of sinew's own.
package fault

import (
	"context"
	"errors"
	"fmt"
)

// Kind names a class of failure. The values are the fixed Lambda error names of the package doc, which
// the state machines' Retry and Catch match on, so they must never change.
type Kind string

const (
	Transient     Kind = "Sinew.Transient"     // retry: connection refused/reset, DNS, 408/429/5xx, throttling
	Timeout       Kind = "Sinew.Timeout"       // the call's own time bound ran out: not retried
	InvalidInput  Kind = "Sinew.InvalidInput"  // the request or arguments break a rule
	NotFound      Kind = "Sinew.NotFound"      // unknown, or not the caller's (never told apart)
	Forbidden     Kind = "Sinew.Forbidden"     // refused by policy, e.g. an api_call target
	Provider      Kind = "Sinew.Provider"      // a provider's permanent refusal
	Conflict      Kind = "Sinew.Conflict"      // duplicate name, call already answered
	Gone          Kind = "Sinew.Gone"          // the call's token expired
	TooLarge      Kind = "Sinew.TooLarge"      // a body or value over its limit
	Unprocessable Kind = "Sinew.Unprocessable" // a valid request the current state refuses
	Internal      Kind = "Sinew.Internal"      // a fault of sinew's own
	Unauthorized  Kind = "Sinew.Unauthorized"  // no credentials, or a bad or expired token (HTTP 401)
)

// Error is a typed failure. Msg is safe to show to the caller: it never carries a secret.
type Error struct {
	Kind  Kind
	Field string // the field at fault, when one is
	Msg   string
	Err   error // the cause, for logs and errors.Is; never shown to callers as is
}

func (e *Error) Error() string {
	if e.Err != nil && e.Msg == "" {
		return e.Err.Error()
	}
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// New makes an error of kind with a formatted message.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Wrap makes an error of kind with a message, keeping err as its cause.
func Wrap(kind Kind, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...), Err: err}
}

// Invalid is an InvalidInput error naming the field at fault.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Kind: InvalidInput, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// KindOf gives the kind of err: the first *Error in its chain, Timeout for a context deadline,
// Internal otherwise (an untyped error is a fault of sinew's own until proven otherwise).
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Kind
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Timeout
	}
	return Internal
}

// Is reports whether err is of kind.
func Is(err error, kind Kind) bool { return err != nil && KindOf(err) == kind }

// FieldOf gives the field at fault named by the first *Error in err's chain, or "".
func FieldOf(err error) string {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// Message gives the caller-safe message of err: the outermost *Error's message for typed errors, and
// a generic one for untyped errors, whose text may carry internals.
func Message(err error) string {
	var fe *Error
	if errors.As(err, &fe) {
		if fe.Msg != "" {
			return fe.Msg
		}
		if fe.Err != nil {
			return Message(fe.Err)
		}
		return string(fe.Kind)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "the operation ran out of time"
	}
	return "internal error"
}
