package fault

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestKindAndMessage(t *testing.T) {
	secretCause := errors.New("dial tcp 10.0.0.1:443: password=hunter2")
	tests := []struct {
		name      string
		err       error
		kind      Kind
		msg       string
		field     string
		wantError string
	}{
		{"typed", New(NotFound, "agent %s not found", "a1"), NotFound, "agent a1 not found", "", "agent a1 not found"},
		{"wrapped by fmt", fmt.Errorf("loading: %w", Invalid("name", "name is required")), InvalidInput, "name is required", "name", "loading: name is required"},
		{"wrap keeps cause out of message", Wrap(Transient, secretCause, "the service is unreachable"), Transient, "the service is unreachable", "", "the service is unreachable: " + secretCause.Error()},
		{"untyped is internal and hidden", secretCause, Internal, "internal error", "", secretCause.Error()},
		{"deadline is timeout", fmt.Errorf("call: %w", context.DeadlineExceeded), Timeout, "the operation ran out of time", "", "call: context deadline exceeded"},
		{"typed without message", &Error{Kind: Gone, Err: New(Gone, "expired")}, Gone, "expired", "", "expired"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := KindOf(tc.err); got != tc.kind {
				t.Errorf("KindOf = %s, want %s", got, tc.kind)
			}
			if !Is(tc.err, tc.kind) {
				t.Errorf("Is(%s) = false", tc.kind)
			}
			if got := Message(tc.err); got != tc.msg {
				t.Errorf("Message = %q, want %q", got, tc.msg)
			}
			if got := FieldOf(tc.err); got != tc.field {
				t.Errorf("FieldOf = %q, want %q", got, tc.field)
			}
			if got := tc.err.Error(); got != tc.wantError {
				t.Errorf("Error() = %q, want %q", got, tc.wantError)
			}
		})
	}
	if KindOf(nil) != "" || Is(nil, Internal) {
		t.Error("nil error has a kind")
	}
	if !errors.Is(Wrap(Transient, secretCause, "x"), secretCause) {
		t.Error("Wrap lost its cause for errors.Is")
	}
}
