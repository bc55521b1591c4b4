package jsonpath

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sinew/internal/jsonv"
)

// recordingsDir is the AWS recordings' v2 folder (internal/asl/conformance/testdata/localstack-sfn,
// seen from this package); go test runs in the package's folder. Missing data fails the test.
func recordingsDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join("..", "conformance", "testdata", "localstack-sfn", "v2")
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("the AWS recordings are missing (%v): restore internal/asl/conformance/testdata from git", err)
	}
	return d
}

type history struct {
	Events []map[string]json.RawMessage `json:"events"`
}

func (h history) find(typ, details, field string) (any, bool) {
	for _, ev := range h.Events {
		var ty string
		_ = json.Unmarshal(ev["type"], &ty)
		if ty != typ {
			continue
		}
		var d map[string]json.RawMessage
		if json.Unmarshal(ev[details], &d) != nil {
			return nil, false
		}
		v, err := jsonv.Decode(d[field])
		return v, err == nil
	}
	return nil, false
}

func loadSnapshot(t *testing.T, path string) map[string]map[string]history {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var snap map[string]struct {
		Content map[string]json.RawMessage `json:"recorded-content"`
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]history{}
	for id, e := range snap {
		out[id] = map[string]history{}
		for k, v := range e.Content {
			var h history
			if json.Unmarshal(v, &h) == nil && len(h.Events) > 0 {
				out[id][k] = h
			}
		}
	}
	return out
}

// TestRecordedPaths checks the path cases of v2/base and v2/scenarios: the values AWS produced for
// payload-template paths, and the "Invalid path" causes of its States.Runtime failures.
func TestRecordedPaths(t *testing.T) {
	dir := recordingsDir(t)
	base := loadSnapshot(t, filepath.Join(dir, "base", "test_base.snapshot.json"))
	scen := loadSnapshot(t, filepath.Join(dir, "scenarios", "test_base_scenarios.snapshot.json"))
	param := regexp.MustCompile(`::(test_json_path_array_access|test_json_path_array_wildcard_or_slice_with_no_input)\[(.*)\]$`)

	type pathCase struct {
		name, field, path string
		h                 history
	}
	var cases []pathCase
	for id, hs := range base {
		for _, h := range hs {
			switch m := param.FindStringSubmatch(id); {
			case m != nil:
				cases = append(cases, pathCase{id, "item", m[2], h})
			case strings.HasSuffix(id, "::test_state_pass_regex_json_path_base"):
				cases = append(cases, pathCase{id, "FromInput", "$.users[?(@.status == 0)]", h})
			}
		}
	}
	for id, hs := range scen {
		if strings.HasSuffix(id, "[ESCAPE_SEQUENCES_JSONPATH]") {
			for _, h := range hs {
				// templates/scenarios/statemachines/escape_sequences_jsonpath.json5
				cases = append(cases, pathCase{id, "value", `$['Test\""Name"']`, h})
			}
		}
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
	passed := 0
	for _, c := range cases {
		in, _ := c.h.find("ExecutionStarted", "executionStartedEventDetails", "input")
		out, ok := c.h.find("PassStateExited", "stateExitedEventDetails", "output")
		if !ok {
			t.Errorf("%s: no PassStateExited", c.name)
			continue
		}
		p, err := Parse(c.path)
		if err != nil {
			t.Errorf("%s: Parse(%s): %v", c.name, c.path, err)
			continue
		}
		got, err := p.Eval(Env{Input: in})
		if err != nil {
			t.Errorf("%s: Eval(%s): %v", c.name, c.path, err)
			continue
		}
		want := out.(map[string]any)[c.field]
		if !jsonv.Equal(got, want) {
			t.Errorf("%s: %s gave %s, AWS %s", c.name, c.path, jsonv.EncodeString(got), jsonv.EncodeString(want))
			continue
		}
		passed++
	}

	// Failure causes: "An error occurred while executing the state 'x' (entered at the event id
	// #n). Invalid path '<path>' : <Jayway message>".
	causeRe := regexp.MustCompile(`\)\. (Invalid path '([^']*)' : .*)$`)
	failures := 0
	for id, hs := range scen {
		for _, h := range hs {
			cause, ok := h.find("ExecutionFailed", "executionFailedEventDetails", "cause")
			s, _ := cause.(string)
			m := causeRe.FindStringSubmatch(s)
			if !ok || m == nil {
				continue
			}
			failures++
			in, _ := h.find("ExecutionStarted", "executionStartedEventDetails", "input")
			if strings.Contains(id, "test_catch_states_runtime") {
				in = map[string]any{} // the OutputPath ran on a Lambda result without the key
			}
			p, err := Parse(m[2])
			if err != nil {
				t.Errorf("%s: Parse(%s): %v", id, m[2], err)
				continue
			}
			_, err = p.Eval(Env{Input: in})
			if err == nil || err.Error() != m[1] {
				t.Errorf("%s: error %v, AWS %q", id, err, m[1])
				continue
			}
			passed++
		}
	}
	t.Logf("recorded JSONPath cases: %d/%d pass", passed, len(cases)+failures)
	if len(cases) < 14 || failures < 4 {
		t.Fatalf("found only %d value cases and %d failure causes in the recordings", len(cases), failures)
	}
}
