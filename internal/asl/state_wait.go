package asl

import (
	"context"
	"math"
	"sync"
	"time"
)

// Wait: the state holds its input until a number of seconds has passed or a timestamp is reached.
// A Wait at the execution's top level parks the execution instead of holding a goroutine.
// https://docs.aws.amazon.com/step-functions/latest/dg/state-wait.html

var waitFields = fieldSet(commonFields, flowFields, jsonPathIO, []string{"Seconds", "SecondsPath", "Timestamp", "TimestampPath", "Assign", "Output"})

// WaitSpec is what a Wait state has of its own: one of Seconds and Timestamp.
type WaitSpec struct {
	Seconds   *numField
	Timestamp *timeField
}

// timeField is Wait's Timestamp.
type timeField struct {
	Value   time.Time
	Path    compiledPath
	JSONata *jsonataValue
}

// waitState reads exactly one of Seconds, SecondsPath, Timestamp and TimestampPath.
func (p *parser) waitState(st *State, obj map[string]any, loc string) {
	spec := &WaitSpec{}
	st.Wait = spec
	jp := st.QueryLanguage == JSONPath
	n := 0
	for _, k := range []string{"Seconds", "SecondsPath", "Timestamp", "TimestampPath"} {
		if _, ok := obj[k]; ok {
			n++
		}
	}
	if n != 1 {
		p.schema(loc, "A Wait state must have exactly one of 'Seconds', 'SecondsPath', 'Timestamp' or 'TimestampPath'")
		return
	}
	spec.Seconds = p.numFieldOf(obj, "Seconds", "SecondsPath", loc, jp, 0, 99999999)
	if v, ok := obj["Timestamp"]; ok {
		if jv := p.jsonataString(v, loc+"/Timestamp", st.QueryLanguage); jv != nil {
			spec.Timestamp = &timeField{JSONata: jv}
		} else {
			s, _ := v.(string)
			t, ok := parseTimestamp(s)
			if !ok {
				p.schema(loc+"/Timestamp", "String does not match RFC3339 timestamp")
			}
			spec.Timestamp = &timeField{Value: t}
		}
	}
	if v, ok := obj["TimestampPath"]; ok && jp {
		spec.Timestamp = &timeField{Path: p.refPath(v, "TimestampPath", loc)}
	}
}

// wait holds the state's input until its time: parked at the top level, asleep in a branch or
// iteration.
func (r *stateRun) wait(ctx context.Context) (any, map[string]any, *StatesError) {
	spec := r.st.Wait
	input := r.raw
	var err *StatesError
	if r.jsonPath() {
		if input, err = r.inputPath(r.raw); err != nil {
			return nil, nil, err
		}
	}
	clock := r.f.x.eng.clock
	var d time.Duration
	switch {
	case spec.Seconds != nil:
		if d, err = r.waitSeconds(ctx, input); err != nil {
			return nil, nil, err
		}
	case spec.Timestamp != nil:
		t, err := r.waitTimestamp(ctx, input)
		if err != nil {
			return nil, nil, err
		}
		d = t.Sub(clock.Now())
	}
	until := clock.Now().Add(d)
	if d > 0 && spec.Seconds != nil {
		// A relative wait ends at the deadline it got when first entered, even after a restart.
		until, d, _ = deadline(ctx, clock, TimerWait, r.st.Name+mapIndex(r.f), d)
	}
	if d > 0 && r.f.top {
		// Park: the execution holds no goroutine while it waits.
		return nil, nil, r.parkWait(ctx, until, input)
	}
	if d > 0 {
		if clock.Sleep(ctx, d) != nil {
			return nil, nil, stopped(ctx)
		}
	}
	return r.waitFinish(ctx, input)
}

// waitTimestamp is the time a Wait state's Timestamp, TimestampPath or JSONata Timestamp names.
func (r *stateRun) waitTimestamp(ctx context.Context, input any) (time.Time, *StatesError) {
	ts := r.st.Wait.Timestamp
	if ts.Path == nil && ts.JSONata == nil {
		return ts.Value, nil
	}
	var v any
	var e error
	if ts.Path != nil {
		v, e = ts.Path.Eval(r.env(input))
		if e != nil {
			return time.Time{}, r.runtime("Invalid path '%s' : %s", ts.Path.String(), pathMsg(e))
		}
	} else if v, e = ts.JSONata.eval(ctx, r.jenv(nil), "Timestamp"); e != nil {
		return time.Time{}, r.fromEval(e)
	}
	s, isStr := v.(string)
	if !isStr {
		s = compactJSON(v)
	}
	t, ok := parseTimestamp(s)
	if !ok {
		if ts.Path != nil {
			return time.Time{}, r.runtime("The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: %s == %s", ts.Path.String(), s)
		}
		// Recorded: EvaluationFailed right after WaitStateEntered, then ExecutionFailed.
		return time.Time{}, r.queryFailed(ctx, "Timestamp", "The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: %s", s)
	}
	return t, nil
}

// waitFinish is a Wait state's output and assignments once the time has passed.
func (r *stateRun) waitFinish(ctx context.Context, input any) (any, map[string]any, *StatesError) {
	st := r.st
	if !r.jsonPath() {
		return r.finishJSONata(ctx, st.Output, st.Assign, r.raw, nil)
	}
	out, err := r.outputPath(input)
	if err != nil {
		return nil, nil, err
	}
	assigned, err := r.assign(ctx, st.Assign, input, nil)
	return out, assigned, err
}

// parkedWait is a Wait state the execution is parked in.
type parkedWait struct {
	until   time.Time
	input   any // the effective input
	unwound chan struct{}
	mu      sync.Mutex
	stop    func() bool
	once    sync.Once
	woke    func(aborted bool)
}

func (w *parkedWait) wake(aborted bool) {
	w.once.Do(func() {
		if aborted {
			w.mu.Lock()
			if w.stop != nil {
				w.stop()
			}
			w.mu.Unlock()
		}
		go w.woke(aborted)
	})
}

// parkWait parks the execution until the wait is over (or it is stopped).
func (r *stateRun) parkWait(ctx context.Context, until time.Time, input any) *StatesError {
	x := r.f.x
	w := &parkedWait{until: until, input: input, unwound: make(chan struct{})}
	w.woke = func(aborted bool) { x.resumeWait(r, w, aborted) }
	r.pwait = w
	x.setParked(r)
	// WaitFunc may fire timers at once (a VirtualClock): never hold w.mu across it.
	stop := x.eng.clock.WaitFunc(until.Sub(x.eng.clock.Now()), func() { w.wake(false) })
	w.mu.Lock()
	w.stop = stop
	w.mu.Unlock()
	if ctx.Err() != nil {
		w.wake(true)
	}
	return errParked
}

// maxWaitSeconds is the largest Seconds a Wait state takes
// (https://docs.aws.amazon.com/step-functions/latest/dg/state-wait.html: "an integer value from 0
// to 99999999", for a literal, a SecondsPath value and a JSONata result alike).
const maxWaitSeconds = 99999999

// waitSeconds is how long a Wait state's Seconds, SecondsPath or JSONata Seconds asks for, checked
// as AWS checks it: a whole number of seconds in [0, 99999999]. A literal was checked when the
// definition was read.
func (r *stateRun) waitSeconds(ctx context.Context, input any) (time.Duration, *StatesError) {
	n := r.st.Wait.Seconds
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
