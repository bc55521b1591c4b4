package conformance

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"sinew/internal/jsonv"
)

// The manifest pairs every usable recorded execution with what is needed to replay it. It is
// checked in beside the usable set (usable.txt, the fixed denominator) and the pass list
// (passing.txt, what `go test` enforces).
var (
	//go:embed manifest.json
	manifestJSON []byte
	//go:embed usable.txt
	usableTxt []byte
	//go:embed passing.txt
	passingTxt []byte
)

// Manifest is the checked-in list of cases.
type Manifest struct {
	Cases []Case `json:"cases"`
}

// Case is one recorded test (one node id) and how to replay its recorded executions.
type Case struct {
	Area     string `json:"area"`     // reporting group, e.g. "scenarios/map"
	Snapshot string `json:"snapshot"` // relative to v2/
	Test     string `json:"test"`     // suffix of the node id, e.g. "::test_state_pass_result"
	// Kind is "history" (default: recorded GetExecutionHistory per key) or "choice-operators"
	// (the recorded {input, output} cases of every test in Snapshot; Test is then empty).
	Kind string `json:"kind,omitempty"`
	// Keys are the recorded keys to replay; default ["get_execution_history"]; ["*"] means every
	// recorded key holding a history (the intrinsic tests record one per input).
	Keys     []string `json:"keys,omitempty"`
	Template string   `json:"template"` // relative to templates/
	Patches  []Patch  `json:"patches,omitempty"`
	// Input overrides the recorded input when the recording's is lossy or names a real resource.
	Input string `json:"input,omitempty"`
	// Inputs, for kind choice-operators, replace lossy recorded inputs (timestamps the recording
	// replaced by "date"), keyed "<test>/<case index>", taken from the Python test's lists.
	Inputs map[string]string `json:"inputs,omitempty"`
	// Lambda, when set, names the stub (see defaultLambdas) that answers every Lambda call of the
	// case, whatever function name the template or input carries (the recordings hide the names).
	Lambda string `json:"lambda,omitempty"`
	// Note says what the manifest row could not reproduce of the Python test, for a reader.
	Note string `json:"note,omitempty"`
	// Consumer names the recorded SQS consumer that answers task tokens (see consumers).
	Consumer string `json:"consumer,omitempty"`
	// Child is the template started by states:startExecution tasks, under ChildArn.
	Child    string `json:"child,omitempty"`
	ChildArn string `json:"child_arn,omitempty"`
	// Status, when set, is the final status the execution must reach too.
	Status  string      `json:"status,omitempty"`
	Options CaseOptions `json:"options,omitempty"`
	// Reason, for a case known to fail, says why (engine gap, unreproducible recording).
	Reason string `json:"reason,omitempty"`
}

// Patch is one change the Python test made to its template. Exactly one of the forms is set.
type Patch struct {
	Replace string `json:"replace,omitempty"` // text to replace everywhere...
	With    string `json:"with,omitempty"`    // ...by this
	// DropFirstCatcher removes this state's first catcher and the state it led to.
	DropFirstCatcher string `json:"drop_first_catcher,omitempty"`
	// Set (a JSON pointer such as /States/Start/Resource) gets Value; without a Value the member
	// is removed.
	Set   string          `json:"set,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// CaseOptions is Options as JSON.
type CaseOptions struct {
	Ignore      []string `json:"ignore,omitempty"`
	Unordered   bool     `json:"unordered,omitempty"`
	Drop        []string `json:"drop,omitempty"`
	LooseLambda bool     `json:"loose_lambda,omitempty"`
	// Rewrite applies [regexp, replacement] pairs to our history's JSON text: the recording's own
	// test-specific normalisers (random numbers, generated UUIDs).
	Rewrite [][2]string `json:"rewrite,omitempty"`
	// LegacyMapRunLink is for recordings made before November 2024, when AWS linked a distributed
	// Map's MapStateExited to MapRunSucceeded; since then (every later recording) it links
	// MapRunStarted, as the engine does. Our link is moved to the MapRunSucceeded that follows, so
	// the rest of the recording is still compared exactly.
	LegacyMapRunLink bool `json:"legacy_map_run_link,omitempty"`
}

func (o CaseOptions) diff() Options {
	return Options{IgnoreDetails: o.Ignore, Unordered: o.Unordered, DropTypes: o.Drop, LooseLambdaErrors: o.LooseLambda}
}

// LoadManifest reads the embedded manifest.
func LoadManifest() (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(manifestJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	return &m, nil
}

// KeyList reads one of the embedded key lists ("usable" or "passing"): one snapshot key a line,
// '#' comments allowed.
func KeyList(name string) map[string]bool {
	src := usableTxt
	if name == "passing" {
		src = passingTxt
	}
	out := map[string]bool{}
	for _, l := range strings.Split(string(src), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	return out
}

// Result is the outcome of one recorded execution.
type Result struct {
	Key    string // snapshot key: <snapshot>|<test>|<recorded key>
	Area   string
	Diffs  []string
	Err    error
	Reason string // the manifest's reason, for a known failure
}

// Passed reports whether our execution agreed with the recording.
func (r Result) Passed() bool { return r.Err == nil && len(r.Diffs) == 0 }

// Why is a one-line reason for a failure.
func (r Result) Why() string {
	var s string
	switch {
	case r.Err != nil:
		s = r.Err.Error()
	case len(r.Diffs) > 0:
		s = r.Diffs[0]
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if r.Reason != "" {
		return r.Reason + " — " + s
	}
	return s
}

func (p Patch) apply(def []byte) ([]byte, error) {
	switch {
	case p.Replace != "":
		return []byte(strings.ReplaceAll(string(def), p.Replace, p.With)), nil
	case p.DropFirstCatcher != "":
		return dropFirstCatcher(def, p.DropFirstCatcher)
	case p.Set != "":
		return setPointer(def, p.Set, p.Value)
	}
	return nil, fmt.Errorf("empty patch")
}

// dropFirstCatcher removes a state's first catcher and the state it led to, as the
// catch_state_all tests do to let States.ALL catch States.DataLimitExceeded.
func dropFirstCatcher(def []byte, state string) ([]byte, error) {
	v, err := jsonv.Decode(def)
	if err != nil {
		return nil, err
	}
	states, _ := v.(map[string]any)["States"].(map[string]any)
	st, _ := states[state].(map[string]any)
	catchers, _ := st["Catch"].([]any)
	if len(catchers) == 0 {
		return nil, fmt.Errorf("state %q has no catcher", state)
	}
	if next, ok := catchers[0].(map[string]any)["Next"].(string); ok {
		delete(states, next)
	}
	st["Catch"] = catchers[1:]
	return []byte(jsonv.EncodeString(v)), nil
}

// setPointer sets the value at a JSON pointer (RFC 6901), creating the last member; an empty raw
// value removes it.
func setPointer(def []byte, ptr string, raw json.RawMessage) ([]byte, error) {
	v, err := jsonv.Decode(def)
	if err != nil {
		return nil, err
	}
	var val any
	if len(raw) > 0 {
		if val, err = jsonv.Decode(raw); err != nil {
			return nil, fmt.Errorf("%s: value: %w", ptr, err)
		}
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	cur := v
	for i, p := range parts {
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: not an object at %q", ptr, p)
		}
		if i == len(parts)-1 {
			if len(raw) == 0 {
				delete(obj, p)
			} else {
				obj[p] = val
			}
			break
		}
		cur = obj[p]
	}
	return []byte(jsonv.EncodeString(v)), nil
}
