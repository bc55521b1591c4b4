package conformance

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/jsonv"
)

// Replaying a case: its recorded executions through the engine, our history given the ARN
// placeholders the recording's test applied, then the two compared.

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
