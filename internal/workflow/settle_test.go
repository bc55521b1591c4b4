package workflow_test

import (
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

func fieldOf(err error) string { return fault.FieldOf(err) }
