// Package conformance compares the engine's executions with AWS-recorded ones from the LocalStack
// snapshots (testdata/localstack-sfn).
//
// It reads the JSON5 templates, pulls a recorded history out of a snapshot, normalises our history
// the way the recordings were normalised, and diffs the two. The manifest-driven harness over every
// recorded run builds on these pieces.
package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sinew/internal/asl"
	"sinew/internal/jsonv"
)

// DataDir is the recordings' folder, relative to the module root (testdata/localstack-sfn/README.md
// says where the files come from and how they are used).
const DataDir = "internal/asl/conformance/testdata/localstack-sfn"

// Root finds the recordings: $SINEW_CONFORMANCE when set, else DataDir under the module root found
// upward from dir. Missing data is an error saying where it looked: the recordings are part of the
// repository, so their absence is a broken checkout, not an optional extra.
func Root(dir string) (string, error) {
	p := os.Getenv("SINEW_CONFORMANCE")
	if p == "" {
		for d := dir; p == ""; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				p = filepath.Join(d, filepath.FromSlash(DataDir))
			} else if filepath.Dir(d) == d {
				return "", fmt.Errorf("no go.mod above %s: run from inside the sinew module", dir)
			}
		}
	}
	for _, sub := range []string{"templates", "v2"} {
		if st, err := os.Stat(filepath.Join(p, sub)); err != nil || !st.IsDir() {
			return "", fmt.Errorf("the AWS recordings are missing: no %s folder in %s (restore %s from git, or point $SINEW_CONFORMANCE at a copy)", sub, p, DataDir)
		}
	}
	return p, nil
}

// JSON5 turns the subset of JSON5 the templates use (comments, trailing commas) into JSON.
func JSON5(src []byte) []byte {
	var out bytes.Buffer
	inStr := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inStr {
			out.WriteByte(c)
			if c == '\\' && i+1 < len(src) {
				i++
				out.WriteByte(src[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out.WriteByte(c)
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			out.WriteByte('\n')
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i += 2
			for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
				i++
			}
			i++
		case c == ',':
			// Drop a comma followed only by whitespace and comments before a closing bracket.
			j := skipBlank(src, i+1)
			if j < len(src) && (src[j] == '}' || src[j] == ']') {
				continue
			}
			out.WriteByte(c)
		default:
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

// skipBlank returns the index of the first byte from i that is neither whitespace nor inside a
// comment.
func skipBlank(src []byte, i int) int {
	for i < len(src) {
		switch {
		case src[i] == ' ' || src[i] == '\n' || src[i] == '\r' || src[i] == '\t':
			i++
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '*':
			i += 2
			for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
				i++
			}
			i += 2
		default:
			return i
		}
	}
	return i
}

// Template reads a template (path relative to the root's templates/ folder) as JSON.
func Template(root, rel string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(root, "templates", rel))
	if err != nil {
		return nil, err
	}
	return JSON5(b), nil
}

// Recording is one recorded execution history.
type Recording struct {
	Events []map[string]any
}

// Input is the execution input recovered from the recorded ExecutionStarted event, as JSON.
func (r *Recording) Input() string {
	for _, e := range r.Events {
		if e["type"] == "ExecutionStarted" {
			d, _ := e["executionStartedEventDetails"].(map[string]any)
			switch in := d["input"].(type) {
			case string:
				return in
			default:
				return jsonv.EncodeString(in)
			}
		}
	}
	return "{}"
}

// Keys lists the recorded keys of a test that hold histories (e.g. exec_hist_resp_0, ...), sorted
// by their numeric suffix.
func Keys(root, snapshot, test string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(root, "v2", snapshot))
	if err != nil {
		return nil, err
	}
	var doc map[string]struct {
		Content map[string]json.RawMessage `json:"recorded-content"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	var ids []string
	for id := range doc {
		if strings.HasSuffix(id, test) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no test %q in %s", test, snapshot)
	}
	sort.Strings(ids)
	var keys []string
	for k, raw := range doc[ids[0]].Content {
		if bytes.Contains(raw, []byte(`"events"`)) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) < len(keys[j])
		}
		return keys[i] < keys[j]
	})
	return keys, nil
}

// Load reads a recorded history: snapshot file (relative to the root's v2/ folder), the test whose
// node id ends with test, and the recorded key (usually "get_execution_history").
func Load(root, snapshot, test, key string) (*Recording, error) {
	b, err := os.ReadFile(filepath.Join(root, "v2", snapshot))
	if err != nil {
		return nil, err
	}
	var doc map[string]struct {
		Content map[string]json.RawMessage `json:"recorded-content"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", snapshot, err)
	}
	var ids []string
	for id := range doc {
		if strings.HasSuffix(id, test) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no test %q in %s", test, snapshot)
	}
	sort.Strings(ids) // prefer tests/aws/... over tests/integration/... deterministically
	raw, ok := doc[ids[0]].Content[key]
	if !ok {
		return nil, fmt.Errorf("no key %q in %s", key, ids[0])
	}
	var h struct {
		Events []map[string]any `json:"events"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&h); err != nil {
		return nil, err
	}
	for _, e := range h.Events {
		jsonv.Normalize(e)
		delete(e, "timestamp")
	}
	return &Recording{Events: h.Events}, nil
}

// Normalize renders our history as the recordings store theirs: no timestamps, JSON strings that
// start with '{' parsed, the role ARN replaced by its placeholder.
func Normalize(events []asl.Event) ([]map[string]any, error) {
	b, err := json.Marshal(events)
	if err != nil {
		return nil, err
	}
	v, err := jsonv.Decode(b)
	if err != nil {
		return nil, err
	}
	arr, _ := v.([]any)
	out := make([]map[string]any, 0, len(arr))
	for _, e := range arr {
		m := e.(map[string]any)
		delete(m, "timestamp")
		for k, d := range m {
			if dm, ok := d.(map[string]any); ok && strings.HasSuffix(k, "EventDetails") {
				for f, v := range dm {
					dm[f] = parseBraces(v)
				}
			}
		}
		if d, ok := m["executionStartedEventDetails"].(map[string]any); ok {
			d["roleArn"] = "snf_role_arn"
		}
		if d, ok := m["taskScheduledEventDetails"].(map[string]any); ok {
			d["region"] = "<region>"
		}
		out = append(out, m)
	}
	return out, nil
}

func parseBraces(v any) any {
	if x, ok := v.(string); ok && strings.HasPrefix(x, "{") {
		if p, err := jsonv.DecodeString(x); err == nil {
			return p
		}
	}
	return v
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// numberUUIDs replaces UUIDs with <uuid:N> in order of first appearance, as the recordings do.
func numberUUIDs(events []map[string]any) []map[string]any {
	seen := map[string]int{}
	b := jsonv.EncodeString(events)
	b = uuidRE.ReplaceAllStringFunc(b, func(u string) string {
		if _, ok := seen[u]; !ok {
			seen[u] = len(seen) + 1
		}
		return fmt.Sprintf("<uuid:%d>", seen[u])
	})
	var out []map[string]any
	v, err := jsonv.DecodeString(b)
	if err != nil {
		return events
	}
	for _, e := range v.([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// same is value equality that lets one side hold as JSON text what the other holds parsed: the
// recordings' normalisers differ between tests (some parse arrays, some keep AWS's own spacing).
func same(a, b any) bool {
	if jsonv.Equal(a, b) {
		return true
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	switch {
	case aStr && bStr:
		av, err1 := jsonv.DecodeString(as)
		bv, err2 := jsonv.DecodeString(bs)
		return err1 == nil && err2 == nil && jsonv.Equal(av, bv) && (strings.ContainsAny(as, "[{") || strings.ContainsAny(bs, "[{"))
	case aStr:
		av, err := jsonv.DecodeString(as)
		return err == nil && same(av, b)
	case bStr:
		bv, err := jsonv.DecodeString(bs)
		return err == nil && same(a, bv)
	}
	am, aMap := a.(map[string]any)
	bm, bMap := b.(map[string]any)
	if aMap && bMap {
		if len(am) != len(bm) {
			return false
		}
		for k, v := range am {
			w, ok := bm[k]
			if !ok || !same(v, w) {
				return false
			}
		}
		return true
	}
	aa, aArr := a.([]any)
	ba, bArr := b.([]any)
	if aArr && bArr && len(aa) == len(ba) {
		for i := range aa {
			if !same(aa[i], ba[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// Options loosen a comparison where the recording holds values nobody can reproduce.
type Options struct {
	// IgnoreDetails lists detail fields to skip, as "<detailsKey>.<field>", e.g.
	// "taskSucceededEventDetails.output".
	IgnoreDetails []string
	// Unordered compares events as a multiset of (type, details), ignoring ids: for Parallel
	// branches and concurrent Map iterations.
	Unordered bool
	// DropTypes removes events of these types from both sides first (e.g. ParallelStateSucceeded,
	// which the recordings' Parallel normaliser drops).
	DropTypes []string
	// LooseLambdaErrors compares Lambda error payloads ({"errorType", "errorMessage", ...}, parsed or
	// as JSON text anywhere in an event) without their requestId and stackTrace, which a stub cannot
	// reproduce.
	LooseLambdaErrors bool
}

// looseLambda rewrites Lambda error payloads, wherever they sit, as objects without requestId and
// stackTrace.
func looseLambda(v any) any {
	switch x := v.(type) {
	case string:
		if (strings.HasPrefix(x, "{") || strings.HasPrefix(x, "[")) && strings.Contains(x, "errorType") {
			if p, err := jsonv.DecodeString(x); err == nil {
				return looseLambda(p)
			}
		}
		return x
	case map[string]any:
		if _, ok := x["errorType"]; ok {
			delete(x, "requestId")
			delete(x, "stackTrace")
		}
		for k, e := range x {
			x[k] = looseLambda(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = looseLambda(e)
		}
		return x
	}
	return v
}

// Diff compares a recorded history with ours and lists the differences (empty when they agree).
// Ids shown as lists in a recording (Parallel branches, normalised) are not compared.
func Diff(want []map[string]any, got []map[string]any, opt Options) []string {
	drop := map[string]bool{}
	for _, t := range opt.DropTypes {
		drop[t] = true
	}
	filter := func(es []map[string]any) []map[string]any {
		var out []map[string]any
		for _, e := range es {
			if !drop[fmt.Sprint(e["type"])] {
				out = append(out, e)
			}
		}
		return out
	}
	want, got = filter(want), numberUUIDs(filter(got))
	var diffs []string
	for _, e := range append(append([]map[string]any{}, want...), got...) {
		for _, f := range opt.IgnoreDetails {
			k, field, _ := strings.Cut(f, ".")
			if d, ok := e[k].(map[string]any); ok {
				delete(d, field)
			}
		}
	}
	if opt.LooseLambdaErrors {
		for _, e := range append(append([]map[string]any{}, want...), got...) {
			looseLambda(e)
		}
	}
	if len(want) != len(got) {
		diffs = append(diffs, fmt.Sprintf("event count: recorded %d, ours %d\nrecorded: %s\nours:     %s", len(want), len(got), types(want), types(got)))
		return diffs
	}
	if opt.Unordered {
		strip := func(e map[string]any) map[string]any {
			c := map[string]any{}
			for k, v := range e {
				if k != "id" && k != "previousEventId" {
					c[k] = v
				}
			}
			return c
		}
		used := make([]bool, len(got))
		for _, w := range want {
			found := false
			for j, g := range got {
				if !used[j] && same(strip(w), strip(g)) {
					used[j], found = true, true
					break
				}
			}
			if !found {
				diffs = append(diffs, "recorded event without a match in ours: "+jsonv.EncodeString(strip(w)))
			}
		}
		for j, g := range got {
			if !used[j] {
				diffs = append(diffs, "our event without a match in the recording: "+jsonv.EncodeString(strip(g)))
			}
		}
		return diffs
	}
	for i := range want {
		w, g := want[i], got[i]
		for _, k := range []string{"id", "previousEventId"} {
			if _, isList := w[k].([]any); isList {
				delete(w, k)
				delete(g, k)
			}
		}
		if !same(w, g) {
			diffs = append(diffs, fmt.Sprintf("event %d:\nrecorded %s\nours     %s", i+1, jsonv.EncodeString(w), jsonv.EncodeString(g)))
		}
	}
	return diffs
}

func types(es []map[string]any) string {
	var s []string
	for _, e := range es {
		s = append(s, fmt.Sprint(e["type"]))
	}
	return strings.Join(s, ",")
}
