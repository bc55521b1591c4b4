package executor

import (
	"errors"
	"fmt"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/secrets"
)

func TestRedactErr(t *testing.T) {
	red := secrets.NewRedactor()
	call, other := red.Scope(), red.Scope()
	defer call.Close()
	defer other.Close()
	call.Add("s3cr3t-value")
	other.Add("another-call-secret") // another call in flight in the same process
	plain := fault.New(fault.Provider, "the provider refused")
	echo := fault.New(fault.Provider, "unknown city another-call-secret")
	tests := []struct {
		name     string
		err      error
		wantMsg  string
		wantKind fault.Kind
		same     bool
	}{
		{"nil stays nil", nil, "", "", true},
		{"no value: the same error", plain, "the provider refused", fault.Provider, true},
		{"another call's value: the same error", echo, "unknown city another-call-secret", fault.Provider, true},
		{"a fault keeps its kind and field", &fault.Error{Kind: fault.InvalidInput, Field: "setup.key", Msg: "bad key s3cr3t-value"},
			"bad key <redacted>", fault.InvalidInput, false},
		{"a value in the cause", fault.Wrap(fault.Transient, errors.New("dial s3cr3t-value: refused"), "send"),
			"send: dial <redacted>: refused", fault.Transient, false},
		{"an untyped error becomes Internal", fmt.Errorf("echo s3cr3t-value"), "echo <redacted>", fault.Internal, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RedactErr(call, tt.err)
			if tt.same {
				if got != tt.err {
					t.Fatalf("RedactErr = %v, want the error unchanged", got)
				}
				return
			}
			if got.Error() != tt.wantMsg || fault.KindOf(got) != tt.wantKind {
				t.Errorf("RedactErr = %q (%s), want %q (%s)", got, fault.KindOf(got), tt.wantMsg, tt.wantKind)
			}
			var in, out *fault.Error
			if errors.As(tt.err, &in) && errors.As(got, &out) && in.Field != out.Field {
				t.Errorf("field %q, want %q", out.Field, in.Field)
			}
		})
	}
}
