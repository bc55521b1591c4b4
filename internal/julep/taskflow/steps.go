package taskflow

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Kinds of step, as Julep's kind_ names them.
const (
	KindEvaluate     = "evaluate"
	KindToolCall     = "tool_call"
	KindPrompt       = "prompt"
	KindGet          = "get"
	KindSet          = "set"
	KindLog          = "log"
	KindYield        = "yield" // {workflow, arguments}
	KindReturn       = "return"
	KindSleep        = "sleep"
	KindError        = "error"
	KindWaitForInput = "wait_for_input"
	KindIfElse       = "if_else"
	KindSwitch       = "switch"
	KindForeach      = "foreach"
	KindParallel     = "parallel"
	KindMap          = "map_reduce"
)

// keyOf is the field that tells a step's kind when kind_ is absent (Julep's request shapes carry
// no kind_: the SDK sends the step as written).
var keyOf = map[string]string{
	"evaluate": KindEvaluate, "tool": KindToolCall, "prompt": KindPrompt, "get": KindGet, "set": KindSet,
	"log": KindLog, "workflow": KindYield, "return": KindReturn, "sleep": KindSleep, "error": KindError,
	"wait_for_input": KindWaitForInput, "if": KindIfElse, "switch": KindSwitch, "foreach": KindForeach,
	"parallel": KindParallel, "over": KindMap,
}

// detectOrder: a step with if (its then may hold anything) or over (with map) is told by those
// first; the others have one distinguishing key each.
var detectOrder = []string{"if", "over", "switch", "foreach", "parallel", "evaluate", "tool", "prompt", "get", "set",
	"log", "workflow", "return", "sleep", "error", "wait_for_input"}

// fieldsOf are the fields each kind takes besides kind_ and label.
var fieldsOf = map[string][]string{
	KindEvaluate: {"evaluate"}, KindToolCall: {"tool", "arguments"},
	KindPrompt: {"prompt", "tools", "tool_choice", "settings", "unwrap", "auto_run_tools", "disable_cache"},
	KindGet:    {"get"}, KindSet: {"set"}, KindLog: {"log"}, KindYield: {"workflow", "arguments"},
	KindReturn: {"return"}, KindSleep: {"sleep"}, KindError: {"error"}, KindWaitForInput: {"wait_for_input"},
	KindIfElse: {"if", "then", "else"}, KindSwitch: {"switch"}, KindForeach: {"foreach"},
	KindParallel: {"parallel"}, KindMap: {"over", "map", "reduce", "initial", "parallelism"},
}

// Step is one step of a workflow: its kind and its fields as Julep's JSON gives them.
type Step struct {
	Kind   string
	Label  string
	Fields map[string]any
}

// Error is a task the compiler refuses: where (workflow name and step path, e.g. main[2].then) and
// why. The routes answer it as a 400 naming the step.
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string { return e.Path + ": " + e.Msg }

func errAt(path, format string, args ...any) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// ParseStep reads one step at path.
func ParseStep(path string, v any) (*Step, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errAt(path, "a step is an object, e.g. {\"evaluate\": {...}} or {\"tool\": \"name\", \"arguments\": {...}}")
	}
	kind, _ := m["kind_"].(string)
	if kind == "" {
		for _, k := range detectOrder {
			if _, ok := m[k]; ok {
				kind = keyOf[k]
				break
			}
		}
	}
	if kind == "" {
		return nil, errAt(path, "not a step of a kind sinew knows (keys %v): give evaluate, tool, prompt, get, set, log, workflow, return, sleep, error, wait_for_input, if, switch, foreach, parallel or over", keys(m))
	}
	allowed, ok := fieldsOf[kind]
	if !ok {
		return nil, errAt(path, "unknown kind_ %q", kind)
	}
	s := &Step{Kind: kind, Fields: map[string]any{}}
	for k, val := range m {
		switch {
		case k == "kind_":
		case k == "label":
			if val != nil {
				l, ok := val.(string)
				if !ok {
					return nil, errAt(path+".label", "label must be a string")
				}
				s.Label = l
			}
		case slices.Contains(allowed, k):
			s.Fields[k] = val
		default:
			return nil, errAt(path+"."+k, "a %s step has no field %q (it takes %s)", kind, k, strings.Join(allowed, ", "))
		}
	}
	return s, nil
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
