package dispatch_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"

	"sinew/internal/dispatch"
	"sinew/internal/fault"
	"sinew/internal/lambdaboundary"
	"sinew/internal/tool"
)

// handler fails transiently until calls reaches n.
func flaky(n int32, calls *atomic.Int32, kind fault.Kind) lambda.Handler {
	return lambdaboundary.Handler(func(_ context.Context, in map[string]any) (map[string]any, error) {
		if calls.Add(1) < n {
			return nil, fault.New(kind, "not yet")
		}
		return map[string]any{"output": map[string]any{"ok": true}}, nil
	})
}

type localInvoker map[string]lambda.Handler

func (l localInvoker) Invoke(ctx context.Context, fn string, payload []byte) ([]byte, *messages.InvokeResponse_Error, error) {
	out, ierr := lambdaboundary.Invoke(ctx, l[fn], payload)
	return out, ierr, nil
}

func TestDispatcher(t *testing.T) {
	call := tool.NewCall(&tool.Tool{Name: "echo", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "dummy"}}, tool.NewCallID(), nil)
	fcall := tool.NewCall(&tool.Tool{Name: "ask", Type: tool.TypeFunction, Function: &tool.FunctionDef{}}, tool.NewCallID(), nil)
	tests := []struct {
		name      string
		call      tool.Call
		failUntil int32
		kind      fault.Kind
		wantCalls int32
		wantErr   string
	}{
		{"transient retried", call, 3, fault.Transient, 3, ""},
		{"transient past the attempts", call, 5, fault.Transient, 3, "Sinew.Transient"},
		{"permanent not retried", call, 5, fault.Provider, 1, "Sinew.Provider"},
		{"function calls go back to the caller", fcall, 1, "", 0, "Sinew.InvalidInput"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			d := &dispatch.Dispatcher{Invoker: localInvoker{"sinew-integration": flaky(tt.failUntil, &calls, tt.kind)},
				Functions: map[tool.Type]string{tool.TypeIntegration: "sinew-integration"}, Backoff: time.Millisecond}
			res := d.Dispatch(context.Background(), map[string]any{"call": tt.call}, &tt.call)
			if calls.Load() != tt.wantCalls {
				t.Errorf("invocations = %d, want %d", calls.Load(), tt.wantCalls)
			}
			if tt.wantErr == "" && (res.Error != nil || res.Output == nil) {
				t.Errorf("result = %+v, want output", res)
			}
			if tt.wantErr != "" && (res.Error == nil || res.Error.Type != tt.wantErr) {
				t.Errorf("result = %+v, want error %s", res, tt.wantErr)
			}
		})
	}
}
