package asl

import (
	"context"
	"math"
	"runtime"
	"strconv"
	"strings"
)

// Map: the item processor, a machine of its own, runs once per item of an array, the items side by
// side. Inline (here) each item is an iteration of the execution, run as fanOut's child frames
// (fanout.go); distributed (state_map_distributed.go) each is a child execution of a Map Run.
// https://docs.aws.amazon.com/step-functions/latest/dg/state-map.html

var mapFields = fieldSet(commonFields, flowFields, jsonPathIO, errorFields, []string{"Iterator", "ItemProcessor", "ItemsPath", "Items", "ItemSelector", "Parameters", "ResultSelector", "ResultPath", "MaxConcurrency", "MaxConcurrencyPath", "ToleratedFailureCount", "ToleratedFailureCountPath", "ToleratedFailurePercentage", "ToleratedFailurePercentagePath", "Label", "Assign", "Arguments", "Output", "ItemReader", "ItemBatcher", "ResultWriter"})

// MapSpec is what a Map state has of its own.
type MapSpec struct {
	Processor                  *Machine
	ItemsPath                  optPath
	Items                      *jsonataValue
	ItemSelector               *template
	MaxConcurrency             *numField
	ToleratedFailureCount      *numField
	ToleratedFailurePercentage *numField
	// Distributed Map (ProcessorConfig.Mode DISTRIBUTED): each item runs as a child execution of
	// a Map Run. Items come inline (ItemsPath/Items); S3 (ItemReader, ResultWriter) is refused.
	Distributed   bool
	ExecutionType string // STANDARD or EXPRESS: the child executions' type
	Label         string
	ItemBatcher   *itemBatcher
}

// maxInlineConcurrency bounds an inline Map whose MaxConcurrency is 0 (unbounded): AWS runs up to 40
// iterations of an inline Map at once.
const maxInlineConcurrency = 40

// mapState reads a Map state: its item processor (ItemProcessor, or the legacy Iterator), where
// its items come from, how they are shaped, and the limits of the run.
func (p *parser) mapState(st *State, obj map[string]any, loc string) {
	spec := &MapSpec{}
	st.Map = spec
	jp := st.QueryLanguage == JSONPath
	procKey := "ItemProcessor"
	proc, ok := obj["ItemProcessor"].(map[string]any)
	if !ok {
		if it, ok2 := obj["Iterator"].(map[string]any); ok2 {
			proc, ok, procKey = it, true, "Iterator"
		}
	}
	if !ok {
		p.schema(loc, "These fields are required: [ItemProcessor]")
		return
	}
	p.processorConfig(spec, proc, loc+"/"+procKey)
	if _, ok := obj["ItemReader"]; ok {
		p.schema(loc+"/ItemReader", "ItemReader reads the items from Amazon S3, which this engine cannot reach: give the items inline with ItemsPath (JSONPath) or Items (JSONata)")
	}
	if _, ok := obj["ResultWriter"]; ok {
		p.schema(loc+"/ResultWriter", "ResultWriter writes the results to Amazon S3, which this engine cannot reach: remove it, and the Map state's output holds the results")
	}
	for _, k := range []string{"ItemBatcher", "Label"} {
		if _, ok := obj[k]; ok && !spec.Distributed {
			p.schema(loc, "The field '%s' is only supported by a Map state whose ItemProcessor has ProcessorConfig.Mode DISTRIBUTED", k)
		}
	}
	if v, ok := obj["Label"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" || len(s) > 40 || strings.ContainsAny(s, " \t\n<>{}[]?*\"#%\\^|~`$&,;:/") {
			p.schema(loc+"/Label", "The field 'Label' must be a string of 1 to 40 characters without whitespace or any of < > { } [ ] ? * \" # %% \\ ^ | ~ ` $ & , ; : /")
		}
		spec.Label = s
	}
	if v, ok := obj["ItemBatcher"]; ok && spec.Distributed {
		spec.ItemBatcher = p.itemBatcher(v, loc+"/ItemBatcher", st.QueryLanguage)
	}
	spec.Processor = p.machine(proc, loc+"/"+procKey, st.QueryLanguage, false)
	if jp {
		spec.ItemsPath = p.optPathField(obj, "ItemsPath", loc, true)
	} else {
		spec.Items = p.jsonataField(obj, "Items", loc)
	}
	if v, ok := obj["ItemSelector"]; ok {
		if jp {
			spec.ItemSelector = p.template(v, loc+"/ItemSelector")
		} else {
			spec.ItemSelector = &template{jsonata: p.jsonataTemplate(v, loc+"/ItemSelector")}
		}
	} else if st.Parameters != nil {
		// Legacy Map: Parameters play ItemSelector's part.
		spec.ItemSelector, st.Parameters = st.Parameters, nil
	}
	spec.MaxConcurrency = p.numFieldOf(obj, "MaxConcurrency", "MaxConcurrencyPath", loc, jp, 0, math.MaxInt32)
	spec.ToleratedFailureCount = p.numFieldOf(obj, "ToleratedFailureCount", "ToleratedFailureCountPath", loc, jp, 0, math.MaxInt32)
	spec.ToleratedFailurePercentage = p.numFieldOf(obj, "ToleratedFailurePercentage", "ToleratedFailurePercentagePath", loc, jp, 0, 100)
}

// processorConfig reads ProcessorConfig: INLINE (the default) or DISTRIBUTED, and the child
// executions' type.
func (p *parser) processorConfig(spec *MapSpec, proc map[string]any, loc string) {
	v, ok := proc["ProcessorConfig"]
	if !ok {
		return
	}
	cfg, ok := v.(map[string]any)
	if !ok {
		p.schema(loc+"/ProcessorConfig", "The field 'ProcessorConfig' must be an object")
		return
	}
	for _, k := range sortedKeys(cfg) {
		switch k {
		case "Mode":
			switch s, _ := cfg[k].(string); s {
			case "INLINE":
			case "DISTRIBUTED":
				spec.Distributed = true
			default:
				p.schema(loc+"/ProcessorConfig/Mode", "The field 'Mode' should have one of these values: [INLINE, DISTRIBUTED]")
			}
		case "ExecutionType":
			s, _ := cfg[k].(string)
			if s != "STANDARD" && s != "EXPRESS" {
				p.schema(loc+"/ProcessorConfig/ExecutionType", "The field 'ExecutionType' should have one of these values: [STANDARD, EXPRESS]")
			}
			spec.ExecutionType = s
		default:
			p.schema(loc+"/ProcessorConfig", "The field '%s' is not supported by Step Functions", k)
		}
	}
	if spec.ExecutionType != "" && !spec.Distributed {
		p.schema(loc+"/ProcessorConfig", "The field 'ExecutionType' is only supported in DISTRIBUTED mode")
	}
	if spec.Distributed && spec.ExecutionType == "" {
		spec.ExecutionType = "STANDARD"
	}
}

// mapState runs a Map state: inline here, or as a Map Run (distributedMap).
func (r *stateRun) mapState(ctx context.Context) (any, map[string]any, *StatesError) {
	spec := r.st.Map
	eff, items, err := r.mapItems(ctx)
	if err != nil {
		return nil, nil, err
	}
	conc, err := r.optNumber(ctx, spec.MaxConcurrency, "MaxConcurrency", eff, 0)
	if err != nil {
		return nil, nil, err
	}
	if spec.Distributed {
		return r.distributedMap(ctx, items, eff, int(conc))
	}
	tolCount, err := r.optNumber(ctx, spec.ToleratedFailureCount, "ToleratedFailureCount", eff, -1)
	if err != nil {
		return nil, nil, err
	}
	tolPct, err := r.optNumber(ctx, spec.ToleratedFailurePercentage, "ToleratedFailurePercentage", eff, -1)
	if err != nil {
		return nil, nil, err
	}
	if conc <= 0 || conc > maxInlineConcurrency {
		conc = maxInlineConcurrency
	}
	if !mayBlock(spec.Processor) {
		// Iterations that never wait gain nothing from more goroutines than processors.
		conc = min(conc, float64(runtime.GOMAXPROCS(0)))
	}
	result, err := r.withRetry(ctx, func(ctx context.Context) (any, *StatesError) {
		return r.mapIterations(ctx, items, eff, int(conc), tolCount, tolPct)
	})
	if err != nil {
		if ctx.Err() == nil {
			r.f.emit(ctx, Event{Type: "MapStateFailed"})
		}
		return nil, nil, err
	}
	return r.finishResult(ctx, result)
}

// mapItems gives the Map's effective input (after InputPath) and its items: ItemsPath over the
// effective input (JSONPath), or Items, else the input (JSONata).
func (r *stateRun) mapItems(ctx context.Context) (any, []any, *StatesError) {
	spec := r.st.Map
	if !r.jsonPath() {
		v := r.raw
		if spec.Items != nil {
			var e error
			if v, e = spec.Items.eval(ctx, r.jenv(nil), "Items"); e != nil {
				return nil, nil, r.fromEval(e)
			}
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, nil, r.itemsNotArray(ctx, v)
		}
		return r.raw, arr, nil
	}
	eff, err := r.inputPath(r.raw)
	if err != nil {
		return nil, nil, err
	}
	v := eff
	if spec.ItemsPath.Set && !spec.ItemsPath.Null {
		var e error
		if v, e = spec.ItemsPath.Path.Eval(r.env(eff)); e != nil {
			return nil, nil, r.runtime("Invalid path '%s' : %s", spec.ItemsPath.Path.String(), pathMsg(e))
		}
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, nil, r.runtime("Invalid path '%s': The Map state's ItemsPath must reference an array, but the value is %s", spec.itemsPathSrc(), compactJSON(v))
	}
	return eff, arr, nil
}

// mapIterations is one attempt of an inline Map: its events and an iteration per item.
func (r *stateRun) mapIterations(ctx context.Context, items []any, eff any, conc int, tolCount, tolPct float64) (any, *StatesError) {
	st := r.st
	hist := &r.f.x.hist
	r.f.emit(ctx, Event{Type: "MapStateStarted", MapStateStartedEventDetails: &MapStateStartedDetails{Length: len(items)}})
	// Each iteration writes its started and ended events and at least two per state it visits;
	// then come the Map's two closing events and maybe the execution's (the room for them spares
	// a copy of all the records at the very end).
	hist.reserve(len(items)*(2+2*len(st.Map.Processor.States)) + 3)
	var lastSucceeded int64
	now := r.f.x.eng.clock.Now
	// The details of every iteration's started and succeeded events, in one allocation.
	dets := make([]MapIterationDetails, 2*len(items))
	hooks := &iterHooks{
		started: func(i int) int64 {
			dets[2*i] = MapIterationDetails{Name: st.Name, Index: i}
			return r.f.emitDetails("MapIterationStarted", &dets[2*i])
		},
		succeeded: func(c *chain, i int) {
			dets[2*i+1] = MapIterationDetails{Name: st.Name, Index: i}
			lastSucceeded, _ = hist.addDetails(c, now(), "MapIterationSucceeded", &dets[2*i+1])
		},
		failed: func(c *chain, i int) {
			hist.add(c, now(), Event{Type: "MapIterationFailed", MapIterationFailedEventDetails: &MapIterationDetails{Name: st.Name, Index: i}})
		},
		aborted: func(c *chain, i int) {
			hist.add(c, now(), Event{Type: "MapIterationAborted", MapIterationAbortedEventDetails: &MapIterationDetails{Name: st.Name, Index: i}})
		},
	}
	out, err := r.fanOut(ctx, len(items), conc, tolCount, tolPct, func(i int) (*frame, any, *StatesError) {
		return r.iteration(ctx, items, eff, i)
	}, hooks)
	if err != nil {
		return nil, err
	}
	if lastSucceeded > 0 {
		// After the last iteration, AWS links the Map's next events to the last
		// MapIterationSucceeded (recorded in the localstack-sfn Map histories).
		hist.link(r.f.chain, lastSucceeded)
	}
	r.f.emit(ctx, Event{Type: "MapStateSucceeded"})
	arr := make([]any, len(out))
	copy(arr, out)
	return arr, nil
}

// iteration gives the frame of item i and its input: the item, or ItemSelector's value.
func (r *stateRun) iteration(ctx context.Context, items []any, eff any, i int) (*frame, any, *StatesError) {
	child := itemFrame(r, r.st.Map.Processor, i, items[i])
	if r.st.Map.ItemSelector == nil {
		if r.jsonPath() {
			// The item is a part of the state's input (ItemsPath), so no longer as JSON.
			child.inBound = r.rawBound
		}
		return child, items[i], nil
	}
	v, err := r.selectItem(ctx, i, items[i], eff)
	if err != nil {
		return nil, nil, err
	}
	return child, v, nil
}

// selectItem is ItemSelector's value for item i, which it sees as $$.Map.Item, over the effective
// input eff (JSONPath).
func (r *stateRun) selectItem(ctx context.Context, i int, item, eff any) (any, *StatesError) {
	sel := r.st.Map.ItemSelector
	sr := &stateRun{f: &frame{x: r.f.x, scope: r.f.scope, inMap: true, mapIndex: i, mapValue: item}, st: r.st, raw: r.raw, entered: r.entered, enteredAt: r.enteredAt}
	if sel.jsonata != nil {
		v, e := sel.jsonata.eval(ctx, sr.jenv(nil), "ItemSelector")
		if e != nil {
			return nil, sr.fromEval(e)
		}
		return v, nil
	}
	return sr.applyTemplate(sel, eff)
}

// itemsNotArray fails a JSONata Map whose Items (or input) is not an array, as recorded: an
// EvaluationFailed event, then MapStateFailed (test_map_state_items_*).
func (r *stateRun) itemsNotArray(ctx context.Context, v any) *StatesError {
	var e *StatesError
	loc := ""
	switch t := typeName(v); {
	case r.st.Map.Items == nil:
		e = r.runtime("Map state input must be an array but was: %s", compactJSON(v))
	case t == "null" || t == "boolean" || t == "string" || t == "number" || t == "object":
		loc = "Items"
		e = r.runtime("The JSONata expression '%s' specified for the field 'Items' returned an unexpected result type. Expected 'array', but was '%s' for value: %s", r.st.Map.Items.src, t, compactJSON(v))
	default:
		loc = "Items"
		e = r.runtime("The JSONata expression '%s' specified for the field 'Items' returned an unsupported result type.", r.st.Map.Items.src)
	}
	e.Name = ErrQueryEvaluation
	e.query = &queryLocated{location: loc, reported: true}
	f := r.f
	f.x.hist.addAfter(f.chain, r.before, f.x.eng.clock.Now(), Event{Type: "EvaluationFailed", EvaluationFailedEventDetails: &EvaluationFailedDetails{
		Error: ErrQueryEvaluation, Cause: e.Cause, Location: loc, State: r.st.Name}})
	f.emit(ctx, Event{Type: "MapStateFailed"})
	return e
}

// itemsPathSrc is ItemsPath as written, or its default.
func (m *MapSpec) itemsPathSrc() string {
	if m.ItemsPath.Path != nil {
		return m.ItemsPath.Path.String()
	}
	return "$"
}

// optNumber resolves MaxConcurrency or a tolerated-failure field, def when absent.
func (r *stateRun) optNumber(ctx context.Context, n *numField, name string, input any, def float64) (float64, *StatesError) {
	if n == nil {
		return def, nil
	}
	var f float64
	var err *StatesError
	if n.Path != nil {
		// AWS's wording for a ...Path value that is not a number (recorded, test_max_concurrency_path).
		f, err = r.pathNumber(n, name, input, name != "ToleratedFailurePercentage")
	} else {
		f, err = r.intValue(ctx, n, name, input)
	}
	if err != nil {
		return 0, err
	}
	if f < 0 || math.IsNaN(f) {
		return 0, r.runtime("The value of the field '%s' must be a non-negative number, but was %v", name, f)
	}
	return f, nil
}

// pathNumber reads a number through a Map state's ...Path field: a number, or a string holding
// one (recorded: a variable assigned "1"); anything else is AWS's "refers to value" error.
func (r *stateRun) pathNumber(n *numField, field string, input any, integer bool) (float64, *StatesError) {
	v, err := n.Path.Eval(r.env(input))
	if err != nil {
		return 0, r.runtime("Invalid path '%s' : %s", n.Path.String(), pathMsg(err))
	}
	f, ok := toNumber(v)
	s, isStr := v.(string)
	if isStr {
		p, perr := strconv.ParseFloat(strings.TrimSpace(s), 64)
		f, ok = p, perr == nil && !math.IsInf(p, 0) && !math.IsNaN(p)
	}
	if ok && integer && f != math.Trunc(f) {
		ok = false
	}
	if !ok {
		shown := s
		if !isStr {
			shown = compactJSON(v)
		}
		kind := "float"
		if integer {
			kind = "integer"
		}
		return 0, r.runtime("The %sPath field refers to value \"%s\" which is not a valid %s: %s", field, shown, kind, n.Path.String())
	}
	return f, nil
}

// mayBlock reports whether a run of m can wait on something (a task, a timer, a nested Map or
// Parallel); one that cannot only computes.
func mayBlock(m *Machine) bool {
	for _, st := range m.States {
		switch st.Type {
		case TypeTask, TypeWait, TypeMap, TypeParallel:
			return true
		}
	}
	return false
}
