package asl

import (
	"fmt"

	"sinew/internal/jsonv"
)

// The error names of the States language (concepts-error-handling) that the engine raises itself.
const (
	ErrAll                     = "States.ALL"
	ErrBranchFailed            = "States.BranchFailed"
	ErrDataLimitExceeded       = "States.DataLimitExceeded"
	ErrHeartbeatTimeout        = "States.HeartbeatTimeout"
	ErrIntrinsicFailure        = "States.IntrinsicFailure"
	ErrNoChoiceMatched         = "States.NoChoiceMatched"
	ErrParameterPathFailure    = "States.ParameterPathFailure"
	ErrResultPathMatchFailure  = "States.ResultPathMatchFailure"
	ErrRuntime                 = "States.Runtime"
	ErrTaskFailed              = "States.TaskFailed"
	ErrTimeout                 = "States.Timeout"
	ErrExceedToleratedFailures = "States.ExceedToleratedFailureThreshold"
	ErrQueryEvaluation         = "States.QueryEvaluationError"
)

// MaxPayloadBytes is Step Functions' limit on a state's input or output, in UTF-8 bytes.
const MaxPayloadBytes = 262144

// MaxHistoryEvents is the limit on events in one execution's history.
const MaxHistoryEvents = 25000

// StatesError is a failure inside an execution: the Error name and Cause that Retry and Catch match
// and that end the execution when nothing catches them.
type StatesError struct {
	Name  string
	Cause string
	// hasCause tells an empty Cause apart from none (Fail states without Cause, SendTaskFailure
	// without one): AWS omits the field then.
	hasCause bool
	hasName  bool
	// heartbeat marks a States.Timeout that came from a missed heartbeat.
	heartbeat bool
	// query marks a JSONata evaluation failure, reported with an EvaluationFailed event.
	query *queryLocated
}

func (e *StatesError) Error() string {
	if e.Cause == "" {
		return e.Name
	}
	return e.Name + ": " + e.Cause
}

func newErr(name, cause string) *StatesError {
	return &StatesError{Name: name, Cause: cause, hasName: true, hasCause: true}
}

func errf(name, format string, args ...any) *StatesError {
	return newErr(name, fmt.Sprintf(format, args...))
}

// runtimeErr is a States.Runtime failure with AWS's cause prefix naming the state and the id of the
// event that entered it.
func runtimeErr(state string, enteredID int64, format string, args ...any) *StatesError {
	return newErr(ErrRuntime, fmt.Sprintf("An error occurred while executing the state '%s' (entered at the event id #%d). ", state, enteredID)+fmt.Sprintf(format, args...))
}

// errorOutput is the value a catcher places into the state's input: {"Error", "Cause"}, null where
// the failure gave none (recorded: SendTaskFailure without error or cause).
func (e *StatesError) errorOutput() map[string]any {
	m := map[string]any{"Error": nil, "Cause": nil}
	if e.hasName || e.Name != "" {
		m["Error"] = e.Name
	}
	if e.hasCause || e.Cause != "" {
		m["Cause"] = e.Cause
	}
	return m
}

func mustJSON(v any) string { return jsonv.EncodeString(v) }

func typeName(v any) string { return jsonv.TypeName(v) }
