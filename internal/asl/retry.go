package asl

import (
	"context"
	"fmt"
	"math"
	"time"

	"sinew/internal/jsonv"
)

// Retry and Catch, which Task, Parallel and Map states share: their parsing and their run.

// errorFields are the fields of error handling.
var errorFields = []string{"Retry", "Catch"}

// Retrier is one entry of Retry.
type Retrier struct {
	ErrorEquals     []string
	IntervalSeconds float64
	MaxAttempts     int
	BackoffRate     float64
	MaxDelaySeconds float64 // 0 = no cap
	JitterFull      bool
}

// Catcher is one entry of Catch.
type Catcher struct {
	ErrorEquals []string
	Next        string
	ResultPath  optPath
	Assign      *assignment
	Output      *jsonataValue
}

// errorHandling reads Retry and Catch.
func (p *parser) errorHandling(st *State, obj map[string]any, loc string) {
	p.entries(obj, "Retry", "retrier", loc, func(o map[string]any, at string, last bool) {
		st.Retry = append(st.Retry, p.retrier(o, at, last))
	})
	p.entries(obj, "Catch", "catcher", loc, func(o map[string]any, at string, last bool) {
		st.Catch = append(st.Catch, p.catcher(o, at, st.QueryLanguage, last))
	})
}

// entries reads the array field, if present, and gives each object in it to read, with its
// location and whether it is the last; what names an entry in the diagnostics.
func (p *parser) entries(obj map[string]any, field, what, loc string, read func(o map[string]any, at string, last bool)) {
	v, ok := obj[field]
	if !ok {
		return
	}
	arr, ok := v.([]any)
	if !ok {
		p.schema(loc+"/"+field, "The field '%s' must be an array", field)
	}
	for i, e := range arr {
		at := fmt.Sprintf("%s/%s[%d]", loc, field, i)
		o, ok := e.(map[string]any)
		if !ok {
			p.schema(at, "A %s must be an object", what)
			continue
		}
		read(o, at, i == len(arr)-1)
	}
}

// retrier reads one entry of Retry; last says whether it is the last.
func (p *parser) retrier(ro map[string]any, rloc string, last bool) *Retrier {
	rt := &Retrier{IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2}
	rt.ErrorEquals = p.errorEquals(ro, rloc, last)
	for _, k := range sortedKeys(ro) {
		v := ro[k]
		switch k {
		case "ErrorEquals", "Comment":
		case "IntervalSeconds":
			rt.IntervalSeconds = float64(p.intBetween(v, rloc, "IntervalSeconds", 1, 99999999))
		case "MaxAttempts":
			rt.MaxAttempts = int(p.intBetween(v, rloc, "MaxAttempts", 0, 99999999))
		case "BackoffRate":
			f, ok := jsonv.ToFloat(v)
			if !ok || f < 1 {
				p.schema(rloc+"/BackoffRate", "The field 'BackoffRate' must be a number of at least 1.0")
			}
			rt.BackoffRate = f
		case "MaxDelaySeconds":
			rt.MaxDelaySeconds = float64(p.intBetween(v, rloc, "MaxDelaySeconds", 1, 31622400))
		case "JitterStrategy":
			s, _ := v.(string)
			if s != "FULL" && s != "NONE" {
				p.schema(rloc+"/JitterStrategy", "The field 'JitterStrategy' should have one of these values: [FULL, NONE]")
			}
			rt.JitterFull = s == "FULL"
		default:
			p.schema(rloc, "The field '%s' is not supported by Step Functions", k)
		}
	}
	return rt
}

// intBetween reads a retrier's integer field, reporting one outside [lo, hi].
func (p *parser) intBetween(v any, loc, field string, lo, hi int64) int64 {
	n, ok := asInt(v)
	if !ok || n < lo || n > hi {
		p.schema(loc+"/"+field, "The field '%s' must be an integer between %d and %d", field, lo, hi)
	}
	return n
}

// catcher reads one entry of Catch of a state in the query language lang; last says whether it is
// the last.
func (p *parser) catcher(co map[string]any, cloc, lang string, last bool) *Catcher {
	ct := &Catcher{}
	ct.ErrorEquals = p.errorEquals(co, cloc, last)
	next, _ := co["Next"].(string)
	if next == "" {
		p.schema(cloc, "These fields are required: [Next]")
	}
	ct.Next = next
	for _, k := range sortedKeys(co) {
		switch k {
		case "ErrorEquals", "Next", "Comment":
		case "ResultPath":
			if lang != JSONPath {
				p.schema(cloc, "The field 'ResultPath' is not supported for the JSONata query language")
			}
			ct.ResultPath = p.optPathField(co, "ResultPath", cloc, true)
		case "Assign":
			ct.Assign = p.assign(co[k], cloc+"/Assign", lang)
		case "Output":
			if lang != JSONata {
				p.schema(cloc, "The field 'Output' is not supported for the JSONPath query language")
			}
			ct.Output = p.jsonataField(co, "Output", cloc)
		default:
			p.schema(cloc, "The field '%s' is not supported by Step Functions", k)
		}
	}
	return ct
}

// errorEquals reads a retrier's or catcher's ErrorEquals; States.ALL must stand alone and last.
func (p *parser) errorEquals(obj map[string]any, loc string, last bool) []string {
	arr, ok := obj["ErrorEquals"].([]any)
	if !ok {
		p.schema(loc, "These fields are required: [ErrorEquals]")
		return nil
	}
	if len(arr) == 0 {
		p.schema(loc+"/ErrorEquals", "Value cannot be empty")
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			p.schema(loc+"/ErrorEquals", "Error names must be strings")
			continue
		}
		out = append(out, s)
	}
	for _, s := range out {
		if s == ErrAll && (len(out) != 1 || !last) {
			p.schema(loc+"/ErrorEquals", "States.ALL must appear alone and in the last retrier or catcher")
		}
	}
	return out
}

// optPathField reads an optional path field (absent: default `$`; null: the documented null

// withRetry runs attempt until it succeeds, no retrier applies, or the matching retrier is spent.
func (r *stateRun) withRetry(ctx context.Context, attempt func(ctx context.Context) (any, *StatesError)) (any, *StatesError) {
	counts := make([]int, len(r.st.Retry))
	for {
		res, err := attempt(ctx)
		if err == nil || err == errParked {
			return res, err
		}
		if again, serr := r.retry(ctx, err, counts); !again {
			return nil, serr
		}
	}
}

// retry decides whether err is retried and, if so, waits the back-off. The first retrier whose
// ErrorEquals matches is the one used, even when exhausted. It returns the error to report when
// there is no retry.
func (r *stateRun) retry(ctx context.Context, err *StatesError, counts []int) (bool, *StatesError) {
	if ctx.Err() != nil {
		return false, stopped(ctx)
	}
	if err.Name == ErrRuntime || err.query != nil {
		return false, err
	}
	i := -1
	for j, rt := range r.st.Retry {
		if errorMatches(rt.ErrorEquals, err) {
			i = j
			break
		}
	}
	if i < 0 || counts[i] >= r.st.Retry[i].MaxAttempts {
		return false, err
	}
	rt := r.st.Retry[i]
	delay := rt.IntervalSeconds * math.Pow(rt.BackoffRate, float64(counts[i]))
	if rt.MaxDelaySeconds > 0 && delay > rt.MaxDelaySeconds {
		delay = rt.MaxDelaySeconds
	}
	if rt.JitterFull {
		delay *= r.f.x.eng.random()
	}
	counts[i]++
	r.retryCount++
	r.ctxObj = nil
	// TODO(persistence): a long back-off holds the goroutine; a durable engine parks here too.
	// The back-off ends at the deadline it got first, even after a restart.
	_, left, _ := deadline(ctx, r.f.x.eng.clock, TimerRetry, r.st.Name+mapIndex(r.f), time.Duration(delay*float64(time.Second)))
	if r.f.x.eng.clock.Sleep(ctx, left) != nil {
		return false, stopped(ctx)
	}
	return true, nil
}

// errorMatches applies ErrorEquals. States.ALL matches everything but States.Runtime (never caught
// or retried); States.TaskFailed matches names outside the States namespace (LocalStack's reading,
// which its recordings pass); States.HeartbeatTimeout matches heartbeat timeouts, which are
// reported as States.Timeout.
func errorMatches(list []string, err *StatesError) bool {
	if err.Name == ErrRuntime {
		return false
	}
	for _, e := range list {
		switch {
		case e == err.Name, e == ErrAll:
			return true
		case e == ErrTaskFailed && !hasStatesPrefix(err.Name):
			return true
		case e == ErrHeartbeatTimeout && err.heartbeat:
			return true
		}
	}
	return false
}

func hasStatesPrefix(s string) bool { return len(s) >= 7 && s[:7] == "States." }

// catcher is the first catcher whose ErrorEquals matches err; a States.Runtime never has one.
func (r *stateRun) catcher(err *StatesError) *Catcher {
	if err.Name == ErrRuntime && err.query == nil {
		return nil
	}
	for _, c := range r.st.Catch {
		if errorMatches(c.ErrorEquals, err) {
			return c
		}
	}
	return nil
}

// caught builds a catcher's output: {"Error","Cause"} placed by its ResultPath into the raw input
// (JSONPath), or its Output over $states.errorOutput (JSONata).
func (r *stateRun) caught(ctx context.Context, c *Catcher, err *StatesError) (any, map[string]any, *StatesError) {
	errOut := err.errorOutput()
	if r.jsonPath() {
		out, rerr := r.resultPath(c.ResultPath, r.raw, errOut)
		if rerr != nil {
			return nil, nil, rerr
		}
		assigned, aerr := r.assign(ctx, c.Assign, errOut, nil)
		return out, assigned, aerr
	}
	return r.finishJSONata(ctx, c.Output, c.Assign, errOut, map[string]any{"errorOutput": errOut})
}
