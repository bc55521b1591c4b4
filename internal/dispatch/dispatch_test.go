package dispatch_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"

	"sinew/internal/dispatch"
	"sinew/internal/executor"
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
			res := d.Dispatch(context.Background(), executor.Envelope{Call: tt.call}, &tt.call)
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

// refusing answers a call the way an executor answers a tool's failure to a caller that reads
// error results (error_result), and fails the invocation otherwise, as it does for agent_loop's
// earlier definition.
func refusing(sawFlag *atomic.Bool) lambda.Handler {
	return lambdaboundary.Handler(func(_ context.Context, in map[string]any) (map[string]any, error) {
		if in["error_result"] != true {
			return nil, fault.New(fault.Provider, "the service refused")
		}
		sawFlag.Store(true)
		c := in["call"].(map[string]any)
		return map[string]any{"id": c["id"], "type": c["type"], "name": "echo",
			"error": map[string]any{"type": "Sinew.Provider", "message": "the service refused"}}, nil
	})
}

// TestDispatcherReadsErrorResults: the chat path asks the executors for error results and gives
// the model the tool's failure the executor answered, its invocation a success.
func TestDispatcherReadsErrorResults(t *testing.T) {
	call := tool.NewCall(&tool.Tool{Name: "echo", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "dummy"}}, tool.NewCallID(), nil)
	var saw atomic.Bool
	d := &dispatch.Dispatcher{Invoker: localInvoker{"sinew-integration": refusing(&saw)},
		Functions: map[tool.Type]string{tool.TypeIntegration: "sinew-integration"}, Backoff: time.Millisecond}
	res := d.Dispatch(context.Background(), executor.Envelope{Call: call}, &call)
	if !saw.Load() {
		t.Errorf("the envelope did not ask for error results")
	}
	if res.Error == nil || res.Error.Type != "Sinew.Provider" || res.Error.Message != "the service refused" || res.ID != call.ID {
		t.Errorf("result %+v, want the tool's error", res)
	}
}
