package workflow_test

import (
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

func TestErrorOf(t *testing.T) {
	lambdaCause := `{"errorMessage":"the provider refused the key","errorType":"Sinew.Provider"}`
	tests := []struct {
		name    string
		typ     tool.Type
		in      workflow.StatesError
		wantTyp string
		wantMsg string
	}{
		{"a Lambda's typed error keeps its name", tool.TypeIntegration, workflow.StatesError{Error: "Sinew.Provider", Cause: lambdaCause}, "Sinew.Provider", "the provider refused the key"},
		{"the function Lambda's own failure is not the client's", tool.TypeFunction, workflow.StatesError{Error: "Sinew.Conflict", Cause: `{"errorMessage":"execution x has ended","errorType":"Sinew.Conflict"}`}, "Sinew.Conflict", "execution x has ended"},
		{"a client's failure is prefixed", tool.TypeFunction, workflow.StatesError{Error: "Declined", Cause: "no"}, "Client.Declined", "no"},
		{"the prefix is added once", tool.TypeFunction, workflow.StatesError{Error: "Client.Declined", Cause: "no"}, "Client.Declined", "no"},
		{"a client's failure without a name", tool.TypeFunction, workflow.StatesError{}, "Client.Failure", ""},
		{"a client may use a Sinew-looking name", tool.TypeFunction, workflow.StatesError{Error: "Sinew.Provider", Cause: "plain text"}, "Client.Sinew.Provider", "plain text"},
		{"the wait ran out", tool.TypeFunction, workflow.StatesError{Error: "States.Timeout"}, "Sinew.Timeout", "the client did not answer in time: the call expired"},
		{"a missed heartbeat", tool.TypeFunction, workflow.StatesError{Error: "States.HeartbeatTimeout"}, "Sinew.Timeout", "the client stopped sending heartbeats: the call expired"},
		{"a Lambda service error on the function path", tool.TypeFunction, workflow.StatesError{Error: "Lambda.ServiceException", Cause: "down"}, "Lambda.ServiceException", "down"},
		{"a States error elsewhere", tool.TypeAPICall, workflow.StatesError{Error: "States.TaskFailed", Cause: "x"}, "States.TaskFailed", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, msg := workflow.ErrorOf(tt.typ, tt.in)
			if typ != tt.wantTyp || msg != tt.wantMsg {
				t.Errorf("ErrorOf = %q %q, want %q %q", typ, msg, tt.wantTyp, tt.wantMsg)
			}
		})
	}
}

func TestIDs(t *testing.T) {
	a, b := workflow.CallIDFor("dev", "exec-1"), workflow.CallIDFor("dev", "exec-2")
	if !tool.ValidCallID(a) || a == b || a != workflow.CallIDFor("dev", "exec-1") || a == workflow.CallIDFor("dev2", "exec-1") {
		t.Errorf("CallIDFor: %s %s", a, b)
	}
	n := workflow.IdempotentName("dev", "POST /tool-calls", "k")
	if !strings.HasPrefix(n, "idem-") || len(n) > 80 || n == workflow.IdempotentName("dev2", "POST /tool-calls", "k") ||
		n == workflow.IdempotentName("dev", "POST /tasks/{id}/executions", "k") || n != workflow.IdempotentName("dev", "POST /tool-calls", "k") {
		t.Errorf("IdempotentName: %s", n)
	}
}

func TestWaitOf(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	tests := []struct {
		name    string
		fn      *tool.FunctionDef
		timeout int64
		hb      *int64
		field   string
	}{
		{"default 31 days", &tool.FunctionDef{}, tool.DefaultFunctionTimeoutSeconds, nil, ""},
		{"set", &tool.FunctionDef{TimeoutSeconds: i(60), HeartbeatSeconds: i(10)}, 60, i(10), ""},
		{"heartbeat not under the timeout", &tool.FunctionDef{TimeoutSeconds: i(60), HeartbeatSeconds: i(60)}, 0, nil, "function.heartbeat_seconds"},
		{"over a year", &tool.FunctionDef{TimeoutSeconds: i(tool.MaxFunctionTimeoutSeconds + 1)}, 0, nil, "function.timeout_seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := workflow.WaitOf(&tool.Tool{Name: "f", Type: tool.TypeFunction, Function: tt.fn})
			if tt.field != "" {
				if err == nil || fieldOf(err) != tt.field {
					t.Errorf("err = %v, want one naming %s", err, tt.field)
				}
				return
			}
			if err != nil || *w.TimeoutSeconds != tt.timeout || (tt.hb == nil) != (w.HeartbeatSeconds == nil) || (tt.hb != nil && *tt.hb != *w.HeartbeatSeconds) {
				t.Errorf("WaitOf = %+v, %v", w, err)
			}
		})
	}
}

func fieldOf(err error) string { return fault.FieldOf(err) }
