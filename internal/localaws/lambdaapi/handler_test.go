package lambdaapi

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
)

type customError struct{}

func (*customError) Error() string { return "custom" }

func TestFromHandler(t *testing.T) {
	type in struct {
		Mode string `json:"mode"`
	}
	wrapped := fmt.Errorf("x: %w", messages.InvokeResponse_Error{Type: "Sinew.Transient", Message: "try again"})
	inv := FromHandler(lambda.NewHandler(func(ctx context.Context, req in) (map[string]string, error) {
		switch req.Mode {
		case "typed":
			return nil, messages.InvokeResponse_Error{Type: "Sinew.Transient", Message: "try again"}
		case "wrapped":
			// Wrapping hides the value from aws-lambda-go, so it is named after its Go type.
			return nil, wrapped
		case "pointer":
			return nil, &customError{}
		case "plain":
			return nil, errors.New("plain")
		}
		return map[string]string{"mode": req.Mode}, nil
	}))
	tests := []struct {
		mode, out string
		ferr      *FunctionError
	}{
		{"ok", `{"mode":"ok"}`, nil},
		{"typed", "", &FunctionError{Type: "Sinew.Transient", Message: "try again"}},
		{"wrapped", "", &FunctionError{Type: "wrapError", Message: wrapped.Error()}},
		{"pointer", "", &FunctionError{Type: "customError", Message: "custom"}},
		{"plain", "", &FunctionError{Type: "errorString", Message: "plain"}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			out, ferr, err := inv.Invoke(context.Background(), []byte(`{"mode":"`+tc.mode+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.out {
				t.Errorf("out = %s, want %s", out, tc.out)
			}
			if (ferr == nil) != (tc.ferr == nil) || (ferr != nil && *ferr != *tc.ferr) {
				t.Errorf("function error = %+v, want %+v", ferr, tc.ferr)
			}
		})
	}
}
