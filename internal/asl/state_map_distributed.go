package asl

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// Distributed Map. A Map state whose ItemProcessor has ProcessorConfig.Mode DISTRIBUTED runs a Map
// Run: each item (or batch of items) is a child execution with its own history and context object,
// and the parent's history holds only MapRunStarted and MapRunSucceeded/Failed/Aborted (recorded in
// v2/scenarios/test_base_scenarios.snapshot.json, test_map_state_config_distributed_*). Items come
// inline (ItemsPath/Items): ItemReader and ResultWriter need S3 and are refused at Parse.

// itemBatcher is a distributed Map's ItemBatcher: items are grouped, and each child execution gets
// {"Items": [...], "BatchInput": ...}.
type itemBatcher struct {
	MaxItems   *numField // MaxItemsPerBatch(Path)
	MaxBytes   *numField // MaxInputBytesPerBatch(Path)
	BatchInput *template // JSONPath template, or .jsonata in JSONata mode
}

// maxBatchBytes is AWS's cap on a batch's size (MaxInputBytesPerBatch at most 256 KiB).
const maxBatchBytes = MaxPayloadBytes

// itemBatcher reads a distributed Map's ItemBatcher.
func (p *parser) itemBatcher(v any, loc, lang string) *itemBatcher {
	obj, ok := v.(map[string]any)
	if !ok {
		p.schema(loc, "The field 'ItemBatcher' must be an object")
		return nil
	}
	jp := lang == JSONPath
	for _, k := range sortedKeys(obj) {
		switch k {
		case "MaxItemsPerBatch", "MaxInputBytesPerBatch", "BatchInput":
		case "MaxItemsPerBatchPath", "MaxInputBytesPerBatchPath":
			if !jp {
				p.schema(loc, "The field '%s' is not supported for the JSONata query language", k)
			}
		default:
			p.schema(loc, "The field '%s' is not supported by Step Functions", k)
		}
	}
	b := &itemBatcher{
		MaxItems: p.numFieldOf(obj, "MaxItemsPerBatch", "MaxItemsPerBatchPath", loc, jp, 0, math.MaxInt32),
		MaxBytes: p.numFieldOf(obj, "MaxInputBytesPerBatch", "MaxInputBytesPerBatchPath", loc, jp, 0, maxBatchBytes),
	}
	if b.MaxItems == nil && b.MaxBytes == nil {
		p.schema(loc, "An ItemBatcher needs at least one of MaxItemsPerBatch or MaxInputBytesPerBatch (or their Path forms)")
	}
	if bi, ok := obj["BatchInput"]; ok {
		if jp {
			b.BatchInput = p.template(bi, loc+"/BatchInput")
		} else {
			b.BatchInput = &template{jsonata: p.jsonataTemplate(bi, loc+"/BatchInput")}
		}
	}
	return b
}

// MapRun is one run of a distributed Map state: its ARN and its child executions, in item order.
type MapRun struct {
	ARN      string
	Children []*Execution
}

// MapRuns lists the Map Runs the execution has started so far.
func (x *Execution) MapRuns() []*MapRun {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]*MapRun(nil), x.mapRuns...)
}

// distributedMap runs a distributed Map state's attempt loop and its data flow out.
func (r *stateRun) distributedMap(ctx context.Context, items []any, eff any, conc int) (any, map[string]any, *StatesError) {
	spec := r.st.Map
	result, err := r.withRetry(ctx, func(ctx context.Context) (any, *StatesError) {
		r.f.emit(ctx, Event{Type: "MapStateStarted", MapStateStartedEventDetails: &MapStateStartedDetails{Length: len(items)}})
		// Recorded: invalid tolerated-failure values fail the execution right after MapStateStarted,
		// with no MapStateFailed.
		tolCount, err := r.tolerance(ctx, spec.ToleratedFailureCount, "ToleratedFailureCount", eff, true)
		if err != nil {
			return nil, err
		}
		tolPct, err := r.tolerance(ctx, spec.ToleratedFailurePercentage, "ToleratedFailurePercentage", eff, false)
		if err != nil {
			return nil, err
		}
		inputs, err := r.childInputs(ctx, items, eff)
		if err == nil {
			inputs, err = r.batch(ctx, inputs, eff)
		}
		if err != nil {
			if ctx.Err() == nil {
				r.f.emit(ctx, Event{Type: "MapStateFailed"})
			}
			return nil, err
		}
		run := r.newMapRun()
		started := r.f.emit(ctx, Event{Type: "MapRunStarted", MapRunStartedEventDetails: &MapRunStartedDetails{MapRunArn: run.ARN}})
		out, err := r.runChildren(ctx, run, inputs, conc, tolCount, tolPct)
		if err != nil {
			if ctx.Err() != nil {
				r.f.emit(ctx, Event{Type: "MapRunAborted"})
				return nil, stopped(ctx)
			}
			r.f.emit(ctx, Event{Type: "MapRunFailed", MapRunFailedEventDetails: &ErrorDetails{Error: err.Name, Cause: err.Cause}})
			r.f.emit(ctx, Event{Type: "MapStateFailed"})
			return nil, err
		}
		r.f.emit(ctx, Event{Type: "MapRunSucceeded"})
		r.f.emit(ctx, Event{Type: "MapStateSucceeded"})
		// Every recording since November 2024 links MapStateExited to MapRunStarted (older ones, to
		// MapRunSucceeded: AWS changed it).
		r.f.x.hist.link(r.f.chain, started)
		return out, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return r.finishResult(ctx, result)
}

// newMapRun names a Map Run as AWS does: mapRun:<machine>/<label or id>:<id>. The ids are derived
// from the execution and the state visit's place in it (position), not drawn at random, so a
// replay after a restart names the same Map Run and the same children, at every depth (inside an
// inline Map's iterations too, whose event ids interleave differently), and finds their work.
func (r *stateRun) newMapRun() *MapRun {
	x := r.f.x
	seed := x.ARN + "\x00" + r.position()
	label := r.st.Map.Label
	if label == "" {
		label = stableID(seed, "label")
	}
	base := strings.Replace(x.MachineARN, ":stateMachine:", ":mapRun:", 1)
	run := &MapRun{ARN: base + "/" + label + ":" + stableID(seed, "run")}
	x.mu.Lock()
	x.mapRuns = append(x.mapRuns, run)
	x.mu.Unlock()
	return run
}

// childInputs applies ItemSelector to every item (with $$.Map.Item), before the Map Run starts.
func (r *stateRun) childInputs(ctx context.Context, items []any, eff any) ([]any, *StatesError) {
	if r.st.Map.ItemSelector == nil {
		return items, nil
	}
	out := make([]any, len(items))
	for i, it := range items {
		v, err := r.selectItem(ctx, i, it, eff)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// batch groups the child inputs by the ItemBatcher: at most MaxItemsPerBatch items and
// MaxInputBytesPerBatch bytes (of the batch's JSON) each, with BatchInput beside them.
func (r *stateRun) batch(ctx context.Context, inputs []any, eff any) ([]any, *StatesError) {
	b := r.st.Map.ItemBatcher
	if b == nil {
		return inputs, nil
	}
	maxItems, maxBytes := 0, 0
	if b.MaxItems != nil {
		n, err := r.intValue(ctx, b.MaxItems, "MaxItemsPerBatch", eff)
		if err != nil {
			return nil, err
		}
		if n < 0 || n != math.Trunc(n) {
			return nil, r.runtime("The value of the field 'MaxItemsPerBatch' must be a non-negative integer, but was %v", n)
		}
		maxItems = int(n)
	}
	if b.MaxBytes != nil {
		n, err := r.intValue(ctx, b.MaxBytes, "MaxInputBytesPerBatch", eff)
		if err != nil {
			return nil, err
		}
		if n < 0 || n > maxBatchBytes || n != math.Trunc(n) {
			return nil, r.runtime("The value of the field 'MaxInputBytesPerBatch' must be an integer between 0 and %d, but was %v", maxBatchBytes, n)
		}
		maxBytes = int(n)
	}
	var batchInput any
	hasInput := b.BatchInput != nil
	if hasInput {
		var e error
		if b.BatchInput.jsonata != nil {
			batchInput, e = b.BatchInput.jsonata.eval(ctx, r.jenv(nil), "BatchInput")
		} else {
			batchInput, e = b.BatchInput.evalJSONPath(r.env(eff))
		}
		if e != nil {
			return nil, r.fromEval(e)
		}
	}
	var out []any
	var cur []any
	size := 0
	flush := func() {
		if len(cur) == 0 {
			return
		}
		m := map[string]any{"Items": cur}
		if hasInput {
			m["BatchInput"] = batchInput
		}
		out = append(out, m)
		cur, size = nil, 0
	}
	for _, in := range inputs {
		n := len(encodeJSON(in)) + 1
		if len(cur) > 0 && ((maxItems > 0 && len(cur) >= maxItems) || (maxBytes > 0 && size+n > maxBytes)) {
			flush()
		}
		cur = append(cur, in)
		size += n
	}
	flush()
	return out, nil
}

// tolerance reads ToleratedFailureCount (integer) or ToleratedFailurePercentage (0..100); -1 when
// not set. The messages are AWS's (recorded, test_map_state_tolerated_failure_*_path).
func (r *stateRun) tolerance(ctx context.Context, n *numField, field string, input any, integer bool) (float64, *StatesError) {
	if n == nil {
		return -1, nil
	}
	var f float64
	if n.Path != nil {
		var err *StatesError
		if f, err = r.pathNumber(n, field, input, integer); err != nil {
			return 0, err
		}
	} else {
		var err *StatesError
		if f, err = r.intValue(ctx, n, field, input); err != nil {
			return 0, err
		}
	}
	switch {
	case integer && f < 0:
		return 0, r.runtime("%s cannot be negative.", field)
	case !integer && (f < 0 || f > 100):
		return 0, r.runtime("%s must be between 0 and 100.", field)
	}
	return f, nil
}

// runChildren runs one child execution per input, at most conc at a time (0: no limit beyond
// the engine's), and gathers their outputs in order. Failures beyond the tolerated count or
// percentage fail the Map Run and abort the children still running.
func (r *stateRun) runChildren(ctx context.Context, run *MapRun, inputs []any, conc int, tolCount, tolPct float64) ([]any, *StatesError) {
	n := len(inputs)
	results := make([]any, n)
	if n == 0 {
		return results, nil
	}
	if conc <= 0 || conc > maxDistributedConcurrency {
		conc = maxDistributedConcurrency
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu       sync.Mutex
		failures int
		failed   *StatesError
		wg       sync.WaitGroup
	)
	exceeded := func() bool {
		if tolCount >= 0 && float64(failures) > tolCount {
			return true
		}
		if tolPct >= 0 && float64(failures)*100/float64(n) > tolPct {
			return true
		}
		return tolCount < 0 && tolPct < 0 && failures > 0
	}
	sem := make(chan struct{}, conc)
	prefix := strings.Replace(run.ARN, ":mapRun:", ":execution:", 1)
	prefix = prefix[:strings.LastIndex(prefix, ":")]
	for i := 0; i < n; i++ {
		select {
		case sem <- struct{}{}:
		case <-cctx.Done():
		}
		if cctx.Err() != nil {
			break
		}
		child := r.f.x.newChild(cctx, prefix, stableID(run.ARN, strconv.Itoa(i)), r.st.Map.Processor, inputs[i])
		r.f.x.mu.Lock()
		run.Children = append(run.Children, child)
		r.f.x.mu.Unlock()
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			out, err := child.runChild()
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				results[i] = out
				return
			}
			if cctx.Err() != nil {
				return
			}
			failures++
			results[i] = err.errorOutput()
			if exceeded() && failed == nil {
				failed = newErr(ErrExceedToleratedFailures, "The specified tolerated failure threshold was exceeded")
				cancel(errCancelled)
			}
		}(i)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, stopped(ctx)
	}
	if failed != nil {
		return nil, failed
	}
	return results, nil
}

// maxDistributedConcurrency bounds the child executions a Map Run runs at once here (AWS allows
// up to 10,000; one machine does better with fewer goroutines at a time).
const maxDistributedConcurrency = 1000

// newChild makes a Map Run's child execution: its own ARN, history and context object, and no
// variables from the parent (AWS does not pass them to child workflows). It is not registered in
// the engine and does not report status changes.
func (x *Execution) newChild(ctx context.Context, prefix, name string, m *Machine, input any) *Execution {
	arn := prefix + ":" + name
	now := x.eng.clock.Now()
	inputJSON := compactJSON(input)
	c := &Execution{eng: x.eng, ARN: arn, Name: name, MachineARN: x.MachineARN, machine: m, input: input,
		inputJSON: inputJSON, startTime: now, status: StatusRunning, done: make(chan struct{})}
	c.role = x.role // a child runs with its parent's role
	_, machine := x.contextParts()
	c.ctxExec = map[string]any{"Id": arn, "Input": input, "Name": name, "RoleArn": c.role,
		"StartTime": formatTime(now), "RedriveCount": int64(0)}
	c.ctxMachine = machine
	c.ctx, c.cancel = context.WithCancelCause(ctx)
	c.hist.add(&c.chain, now, Event{Type: "ExecutionStarted", ExecutionStartedEventDetails: &ExecutionStartedDetails{
		Input: inputJSON, InputDetails: notTruncated, RoleArn: c.role}})
	return c
}

// runChild runs a child execution to its end and records it in its own history.
func (c *Execution) runChild() (any, *StatesError) {
	defer close(c.done)
	defer c.cancel(nil)
	f := &frame{x: c, m: c.machine, chain: &c.chain, scope: newScope(nil)}
	out, outJSON, serr := f.runMachine(c.ctx, c.input, c.inputJSON)
	now := c.eng.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopTime = now
	var ev Event
	switch {
	case serr != nil && c.ctx.Err() != nil:
		c.status = StatusAborted
		ev = Event{Type: "ExecutionAborted", ExecutionAbortedEventDetails: &ErrorDetails{}}
	case serr != nil:
		c.status, c.errName, c.cause = StatusFailed, serr.Name, serr.Cause
		ev = Event{Type: "ExecutionFailed", ExecutionFailedEventDetails: &ErrorDetails{Error: serr.Name, Cause: serr.Cause}}
	default:
		c.status = StatusSucceeded
		c.output = outJSON
		if c.output == "" {
			c.output = compactJSON(out)
		}
		ev = Event{Type: "ExecutionSucceeded", ExecutionSucceededEventDetails: &OutputDetails{Output: c.output, OutputDetails: notTruncated}}
	}
	if _, ok := c.hist.add(&c.chain, now, ev); !ok {
		c.forceHistoryFailure(now)
	}
	return out, serr
}

// stableID is a UUID-shaped id determined by its parts: the same parts give the same id, so names
// derived from an execution survive its replay.
func stableID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	b := h[:16]
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
