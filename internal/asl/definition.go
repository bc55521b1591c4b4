package asl

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Query languages.
const (
	JSONPath = "JSONPath"
	JSONata  = "JSONata"
)

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

// machine parses a state machine, a Parallel branch or a Map's item processor (top: the first).
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
	for _, name := range m.order {
		st := m.States[name]
		if st == nil {
			continue
		}
		for _, e := range st.edges() {
			if _, ok := m.States[e.to]; !ok {
				p.fail("MISSING_TRANSITION_TARGET", loc+"/States/"+name+"/"+e.field, "Missing 'Next' target: %s", e.to)
			}
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
		for _, e := range st.edges() {
			visit(e.to)
		}
	}
	visit(m.StartAt)
	for _, name := range m.order {
		if m.States[name] != nil && !seen[name] {
			p.fail("MISSING_TRANSITION_TARGET", loc+"/States/"+name, "State \"%s\" is not reachable", name)
		}
	}
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
