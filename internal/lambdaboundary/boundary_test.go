package lambdaboundary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"

	"sinew/internal/fault"
)

func TestError(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantType string
		wantMsg  string
	}{
		{"transient", fault.New(fault.Transient, "the provider is busy; try again"), "Sinew.Transient", "the provider is busy; try again"},
		{"timeout", fault.New(fault.Timeout, "ran out"), "Sinew.Timeout", "ran out"},
		{"invalid with field", fault.Invalid("arguments.to", "to must be an address"), "Sinew.InvalidInput", "to must be an address"},
		{"not found", fault.New(fault.NotFound, "no such tool"), "Sinew.NotFound", "no such tool"},
		{"forbidden", fault.New(fault.Forbidden, "refused"), "Sinew.Forbidden", "refused"},
		{"provider", fault.New(fault.Provider, "the provider refused"), "Sinew.Provider", "the provider refused"},
		{"wrapped by fmt", fmt.Errorf("calling: %w", fault.New(fault.Transient, "busy")), "Sinew.Transient", "busy"},
		{"cause kept out of the message", fault.Wrap(fault.Provider, errors.New("secret=abc"), "the provider refused the key"), "Sinew.Provider", "the provider refused the key"},
		{"untyped", errors.New("dial tcp 10.0.0.1: secret internals"), "Sinew.Internal", "internal error"},
		{"deadline", fmt.Errorf("reading: %w", context.DeadlineExceeded), "Sinew.Timeout", "the operation ran out of time"},
		{"relayed sinew name", fmt.Errorf("invoke: %w", messages.InvokeResponse_Error{Type: "Sinew.Transient", Message: "busy"}), "Sinew.Transient", "busy"},
		{"relayed foreign name", messages.InvokeResponse_Error{Type: "Runtime.ExitError", Message: "exit 2"}, "Sinew.Internal", "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Error(tt.err)
			if got.Type != tt.wantType || got.Message != tt.wantMsg {
				t.Errorf("Error(%v) = {%q %q}, want {%q %q}", tt.err, got.Type, got.Message, tt.wantType, tt.wantMsg)
			}
		})
	}
}

type event struct {
	Kind    string `json:"kind"`
	Untyped bool   `json:"untyped"`
	Panic   bool   `json:"panic"`
	Echo    string `json:"echo"`
}

type answer struct {
	Echo string `json:"echo"`
}

// handle is the handler every test runs, in process and in the child runtime process.
func handle(_ context.Context, e event) (answer, error) {
	switch {
	case e.Panic:
		panic("boom with internals")
	case e.Untyped:
		return answer{}, errors.New("untyped failure with internals")
	case e.Kind != "":
		return answer{}, fmt.Errorf("layer: %w", fault.New(fault.Kind(e.Kind), "failed as %s", e.Kind))
	}
	return answer{Echo: e.Echo}, nil
}

var kinds = []fault.Kind{fault.Transient, fault.Timeout, fault.InvalidInput, fault.NotFound, fault.Forbidden,
	fault.Provider, fault.Conflict, fault.Gone, fault.TooLarge, fault.Unprocessable, fault.Unauthorized, fault.Internal}

// TestHandlerInvoke runs the wrapped handler through aws-lambda-go's own reflection handler, and
// through Invoke, local mode's in-process path.
func TestHandlerInvoke(t *testing.T) {
	h := lambda.NewHandler(Wrap(handle))
	for _, k := range kinds {
		payload := fmt.Appendf(nil, `{"kind":%q}`, k)
		_, err := h.Invoke(context.Background(), payload)
		var ire messages.InvokeResponse_Error
		// The runtime only keeps the name of an unwrapped value: check the exact dynamic type.
		ire, ok := err.(messages.InvokeResponse_Error)
		if !ok || ire.Type != string(k) {
			t.Errorf("%s: lambda handler error = %#v, want an InvokeResponse_Error value of type %s", k, err, k)
		}
		_, ierr := Invoke(context.Background(), Handler(handle), payload)
		if ierr == nil || ierr.Type != string(k) || ierr.Message != "failed as "+string(k) {
			t.Errorf("%s: Invoke error = %#v", k, ierr)
		}
	}

	out, ierr := Invoke(context.Background(), Handler(handle), []byte(`{"echo":"hi"}`))
	if ierr != nil || string(out) != `{"echo":"hi"}` {
		t.Errorf("success: %s %v", out, ierr)
	}
	_, ierr = Invoke(context.Background(), Handler(handle), []byte(`{"untyped":true}`))
	if ierr == nil || ierr.Type != "Sinew.Internal" || ierr.Message != "internal error" {
		t.Errorf("untyped: %#v", ierr)
	}
	_, ierr = Invoke(context.Background(), Handler(handle), []byte(`{"panic":true}`))
	if ierr == nil || ierr.Type != "Sinew.Internal" || !ierr.ShouldExit || ierr.Message != "internal error" {
		t.Errorf("panic: %#v", ierr)
	}
	// An event the handler cannot decode is an InvalidInput naming what is wrong (DecodeEvent).
	for _, bad := range []struct{ payload, msg string }{
		{`{"echo":3}`, "echo must be a string, not number"},
		{`{"echo":"x","extra":1}`, `the event has an unknown field "extra"`},
		{`{"echo":`, "the event ends in the middle of its JSON value"},
		{`{"echo" 1}`, "the event is not valid JSON"},
		{``, "the event is empty"},
		{`{} {}`, "the event has data after its JSON value"},
		{`[1]`, "the event must be an object, not array"},
	} {
		_, ierr = Invoke(context.Background(), Handler(handle), []byte(bad.payload))
		if ierr == nil || ierr.Type != "Sinew.InvalidInput" || !strings.Contains(ierr.Message, bad.msg) {
			t.Errorf("bad event %q: %#v, want Sinew.InvalidInput saying %q", bad.payload, ierr, bad.msg)
		}
	}
	big := append(append([]byte(`{"echo":"`), bytes.Repeat([]byte("x"), MaxEvent)...), `"}`...)
	if _, ierr = Invoke(context.Background(), Handler(handle), big); ierr == nil || ierr.Type != "Sinew.TooLarge" {
		t.Errorf("an event over 6 MB: %#v, want Sinew.TooLarge", ierr)
	}
	// Through lambda.NewHandler the runtime's own decoder names it after its Go type, as in AWS.
	_, ierr = Invoke(context.Background(), lambda.NewHandler(Wrap(handle)), []byte(`{"echo":3}`))
	if ierr == nil || ierr.Type != "UnmarshalTypeError" {
		t.Errorf("bad event through lambda.NewHandler: %#v", ierr)
	}
	// A raw handler outside Wrap is named by its Go type, as the runtime does.
	raw := lambda.NewHandler(func(context.Context, event) (answer, error) { return answer{}, &json.UnsupportedValueError{Str: "x"} })
	_, ierr = Invoke(context.Background(), raw, []byte(`{}`))
	if ierr == nil || ierr.Type != "UnsupportedValueError" {
		t.Errorf("unwrapped handler: %#v", ierr)
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	e := messages.InvokeResponse_Error{Type: "Sinew.Gone", Message: `the call "x" expired`}
	b := Payload(e)
	if string(b) != `{"errorMessage":"the call \"x\" expired","errorType":"Sinew.Gone"}` {
		t.Errorf("Payload = %s", b)
	}
	got, ok := ParsePayload(b)
	if !ok || got.Type != e.Type || got.Message != e.Message {
		t.Errorf("ParsePayload = %#v %v", got, ok)
	}
	for _, bad := range []string{`{"echo":"x"}`, `[1]`, `nope`, `{"errorType":3}`} {
		if _, ok := ParsePayload([]byte(bad)); ok {
			t.Errorf("ParsePayload(%s) ok, want not an error payload", bad)
		}
	}
}
