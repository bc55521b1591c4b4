package asl

import (
	"context"
	"math"
	"time"
)

// maxWaitSeconds is the largest Seconds a Wait state takes
// (https://docs.aws.amazon.com/step-functions/latest/dg/state-wait.html: "an integer value from 0
// to 99999999", for a literal, a SecondsPath value and a JSONata result alike).
const maxWaitSeconds = 99999999

// waitSeconds is how long a Wait state's Seconds, SecondsPath or JSONata Seconds asks for, checked
// as AWS checks it: a whole number of seconds in [0, 99999999]. A literal was checked when the
// definition was read.
func (r *stateRun) waitSeconds(ctx context.Context, input any) (time.Duration, *StatesError) {
	n := r.st.Seconds
	switch {
	case n.Path != nil:
		v, err := n.Path.Eval(r.env(input))
		if err != nil {
			// AWS's wording, recorded (test_logs: a SecondsPath to a missing field).
			return 0, r.runtime("The SecondsPath parameter does not reference an input value: %s", n.Path.String())
		}
		secs, msg := wholeSeconds(v)
		if msg != "" {
			return 0, r.runtime("The SecondsPath parameter %s: %s == %s", msg, n.Path.String(), pythonish(v))
		}
		return time.Duration(secs) * time.Second, nil
	case n.JSONata != nil:
		v, err := n.JSONata.eval(ctx, r.jenv(nil), "Seconds")
		if err != nil {
			return 0, r.fromEval(err)
		}
		secs, msg := wholeSeconds(v)
		switch {
		case msg == msgNotLong:
			return 0, r.queryFailed(ctx, "Seconds", "The JSONata expression '%s' specified for the field 'Seconds' returned an unexpected result type. Expected 'integer', but was '%s' for value: %s", n.JSONata.src, typeName(v), compactJSON(v))
		case msg != "":
			return 0, r.queryFailed(ctx, "Seconds", "The JSONata expression '%s' specified for the field 'Seconds' returned a value out of range. Expected an integer between 0 and %d, but was: %s", n.JSONata.src, maxWaitSeconds, compactJSON(v))
		}
		return time.Duration(secs) * time.Second, nil
	}
	return time.Duration(n.Value) * time.Second, nil
}

// The three ways a SecondsPath value fails, in AWS's words after "The SecondsPath parameter".
const (
	msgNotLong  = "cannot be parsed as a long value"
	msgNegative = "references a negative value"
	msgTooLarge = "references a value greater than 99999999"
)

// wholeSeconds reads v as a whole number of seconds, or says why it is not one.
func wholeSeconds(v any) (int64, string) {
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x != math.Trunc(x) {
			return 0, msgNotLong
		}
		f = x
	default:
		return 0, msgNotLong
	}
	switch {
	case f < 0:
		return 0, msgNegative
	case f > maxWaitSeconds:
		return 0, msgTooLarge
	}
	return int64(f), ""
}

// pythonish renders a value the way AWS's "<path> == <value>" causes show it: a string bare,
// anything else as compact JSON.
func pythonish(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return compactJSON(v)
}

// queryFailed fails a JSONata field's evaluation as AWS records it: States.QueryEvaluationError,
// with an EvaluationFailed event naming the field, right after the state's entered event.
func (r *stateRun) queryFailed(ctx context.Context, location, format string, args ...any) *StatesError {
	e := r.runtime(format, args...)
	e.Name = ErrQueryEvaluation
	e.query = &queryLocated{location: location, reported: true}
	r.f.emit(ctx, Event{Type: "EvaluationFailed", EvaluationFailedEventDetails: &EvaluationFailedDetails{
		Error: ErrQueryEvaluation, Cause: e.Cause, Location: location, State: r.st.Name}})
	return e
}
