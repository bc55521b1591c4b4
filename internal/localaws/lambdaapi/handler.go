package lambdaapi

import (
	"context"
	"reflect"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
)

// FromHandler runs an aws-lambda-go handler (lambda.NewHandler(fn), what a function's main passes to
// lambda.Start) in-process, naming its errors exactly as aws-lambda-go names them when deployed: a
// messages.InvokeResponse_Error value keeps its type (how sinew's handler boundary reports the
// fixed names of package fault), any other error is named after its Go type.
func FromHandler(h lambda.Handler) Invoker {
	return InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
		out, err := h.Invoke(ctx, payload)
		if err == nil {
			return out, nil, nil
		}
		return nil, functionError(err), nil
	})
}

// functionError mirrors aws-lambda-go's lambdaErrorResponse.
func functionError(err error) *FunctionError {
	if ive, ok := err.(messages.InvokeResponse_Error); ok { //nolint:errorlint // aws-lambda-go matches the value itself, unwrapped
		return &FunctionError{Type: ive.Type, Message: ive.Message}
	}
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return &FunctionError{Type: t.Name(), Message: err.Error()}
}
