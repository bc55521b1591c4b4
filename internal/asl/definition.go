package asl

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Query languages.
const (
	JSONPath = "JSONPath"
	JSONata  = "JSONata"
)

// State types.
const (
	TypeTask     = "Task"
	TypePass     = "Pass"
	TypeChoice   = "Choice"
	TypeWait     = "Wait"
	TypeSucceed  = "Succeed"
	TypeFail     = "Fail"
	TypeParallel = "Parallel"
	TypeMap      = "Map"
)

var stateTypes = []string{TypeTask, TypeWait, TypePass, TypeSucceed, TypeFail, TypeChoice, TypeParallel, TypeMap}

// Machine is a parsed, validated state machine (or a Parallel branch, or a Map's ItemProcessor).
// It holds no run-time state: one Machine serves any number of concurrent executions.
type Machine struct {
	StartAt        string
	Comment        string
	QueryLanguage  string
	TimeoutSeconds int64 // 0 = none
	States         map[string]*State
	order          []string // state names in definition order

	// histHint is the length of the last finished execution's history, so the next one's
	// records are allocated once, at about their size.
	histHint atomic.Int32
	// visitHint is how many states its last finished execution visited at the top level.
	visitHint atomic.Int32
}

// maxHistHint bounds the records reserved up front (a Map reserves its own).
const maxHistHint = 8192

// optPath is a JSONPath-mode path field that may be absent (the default applies), null, or a path.
type optPath struct {
	Set  bool
	Null bool
	Path compiledPath
}

// State is one state of any type; the fields a type does not use stay zero.
type State struct {
	Name          string
	Type          string
	events        [2]string // its entered and exited event types
	Comment       string
	QueryLanguage string // effective: the state's own, or the machine's
	Next          string
	End           bool

	// JSONPath data flow.
	InputPath, OutputPath, ResultPath optPath
	Parameters                        *template // also Map's legacy Parameters
	ResultSelector                    *template
	Result                            any
	HasResult                         bool
	Assign                            *assignment

	// JSONata data flow.
	Arguments *jsonataValue
	Output    *jsonataValue

	// Task.
	Resource         string
	resource         resourceRef
	TimeoutSeconds   *numField
	HeartbeatSeconds *numField
	Retry            []*Retrier
	Catch            []*Catcher

	// Choice.
	Choices []*ChoiceRule
	Default string

	// Wait.
	Seconds   *numField
	Timestamp *timeField

	// Fail.
	Error, Cause *strField

	// Parallel.
	Branches []*Machine

	// Map.
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

// numField is an integer field given literally, by a JSONPath (`...Path`) or by JSONata.
type numField struct {
	Value   float64
	Path    compiledPath
	JSONata *jsonataValue
}

// strField is a string field given literally, by a path or intrinsic (`...Path`), or by JSONata.
type strField struct {
	Value     string
	Path      compiledPath
	Intrinsic compiledIntrinsic
	JSONata   *jsonataValue
}

// timeField is Wait's Timestamp.
type timeField struct {
	Value   time.Time
	Path    compiledPath
	JSONata *jsonataValue
}

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

// Diagnostic is one finding of validation, shaped as ValidateStateMachineDefinition reports it.
type Diagnostic struct {
	Code     string `json:"code"`
	Location string `json:"location"`
	Message  string `json:"message"`
	Severity string `json:"severity"`
}

// DefinitionError is an invalid definition; its message is CreateStateMachine's.
type DefinitionError struct {
	Diagnostics []Diagnostic
}

func (e *DefinitionError) Error() string {
	parts := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		parts[i] = d.Code + ": " + d.Message + " at " + d.Location
	}
	return "Invalid State Machine Definition: '" + strings.Join(parts, ", ") + "'"
}

// Unwrap gives the typed fault, so fault.KindOf reports InvalidInput.
func (e *DefinitionError) Unwrap() error {
	return &fault.Error{Kind: fault.InvalidInput, Field: "definition", Msg: e.Error()}
}

// Options configures parsing.
type Options struct {
	// JSONata compiles JSONata expressions; without it, definitions that use JSONata are refused.
	JSONata JSONataCompiler
}

// Parse reads and validates a definition as CreateStateMachine does. An invalid definition gives a
// fault.InvalidInput error wrapping *DefinitionError.
func Parse(definition []byte, opts Options) (*Machine, error) {
	doc, err := jsonv.Decode(definition)
	if err != nil {
		return nil, &DefinitionError{Diagnostics: []Diagnostic{{
			Code: "INVALID_JSON_DESCRIPTION", Location: "/", Message: "Definition must be a valid JSON object", Severity: "ERROR"}}}
	}
	p := &parser{opts: opts}
	top, ok := doc.(map[string]any)
	if !ok {
		p.fail("INVALID_JSON_DESCRIPTION", "/", "Definition must be a valid JSON object")
		return nil, p.result()
	}
	lang := JSONPath
	if v, ok := top["QueryLanguage"]; ok {
		s, _ := v.(string)
		if s != JSONPath && s != JSONata {
			p.schema("/QueryLanguage", "The field 'QueryLanguage' should have one of these values: [JSONPath, JSONata]")
		} else {
			lang = s
		}
	}
	p.topLang = lang
	m := p.machine(top, "", lang, true)
	if err := p.result(); err != nil {
		return nil, err
	}
	return m, nil
}

type parser struct {
	opts    Options
	topLang string
	diags   []Diagnostic
}

func (p *parser) fail(code, loc, format string, args ...any) {
	if loc == "" {
		loc = "/"
	}
	p.diags = append(p.diags, Diagnostic{Code: code, Location: loc, Message: fmt.Sprintf(format, args...), Severity: "ERROR"})
}

func (p *parser) schema(loc, format string, args ...any) {
	p.fail("SCHEMA_VALIDATION_FAILED", loc, format, args...)
}

func (p *parser) result() error {
	if len(p.diags) == 0 {
		return nil
	}
	return &DefinitionError{Diagnostics: p.diags}
}

var machineFields = map[string]bool{"StartAt": true, "States": true, "Comment": true, "Version": true, "TimeoutSeconds": true, "QueryLanguage": true}
var processorFields = map[string]bool{"StartAt": true, "States": true, "Comment": true, "ProcessorConfig": true, "QueryLanguage": true}

func (p *parser) machine(obj map[string]any, loc string, lang string, top bool) *Machine {
	m := &Machine{QueryLanguage: lang, States: map[string]*State{}}
	allowed := machineFields
	if !top {
		allowed = processorFields
	}
	var missing []string
	if _, ok := obj["States"]; !ok {
		missing = append(missing, "States")
	}
	if _, ok := obj["StartAt"]; !ok {
		missing = append(missing, "StartAt")
	}
	if len(missing) > 0 {
		p.schema(locOr(loc), "These fields are required: [%s]", strings.Join(missing, ", "))
		return m
	}
	for _, k := range sortedKeys(obj) {
		if !allowed[k] {
			p.schema(locOr(loc), "The field '%s' is not supported by Step Functions", k)
		}
	}
	start, ok := obj["StartAt"].(string)
	if !ok {
		p.schema(loc+"/StartAt", "The field 'StartAt' must be a string")
	}
	m.StartAt = start
	m.Comment, _ = obj["Comment"].(string)
	if top {
		if v, ok := obj["TimeoutSeconds"]; ok {
			n, ok := asInt(v)
			if !ok || n < 0 {
				p.schema("/TimeoutSeconds", "The field 'TimeoutSeconds' must be a non-negative integer")
			}
			m.TimeoutSeconds = n
		}
	}
	states, ok := obj["States"].(map[string]any)
	if !ok {
		p.schema(loc+"/States", "The field 'States' must be an object")
		return m
	}
	if len(states) == 0 {
		p.schema(loc+"/States", "Value cannot be empty")
	}
	m.order = sortedKeys(states)
	for _, name := range m.order {
		sloc := loc + "/States/" + name
		if len(name) > 80 {
			p.schema(sloc, "State names must be at most 80 characters")
		}
		sobj, ok := states[name].(map[string]any)
		if !ok {
			p.schema(sloc, "The state must be an object")
			continue
		}
		if st := p.state(name, sobj, sloc, lang); st != nil {
			m.States[name] = st
		}
	}
	p.transitions(m, loc)
	return m
}

// transitions checks every target exists and every state is reachable from StartAt.
func (p *parser) transitions(m *Machine, loc string) {
	if m.StartAt == "" {
		return
	}
	if _, ok := m.States[m.StartAt]; !ok {
		p.fail("MISSING_TRANSITION_TARGET", loc+"/StartAt", "Missing 'Next' target: %s", m.StartAt)
		return
	}
	check := func(target, at string) {
		if _, ok := m.States[target]; !ok {
			p.fail("MISSING_TRANSITION_TARGET", at, "Missing 'Next' target: %s", target)
		}
	}
	for _, name := range m.order {
		st := m.States[name]
		if st == nil {
			continue
		}
		sloc := loc + "/States/" + name
		if st.Next != "" {
			check(st.Next, sloc+"/Next")
		}
		if st.Default != "" {
			check(st.Default, sloc+"/Default")
		}
		for i, c := range st.Choices {
			check(c.Next, fmt.Sprintf("%s/Choices/%d/Next", sloc, i))
		}
		for i, c := range st.Catch {
			check(c.Next, fmt.Sprintf("%s/Catch/%d/Next", sloc, i))
		}
	}
	seen := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		st := m.States[n]
		if st == nil || seen[n] {
			return
		}
		seen[n] = true
		for _, t := range st.targets() {
			visit(t)
		}
	}
	visit(m.StartAt)
	for _, name := range m.order {
		if m.States[name] != nil && !seen[name] {
			p.fail("MISSING_TRANSITION_TARGET", loc+"/States/"+name, "State \"%s\" is not reachable", name)
		}
	}
}

func (s *State) targets() []string {
	var t []string
	if s.Next != "" {
		t = append(t, s.Next)
	}
	if s.Default != "" {
		t = append(t, s.Default)
	}
	for _, c := range s.Choices {
		t = append(t, c.Next)
	}
	for _, c := range s.Catch {
		t = append(t, c.Next)
	}
	return t
}

// Fields by state type, in each query language (CreateStateMachine refuses the others).
var (
	commonFields   = []string{"Type", "Comment", "QueryLanguage"}
	flowFields     = []string{"Next", "End"}
	jsonPathIO     = []string{"InputPath", "OutputPath"}
	fieldsByType   = map[string]map[string][]string{}
	jsonPathOnly   = map[string]bool{"InputPath": true, "OutputPath": true, "Parameters": true, "ResultSelector": true, "ResultPath": true, "Result": true, "ItemsPath": true, "ItemSelectorPath": true, "SecondsPath": true, "TimestampPath": true, "TimeoutSecondsPath": true, "HeartbeatSecondsPath": true, "ErrorPath": true, "CausePath": true, "MaxConcurrencyPath": true, "ToleratedFailureCountPath": true, "ToleratedFailurePercentagePath": true, "Iterator": true}
	jsonataOnly    = map[string]bool{"Arguments": true, "Output": true, "Items": true}
	resourceFields = []string{"Resource", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds", "HeartbeatSecondsPath", "Credentials"}
)

func init() {
	add := func(typ string, fields ...[]string) {
		m := map[string][]string{}
		var all []string
		for _, f := range fields {
			all = append(all, f...)
		}
		m["all"] = all
		fieldsByType[typ] = m
	}
	errs := []string{"Retry", "Catch"}
	add(TypePass, commonFields, flowFields, jsonPathIO, []string{"Parameters", "Result", "ResultPath", "Assign", "Output"})
	add(TypeTask, commonFields, flowFields, jsonPathIO, resourceFields, errs, []string{"Parameters", "ResultSelector", "ResultPath", "Assign", "Arguments", "Output"})
	add(TypeChoice, commonFields, jsonPathIO, []string{"Choices", "Default", "Assign", "Output"})
	add(TypeWait, commonFields, flowFields, jsonPathIO, []string{"Seconds", "SecondsPath", "Timestamp", "TimestampPath", "Assign", "Output"})
	add(TypeSucceed, commonFields, jsonPathIO, []string{"Output"})
	add(TypeFail, commonFields, []string{"Error", "ErrorPath", "Cause", "CausePath"})
	add(TypeParallel, commonFields, flowFields, jsonPathIO, errs, []string{"Branches", "Parameters", "ResultSelector", "ResultPath", "Assign", "Arguments", "Output"})
	add(TypeMap, commonFields, flowFields, jsonPathIO, errs, []string{"Iterator", "ItemProcessor", "ItemsPath", "Items", "ItemSelector", "Parameters", "ResultSelector", "ResultPath", "MaxConcurrency", "MaxConcurrencyPath", "ToleratedFailureCount", "ToleratedFailureCountPath", "ToleratedFailurePercentage", "ToleratedFailurePercentagePath", "Label", "Assign", "Arguments", "Output", "ItemReader", "ItemBatcher", "ResultWriter"})
}

func (p *parser) state(name string, obj map[string]any, loc string, machineLang string) *State {
	typ, _ := obj["Type"].(string)
	if _, ok := fieldsByType[typ]; !ok {
		if _, present := obj["Type"]; !present {
			p.schema(loc, "These fields are required: [Type]")
		} else {
			p.schema(loc+"/Type", "The field 'Type' should have one of these values: [%s]", strings.Join(stateTypes, ", "))
		}
		return nil
	}
	st := &State{Name: name, Type: typ, QueryLanguage: machineLang, events: stateEvents[typ]}
	st.Comment, _ = obj["Comment"].(string)
	if v, ok := obj["QueryLanguage"]; ok {
		s, _ := v.(string)
		switch {
		case s != JSONPath && s != JSONata:
			p.schema(loc+"/QueryLanguage", "The field 'QueryLanguage' should have one of these values: [JSONPath, JSONata]")
		case s == JSONPath && p.topLang == JSONata:
			p.schema(loc, "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine")
		default:
			st.QueryLanguage = s
		}
	}
	allowed := map[string]bool{}
	for _, f := range fieldsByType[typ]["all"] {
		allowed[f] = true
	}
	for _, k := range sortedKeys(obj) {
		switch {
		case !allowed[k]:
			p.schema(loc, "The field '%s' is not supported by Step Functions", k)
		case st.QueryLanguage == JSONata && jsonPathOnly[k]:
			p.schema(loc, "The field '%s' is not supported for the JSONata query language", k)
		case st.QueryLanguage == JSONPath && jsonataOnly[k]:
			p.schema(loc, "The field '%s' is not supported for the JSONPath query language", k)
		}
	}
	jp := st.QueryLanguage == JSONPath

	// Transitions.
	if typ != TypeChoice && typ != TypeSucceed && typ != TypeFail {
		next, hasNext := obj["Next"]
		end, _ := obj["End"].(bool)
		switch {
		case hasNext && end:
			p.schema(loc, "Only one of 'Next' or 'End' may be set")
		case hasNext:
			s, ok := next.(string)
			if !ok || s == "" {
				p.schema(loc+"/Next", "The field 'Next' must be a non-empty string")
			}
			st.Next = s
		case end:
			st.End = true
		default:
			p.schema(loc, "These fields are required: [Next] or [End]")
		}
	}

	if jp {
		st.InputPath = p.optPathField(obj, "InputPath", loc, false)
		st.OutputPath = p.optPathField(obj, "OutputPath", loc, false)
		st.ResultPath = p.optPathField(obj, "ResultPath", loc, true)
		if v, ok := obj["Parameters"]; ok {
			st.Parameters = p.template(v, loc+"/Parameters")
		}
		if v, ok := obj["ResultSelector"]; ok {
			st.ResultSelector = p.template(v, loc+"/ResultSelector")
		}
		if v, ok := obj["Result"]; ok {
			st.Result, st.HasResult = v, true
		}
	} else {
		st.Arguments = p.jsonataField(obj, "Arguments", loc)
		st.Output = p.jsonataField(obj, "Output", loc)
	}
	if v, ok := obj["Assign"]; ok {
		st.Assign = p.assign(v, loc+"/Assign", st.QueryLanguage)
	}

	switch typ {
	case TypeTask:
		p.task(st, obj, loc)
	case TypeChoice:
		p.choice(st, obj, loc)
	case TypeWait:
		p.wait(st, obj, loc)
	case TypeFail:
		st.Error = p.strFieldOf(obj, "Error", "ErrorPath", loc, jp)
		st.Cause = p.strFieldOf(obj, "Cause", "CausePath", loc, jp)
	case TypeParallel:
		p.parallel(st, obj, loc)
	case TypeMap:
		p.mapState(st, obj, loc)
	}
	if typ == TypeTask || typ == TypeParallel || typ == TypeMap {
		p.errorHandling(st, obj, loc)
	}
	return st
}

func (p *parser) task(st *State, obj map[string]any, loc string) {
	res, ok := obj["Resource"].(string)
	if !ok || res == "" {
		p.schema(loc, "These fields are required: [Resource]")
		return
	}
	st.Resource = res
	ref, err := parseResource(res)
	if err != nil {
		p.schema(loc+"/Resource", "The resource provided %s is not recognized. The value is not a valid resource ARN, or the resource is not available in this region.", res)
	}
	st.resource = ref
	jp := st.QueryLanguage == JSONPath
	st.TimeoutSeconds = p.numFieldOf(obj, "TimeoutSeconds", "TimeoutSecondsPath", loc, jp, 1, 99999999)
	st.HeartbeatSeconds = p.numFieldOf(obj, "HeartbeatSeconds", "HeartbeatSecondsPath", loc, jp, 1, 99999999)
	if st.TimeoutSeconds != nil && st.HeartbeatSeconds != nil && st.TimeoutSeconds.Path == nil && st.HeartbeatSeconds.Path == nil &&
		st.TimeoutSeconds.JSONata == nil && st.HeartbeatSeconds.JSONata == nil && st.HeartbeatSeconds.Value >= st.TimeoutSeconds.Value {
		p.schema(loc+"/HeartbeatSeconds", "HeartbeatSeconds must be smaller than TimeoutSeconds")
	}
}

func (p *parser) wait(st *State, obj map[string]any, loc string) {
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
	st.Seconds = p.numFieldOf(obj, "Seconds", "SecondsPath", loc, jp, 0, 99999999)
	if v, ok := obj["Timestamp"]; ok {
		if jv := p.jsonataString(v, loc+"/Timestamp", st.QueryLanguage); jv != nil {
			st.Timestamp = &timeField{JSONata: jv}
		} else {
			s, _ := v.(string)
			t, ok := parseTimestamp(s)
			if !ok {
				p.schema(loc+"/Timestamp", "String does not match RFC3339 timestamp")
			}
			st.Timestamp = &timeField{Value: t}
		}
	}
	if v, ok := obj["TimestampPath"]; ok && jp {
		st.Timestamp = &timeField{Path: p.refPath(v, "TimestampPath", loc)}
	}
}

func (p *parser) parallel(st *State, obj map[string]any, loc string) {
	branches, ok := obj["Branches"].([]any)
	if !ok {
		p.schema(loc, "These fields are required: [Branches]")
		return
	}
	if len(branches) == 0 {
		p.schema(loc+"/Branches", "Value cannot be empty")
	}
	for i, b := range branches {
		bo, ok := b.(map[string]any)
		bloc := fmt.Sprintf("%s/Branches[%d]", loc, i)
		if !ok {
			p.schema(bloc, "A branch must be an object")
			continue
		}
		st.Branches = append(st.Branches, p.machine(bo, bloc, st.QueryLanguage, false))
	}
	if st.QueryLanguage == JSONPath {
		// Parallel's Parameters are its branches' input.
		_ = st.Parameters
	}
}

func (p *parser) mapState(st *State, obj map[string]any, loc string) {
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
	p.processorConfig(st, proc, loc+"/"+procKey)
	if _, ok := obj["ItemReader"]; ok {
		p.schema(loc+"/ItemReader", "ItemReader reads the items from Amazon S3, which this engine cannot reach: give the items inline with ItemsPath (JSONPath) or Items (JSONata)")
	}
	if _, ok := obj["ResultWriter"]; ok {
		p.schema(loc+"/ResultWriter", "ResultWriter writes the results to Amazon S3, which this engine cannot reach: remove it, and the Map state's output holds the results")
	}
	for _, k := range []string{"ItemBatcher", "Label"} {
		if _, ok := obj[k]; ok && !st.Distributed {
			p.schema(loc, "The field '%s' is only supported by a Map state whose ItemProcessor has ProcessorConfig.Mode DISTRIBUTED", k)
		}
	}
	if v, ok := obj["Label"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" || len(s) > 40 || strings.ContainsAny(s, " \t\n<>{}[]?*\"#%\\^|~`$&,;:/") {
			p.schema(loc+"/Label", "The field 'Label' must be a string of 1 to 40 characters without whitespace or any of < > { } [ ] ? * \" # %% \\ ^ | ~ ` $ & , ; : /")
		}
		st.Label = s
	}
	if v, ok := obj["ItemBatcher"]; ok && st.Distributed {
		st.ItemBatcher = p.itemBatcher(v, loc+"/ItemBatcher", st.QueryLanguage)
	}
	st.Processor = p.machine(proc, loc+"/"+procKey, st.QueryLanguage, false)
	if jp {
		st.ItemsPath = p.optPathField(obj, "ItemsPath", loc, true)
	} else {
		st.Items = p.jsonataField(obj, "Items", loc)
	}
	if v, ok := obj["ItemSelector"]; ok {
		if jp {
			st.ItemSelector = p.template(v, loc+"/ItemSelector")
		} else {
			st.ItemSelector = &template{jsonata: p.jsonataTemplate(v, loc+"/ItemSelector")}
		}
	} else if st.Parameters != nil {
		// Legacy Map: Parameters play ItemSelector's part.
		st.ItemSelector, st.Parameters = st.Parameters, nil
	}
	st.MaxConcurrency = p.numFieldOf(obj, "MaxConcurrency", "MaxConcurrencyPath", loc, jp, 0, math.MaxInt32)
	st.ToleratedFailureCount = p.numFieldOf(obj, "ToleratedFailureCount", "ToleratedFailureCountPath", loc, jp, 0, math.MaxInt32)
	st.ToleratedFailurePercentage = p.numFieldOf(obj, "ToleratedFailurePercentage", "ToleratedFailurePercentagePath", loc, jp, 0, 100)
}

func (p *parser) errorHandling(st *State, obj map[string]any, loc string) {
	if v, ok := obj["Retry"]; ok {
		arr, ok := v.([]any)
		if !ok {
			p.schema(loc+"/Retry", "The field 'Retry' must be an array")
		}
		for i, r := range arr {
			rloc := fmt.Sprintf("%s/Retry[%d]", loc, i)
			ro, ok := r.(map[string]any)
			if !ok {
				p.schema(rloc, "A retrier must be an object")
				continue
			}
			rt := &Retrier{IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2}
			rt.ErrorEquals = p.errorEquals(ro, rloc, i == len(arr)-1)
			for _, k := range sortedKeys(ro) {
				v := ro[k]
				switch k {
				case "ErrorEquals", "Comment":
				case "IntervalSeconds":
					n, ok := asInt(v)
					if !ok || n < 1 || n > 99999999 {
						p.schema(rloc+"/IntervalSeconds", "The field 'IntervalSeconds' must be an integer between 1 and 99999999")
					}
					rt.IntervalSeconds = float64(n)
				case "MaxAttempts":
					n, ok := asInt(v)
					if !ok || n < 0 || n > 99999999 {
						p.schema(rloc+"/MaxAttempts", "The field 'MaxAttempts' must be an integer between 0 and 99999999")
					}
					rt.MaxAttempts = int(n)
				case "BackoffRate":
					f, ok := jsonv.ToFloat(v)
					if !ok || f < 1 {
						p.schema(rloc+"/BackoffRate", "The field 'BackoffRate' must be a number of at least 1.0")
					}
					rt.BackoffRate = f
				case "MaxDelaySeconds":
					n, ok := asInt(v)
					if !ok || n < 1 || n > 31622400 {
						p.schema(rloc+"/MaxDelaySeconds", "The field 'MaxDelaySeconds' must be an integer between 1 and 31622400")
					}
					rt.MaxDelaySeconds = float64(n)
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
			st.Retry = append(st.Retry, rt)
		}
	}
	if v, ok := obj["Catch"]; ok {
		arr, ok := v.([]any)
		if !ok {
			p.schema(loc+"/Catch", "The field 'Catch' must be an array")
		}
		for i, c := range arr {
			cloc := fmt.Sprintf("%s/Catch[%d]", loc, i)
			co, ok := c.(map[string]any)
			if !ok {
				p.schema(cloc, "A catcher must be an object")
				continue
			}
			ct := &Catcher{}
			ct.ErrorEquals = p.errorEquals(co, cloc, i == len(arr)-1)
			next, _ := co["Next"].(string)
			if next == "" {
				p.schema(cloc, "These fields are required: [Next]")
			}
			ct.Next = next
			for _, k := range sortedKeys(co) {
				switch k {
				case "ErrorEquals", "Next", "Comment":
				case "ResultPath":
					if st.QueryLanguage != JSONPath {
						p.schema(cloc, "The field 'ResultPath' is not supported for the JSONata query language")
					}
					ct.ResultPath = p.optPathField(co, "ResultPath", cloc, true)
				case "Assign":
					ct.Assign = p.assign(co[k], cloc+"/Assign", st.QueryLanguage)
				case "Output":
					if st.QueryLanguage != JSONata {
						p.schema(cloc, "The field 'Output' is not supported for the JSONPath query language")
					}
					ct.Output = p.jsonataField(co, "Output", cloc)
				default:
					p.schema(cloc, "The field '%s' is not supported by Step Functions", k)
				}
			}
			st.Catch = append(st.Catch, ct)
		}
	}
}

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
// behaviour).
func (p *parser) optPathField(obj map[string]any, field, loc string, reference bool) optPath {
	v, ok := obj[field]
	if !ok {
		return optPath{}
	}
	if v == nil {
		return optPath{Set: true, Null: true}
	}
	s, isStr := v.(string)
	var cp compiledPath
	var err error
	if isStr {
		if reference {
			cp, err = parseReference(s)
		} else {
			cp, err = parsePath(s)
		}
	}
	if !isStr || err != nil {
		p.schema(loc+"/"+field, "The value for the field '%s' must be a valid JSONPath", field)
		return optPath{}
	}
	return optPath{Set: true, Path: cp}
}

func (p *parser) refPath(v any, field, loc string) compiledPath {
	s, ok := v.(string)
	if !ok {
		p.schema(loc+"/"+field, "The value for the field '%s' must be a valid JSONPath", field)
		return nil
	}
	cp, err := parseReference(s)
	if err != nil {
		p.schema(loc+"/"+field, "The value for the field '%s' must be a valid JSONPath", field)
		return nil
	}
	return cp
}

// numFieldOf reads an integer field, its `...Path` form (JSONPath), or a `{% %}` string (JSONata).
func (p *parser) numFieldOf(obj map[string]any, field, pathField, loc string, jp bool, min, max float64) *numField {
	v, ok := obj[field]
	_, hasPath := obj[pathField]
	if ok && hasPath {
		p.schema(loc, "Only one of '%s' or '%s' may be set", field, pathField)
		return nil
	}
	if hasPath && jp {
		return &numField{Path: p.refPath(obj[pathField], pathField, loc)}
	}
	if !ok {
		return nil
	}
	if !jp {
		if jv := p.jsonataString(v, loc+"/"+field, JSONata); jv != nil {
			return &numField{JSONata: jv}
		}
	}
	f, isNum := jsonv.ToFloat(v)
	if !isNum || f < min || f > max || (field != "ToleratedFailurePercentage" && f != math.Trunc(f)) {
		p.schema(loc+"/"+field, "The field '%s' must be a number between %v and %v", field, min, max)
		return nil
	}
	return &numField{Value: f}
}

func (p *parser) strFieldOf(obj map[string]any, field, pathField, loc string, jp bool) *strField {
	v, ok := obj[field]
	pv, hasPath := obj[pathField]
	if ok && hasPath {
		p.schema(loc, "Only one of '%s' or '%s' may be set", field, pathField)
		return nil
	}
	if hasPath && jp {
		s, _ := pv.(string)
		if isIntrinsic(s) {
			in, err := parseIntrinsic(s)
			if err != nil {
				p.schema(loc+"/"+pathField, "The value for the field '%s' must be a valid JSONPath or a valid intrinsic function call", pathField)
				return nil
			}
			return &strField{Intrinsic: in}
		}
		cp, err := parsePath(s)
		if err != nil {
			p.schema(loc+"/"+pathField, "The value for the field '%s' must be a valid JSONPath or a valid intrinsic function call", pathField)
			return nil
		}
		return &strField{Path: cp}
	}
	if !ok {
		return nil
	}
	if !jp {
		if jv := p.jsonataString(v, loc+"/"+field, JSONata); jv != nil {
			return &strField{JSONata: jv}
		}
	}
	s, isStr := v.(string)
	if !isStr {
		p.schema(loc+"/"+field, "The field '%s' must be a string", field)
		return nil
	}
	return &strField{Value: s}
}

// parseTimestamp accepts RFC 3339 timestamps with a 'T' and an offset, as Step Functions does.
func parseTimestamp(s string) (time.Time, bool) {
	if !strings.Contains(s, "T") {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func locOr(loc string) string {
	if loc == "" {
		return "/"
	}
	return loc
}
