package conformance

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
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

func runKey(snapshot, test, key string) string { return snapshot + "|" + test + "|" + key }

// Run replays every recorded execution of a case.
func (c *Case) Run(ctx context.Context, root string) []Result {
	if c.Kind == "choice-operators" {
		return c.runChoice(ctx, root)
	}
	keys := c.Keys
	if len(keys) == 0 {
		keys = []string{"get_execution_history"}
	}
	if len(keys) == 1 && keys[0] == "*" {
		var err error
		if keys, err = Keys(root, c.Snapshot, c.Test); err != nil {
			return []Result{{Key: runKey(c.Snapshot, c.Test, "*"), Area: c.Area, Err: err, Reason: c.Reason}}
		}
	}
	out := make([]Result, 0, len(keys))
	for _, k := range keys {
		r := Result{Key: runKey(c.Snapshot, c.Test, k), Area: c.Area, Reason: c.Reason}
		r.Diffs, r.Err = c.runOne(ctx, root, k)
		out = append(out, r)
	}
	return out
}

func (c *Case) machine(root, tmpl string, patches []Patch) (*asl.Machine, error) {
	def, err := Template(root, tmpl)
	if err != nil {
		return nil, err
	}
	for _, p := range patches {
		if def, err = p.apply(def); err != nil {
			return nil, fmt.Errorf("patch %s: %w", tmpl, err)
		}
	}
	m, err := asl.Parse(def, asl.Options{JSONata: jsonata.New()})
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", tmpl, err)
	}
	return m, nil
}

func (c *Case) runOne(ctx context.Context, root, key string) ([]string, error) {
	rec, err := Load(root, c.Snapshot, c.Test, key)
	if err != nil {
		return nil, err
	}
	m, err := c.machine(root, c.Template, c.Patches)
	if err != nil {
		return nil, err
	}
	clock := asl.NewVirtualClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg := asl.Config{Clock: clock, Lambda: stubInvoker{clock: clock, fns: defaultLambdas, only: c.Lambda}}
	var eng *asl.Engine
	var (
		tokMu  sync.Mutex
		tokens []string // the task tokens handed to the consumer, for the recording's placeholders
	)
	if c.Consumer != "" {
		answer, ok := consumers[c.Consumer]
		if !ok {
			return nil, fmt.Errorf("manifest: unknown consumer %q", c.Consumer)
		}
		record := func(ctx context.Context, eng *asl.Engine, clock asl.Clock, token string, body any) {
			tokMu.Lock()
			tokens = append(tokens, token)
			tokMu.Unlock()
			answer(ctx, eng, clock, token, body)
		}
		cfg.Integrations = map[string]asl.Integration{"sqs:sendMessage": SQSStandIn(func() *asl.Engine { return eng }, clock, record)}
	}
	if c.Child != "" {
		cm, err := c.machine(root, c.Child, nil)
		if err != nil {
			return nil, err
		}
		cfg.Machines = func(arn string) (*asl.Machine, bool) { return cm, arn == c.ChildArn }
	}
	eng = asl.New(cfg)
	input := rec.Input()
	if c.Input != "" {
		input = c.Input
	}
	// Tests that read $$.StateMachine see the recording's placeholder for the machine's name.
	x, err := eng.Start(ctx, asl.StartInput{Machine: m, Input: input,
		StateMachineArn: "arn:aws:states:us-east-1:111111111111:stateMachine:<ArnPart_0idx>"})
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if c.Consumer == "none" {
		// Nobody answers the token: time passes until a timeout (task or heartbeat) ends the wait.
		passTime(wctx, x, clock)
	}
	d, err := x.Wait(wctx)
	if err != nil {
		return nil, fmt.Errorf("wait: %w", err)
	}
	got, err := Normalize(x.History())
	if err != nil {
		return nil, err
	}
	tokMu.Lock()
	var runs []string
	for _, r := range x.MapRuns() {
		runs = append(runs, r.ARN)
	}
	got = c.placeholders(rec, got, x.Describe().ExecutionArn, tokens, runs)
	if c.Options.LegacyMapRunLink {
		legacyMapRunLink(got)
	}
	tokMu.Unlock()
	for _, e := range append(append([]map[string]any{}, rec.Events...), got...) {
		dropHTTPMetadata(e)
	}
	diffs := Diff(rec.Events, got, c.Options.diff())
	if len(diffs) > 0 && d.Status != asl.StatusSucceeded {
		// Lead with how our execution ended: the quickest pointer to the engine's side of a failure.
		diffs[0] = fmt.Sprintf("ours ended %s (%s: %.200s); %s", d.Status, d.Error, d.Cause, diffs[0])
	}
	if c.Status != "" && d.Status != c.Status {
		diffs = append(diffs, fmt.Sprintf("status %s, want %s (%s: %s)", d.Status, c.Status, d.Error, d.Cause))
	}
	return diffs, nil
}

// passTime advances the virtual clock a second at a time while the execution is parked on a task
// token, until it ends or ctx does.
func passTime(ctx context.Context, x *asl.Execution, clock *asl.VirtualClock) {
	for {
		select {
		case <-x.Done():
			return
		case <-ctx.Done():
			return
		case <-time.After(time.Millisecond):
		}
		if x.Parked() {
			clock.Advance(time.Second)
		}
	}
}

// placeholders applies to our history the ARN transformers the recording's test applied, detected
// from the recording itself: partition, region, account, execution name, Lambda function name.
func (c *Case) placeholders(rec *Recording, got []map[string]any, execArn string, tokens []string, mapRuns []string) []map[string]any {
	want := jsonv.EncodeString(rec.Events)
	var pairs []string
	// The role ARN first: a Replacer prefers the earlier pair at the same position.
	if strings.Contains(want, "snf_role_arn") {
		pairs = append(pairs, "arn:aws:iam::000000000000:role/sinew-local", "snf_role_arn")
	}
	// Task tokens: the recording replaced them by a placeholder, seen where the template puts them.
	if m := tokenRE.FindStringSubmatch(want); m != nil {
		for _, t := range tokens {
			if t != "" {
				pairs = append(pairs, t, m[1])
			}
		}
	}
	if strings.Contains(want, "arn:<partition>:") {
		pairs = append(pairs, "arn:aws:", "arn:<partition>:")
	}
	if strings.Contains(want, ":<region>:") {
		pairs = append(pairs, ":us-east-1:", ":<region>:")
	}
	if strings.Contains(want, ":111111111111:") {
		pairs = append(pairs, ":000000000000:", ":111111111111:")
	}
	if i := strings.LastIndex(execArn, ":"); i >= 0 && strings.Contains(want, "<ExecArnPart_0idx>") {
		pairs = append(pairs, execArn[i+1:], "<ExecArnPart_0idx>")
	}

	// Map Run ARNs (mapRun:<machine>/<label or id>:<id>): LocalStack's sfn_map_run_arn replaces
	// both parts after the '/' by indexed placeholders; some tests replace the whole ARN.
	for i, arn := range mapRuns {
		label, id, _ := strings.Cut(arn[strings.LastIndex(arn, "/")+1:], ":")
		for j, part := range []string{label, id} {
			if ph := fmt.Sprintf("<MapRunArnPart%d_%didx>", j, i); strings.Contains(want, ph) {
				// "/<label>:" and "<id>\"": one Replacer pass consumes the ':' between them.
				pairs = append(pairs, "/"+part+":", "/"+ph+":", part+"\"", ph+"\"")
			}
		}
	}
	wholeMapRun := strings.Contains(want, `"mapRunArn":"map_run_arn"`)
	if c.Lambda != "" {
		if m := functionRE.FindStringSubmatch(want); m != nil {
			pairs = append(pairs, ":function:"+c.Lambda, ":function:"+m[1])
		}
	}
	if len(pairs) == 0 && len(c.Options.Rewrite) == 0 && !wholeMapRun {
		return got
	}
	s := strings.NewReplacer(pairs...).Replace(jsonv.EncodeString(got))
	// The context-object normalisers of the recordings: times by their role.
	for _, ph := range []string{"start-time", "<start-time>"} {
		if strings.Contains(want, `"`+ph+`"`) {
			s = startTimeRE.ReplaceAllString(s, `$1"`+ph+`"`)
		}
	}
	for _, ph := range []string{"entered-time", "<entered-time>"} {
		if strings.Contains(want, `"`+ph+`"`) {
			s = enteredTimeRE.ReplaceAllString(s, `$1"`+ph+`"`)
		}
	}
	// ISO-8601 values the recording replaced by "date" (whole JSON strings, also inside JSON text).
	if strings.Contains(want, `date\"`) || strings.Contains(want, `"date"`) {
		s = isoRE.ReplaceAllString(s, `${1}date${4}`)
	}
	if strings.Contains(want, "<json-input:1>") {
		s = jsonInputRE.ReplaceAllString(s, `${1}<json-input:1>'`)
	}
	if strings.Contains(want, `"RequestId":"RequestId"`) {
		s = requestIDRE.ReplaceAllString(s, `"RequestId":"RequestId"`)
	}
	if wholeMapRun {
		s = mapRunArnRE.ReplaceAllString(s, `"mapRunArn":"map_run_arn"`)
	}
	for _, rw := range c.Options.Rewrite {
		re, err := regexp.Compile(rw[0])
		if err != nil {
			return got
		}
		s = re.ReplaceAllString(s, rw[1])
	}
	v, err := jsonv.DecodeString(s)
	if err != nil {
		return got
	}
	out := make([]map[string]any, 0, len(got))
	for _, e := range v.([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

var (
	startTimeRE   = regexp.MustCompile(`("(?:StartTime|[a-z_]*starttime)":)"[0-9T:.Z-]+"`)
	enteredTimeRE = regexp.MustCompile(`("(?:EnteredTime|[a-z_]*enteredtime)":)"[0-9T:.Z-]+"`)
	isoRE         = regexp.MustCompile(`(\\?")\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?(\\?")`)
	jsonInputRE   = regexp.MustCompile(`(could not be found in the input ')(?:[^'\\]|\\.)*'`)
	requestIDRE   = regexp.MustCompile(`"RequestId":"[0-9a-f-]{36}"`)
	mapRunArnRE   = regexp.MustCompile(`"mapRunArn":"[^"]*"`)
)

// dropHTTPMetadata removes SdkHttpMetadata (also inside JSON text) from a Lambda invoke result:
// its Content-Length follows the Python handler's JSON spacing and its Date, trace id and
// request-id headers are placeholders, so neither a Go stub nor the engine can reproduce it.
func dropHTTPMetadata(v any) any {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, "SdkHttpMetadata") && (strings.HasPrefix(x, "{") || strings.HasPrefix(x, "[")) {
			if p, err := jsonv.DecodeString(x); err == nil {
				return dropHTTPMetadata(p)
			}
		}
		return x
	case map[string]any:
		delete(x, "SdkHttpMetadata")
		for k, e := range x {
			x[k] = dropHTTPMetadata(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = dropHTTPMetadata(e)
		}
		return x
	}
	return v
}

// legacyMapRunLink moves each MapStateExited that follows a MapRunStarted to the MapRunSucceeded
// linked to that MapRunStarted (see CaseOptions.LegacyMapRunLink).
func legacyMapRunLink(events []map[string]any) {
	id := func(v any) string { return fmt.Sprint(v) }
	byID := map[string]map[string]any{}
	for _, e := range events {
		byID[id(e["id"])] = e
	}
	for _, e := range events {
		if e["type"] != "MapStateExited" {
			continue
		}
		prev := byID[id(e["previousEventId"])]
		if prev == nil || prev["type"] != "MapRunStarted" {
			continue
		}
		for _, s := range events {
			if s["type"] == "MapRunSucceeded" && id(s["previousEventId"]) == id(prev["id"]) {
				e["previousEventId"] = s["id"]
				break
			}
		}
	}
}

var tokenRE = regexp.MustCompile(`"TaskToken":"([^"]+)"`)

var functionRE = regexp.MustCompile(`:function:([^"\\:]+)`)

// runChoice replays the recorded Choice operator cases of one snapshot file: one machine per
// operator (the template with the operator substituted and the value given literally, or by
// "$.Value" for the ...Path forms) and one execution per recorded (input, output) pair.
func (c *Case) runChoice(ctx context.Context, root string) []Result {
	fail := func(err error) []Result {
		return []Result{{Key: runKey(c.Snapshot, "", "*"), Area: c.Area, Err: err}}
	}
	tmpl, err := Template(root, c.Template)
	if err != nil {
		return fail(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "v2", c.Snapshot))
	if err != nil {
		return fail(err)
	}
	var doc map[string]struct {
		Content struct {
			Cases []struct {
				Input  json.RawMessage `json:"input"`
				Output json.RawMessage `json:"output"`
			} `json:"cases"`
		} `json:"recorded-content"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fail(err)
	}
	ids := make([]string, 0, len(doc))
	for id := range doc {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []Result
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Unix(0, 0))})
	for _, id := range ids {
		test := id[strings.LastIndex(id, "::"):]
		op := operatorOf(test[2:])
		for i, cs := range doc[id].Content.Cases {
			r := Result{Key: runKey(c.Snapshot, test, fmt.Sprintf("cases/%d", i)), Area: c.Area, Reason: c.Reason}
			input := string(cs.Input)
			if over, ok := c.inputFor(test, i); ok {
				input = over
			}
			r.Diffs, r.Err = runChoiceCase(ctx, eng, string(tmpl), op, input, cs.Output)
			out = append(out, r)
		}
	}
	return out
}

// inputFor finds the manifest's input for one Choice case whose recorded input is lossy.
func (c *Case) inputFor(test string, i int) (string, bool) {
	v, ok := c.Inputs[fmt.Sprintf("%s/%d", test, i)]
	return v, ok
}

func runChoiceCase(ctx context.Context, eng *asl.Engine, tmpl, op, input string, output json.RawMessage) ([]string, error) {
	in, err := jsonv.DecodeString(input)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	obj, _ := in.(map[string]any)
	if strings.Contains(input, `"date"`) {
		return nil, fmt.Errorf("lossy input %s: the recording replaced the timestamp by \"date\"", input)
	}
	value := `"$.Value"`
	if !strings.HasSuffix(op, "Path") {
		value = jsonv.EncodeString(obj["Value"])
	}
	def := strings.Replace(strings.Replace(tmpl, "%ComparisonOperatorType%", op, 1), `"$.Value"`, value, 1)
	m, err := asl.Parse([]byte(def), asl.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s with %s: %w", op, input, err)
	}
	x, err := eng.Start(ctx, asl.StartInput{Machine: m, Input: input})
	if err != nil {
		return nil, err
	}
	d, err := x.Wait(ctx)
	if err != nil {
		return nil, err
	}
	want, _ := jsonv.Decode(output)
	got, _ := jsonv.DecodeString(d.Output)
	if !jsonv.Equal(want, got) {
		return []string{fmt.Sprintf("%s on %s: got %s (%s %s), recorded %s", op, input, d.Output, d.Error, d.Cause, output)}, nil
	}
	return nil, nil
}

// operatorOf maps test_numeric_greater_than_equals_path to NumericGreaterThanEqualsPath.
func operatorOf(test string) string {
	var b strings.Builder
	for _, w := range strings.Split(strings.TrimPrefix(test, "test_"), "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
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
