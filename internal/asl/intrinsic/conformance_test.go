package intrinsic

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"sinew/internal/asl/jsonpath"
	"sinew/internal/jsonv"
)

// conformanceDir is the AWS recordings' folder (internal/asl/conformance/testdata/localstack-sfn,
// seen from this package); go test runs in the package's folder. Missing data fails the test.
func conformanceDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join("..", "conformance", "testdata", "localstack-sfn")
	if _, err := os.Stat(filepath.Join(d, "v2", "intrinsic_functions")); err != nil {
		t.Fatalf("the AWS recordings are missing (%v): restore internal/asl/conformance/testdata from git", err)
	}
	return d
}

// templateFor pairs a recorded test function with its template (the snapshots do not name it).
// test_array_unique runs the ARRAY_LENGTH template: a known trap of the recordings.
var templateFor = map[string]string{
	"test_array_0":                     "array/array_0.json5",
	"test_array_2":                     "array/array_2.json5",
	"test_array_partition":             "array/array_partition.json5",
	"test_array_contains":              "array/array_contains.json5",
	"test_array_range":                 "array/array_range.json5",
	"test_array_get_item":              "array/array_get_item.json5",
	"test_array_length":                "array/array_length.json5",
	"test_array_unique":                "array/array_length.json5",
	"test_format_1":                    "generic/format_1.json5",
	"test_format_2":                    "generic/format_2.json5",
	"test_context_json_path":           "generic/format_context_path.json5",
	"test_nested_calls_1":              "generic/nested_calls_1.json5",
	"test_nested_calls_2":              "generic/nested_calls_2.json5",
	"test_escape_sequence":             "generic/escape_sequence.json5",
	"test_hash":                        "hash_calculations/hash.json5",
	"test_string_to_json":              "json_manipulation/string_to_json.json5",
	"test_json_to_string":              "json_manipulation/json_to_string.json5",
	"test_json_merge":                  "json_manipulation/json_merge.json5",
	"test_json_merge_escaped_argument": "json_manipulation/json_merge_escaped_argument.json5",
	"test_math_random":                 "math_operations/math_random.json5",
	"test_math_random_seeded":          "math_operations/math_random_seeded.json5",
	"test_math_add":                    "math_operations/math_add.json5",
	"test_uuid":                        "unique_id_generation/uuid.json5",
}

// The context object as the recordings show it after their normalisation (ARN parts, account,
// region and partition replaced), so outputs built from it compare directly.
const (
	normExecName = "<ExecArnPart_0idx>"
	normSMName   = "<ArnPart_0idx>"
	normSMID     = "arn:<partition>:states:<region>:111111111111:stateMachine:<ArnPart_0idx>"
)

type passState struct {
	Type       string         `json:"Type"`
	Parameters map[string]any `json:"Parameters"`
	ResultPath *string        `json:"ResultPath"`
	OutputPath *string        `json:"OutputPath"`
}

type template struct {
	StartAt string               `json:"StartAt"`
	States  map[string]passState `json:"States"`
}

type recordedCase struct {
	name    string
	input   any
	output  any
	failed  bool
	errName string
	cause   string
}

func TestRecordedIntrinsics(t *testing.T) {
	dir := conformanceDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "v2", "intrinsic_functions", "*.snapshot.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no snapshot files: %v", err)
	}
	sort.Strings(files)
	total, passed := 0, 0
	for _, f := range files {
		if strings.Contains(f, "jsonata") {
			continue // JSONata mode has no intrinsic functions
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var snap map[string]struct {
			Content map[string]json.RawMessage `json:"recorded-content"`
		}
		if err := json.Unmarshal(raw, &snap); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for nodeID, entry := range snap {
			fn := nodeID[strings.LastIndex(nodeID, "::")+2:]
			tplName, ok := templateFor[fn]
			if !ok {
				t.Errorf("%s: no template is paired with %s", filepath.Base(f), fn)
				continue
			}
			tpl := loadTemplate(t, filepath.Join(dir, "templates", "intrinsicfunctions", "statemachines", tplName))
			for _, c := range recordedCases(t, entry.Content) {
				total++
				name := filepath.Base(f) + "/" + nodeID[strings.Index(nodeID, "::")+2:] + "/" + c.name
				if reason := runCase(tpl, c); reason != "" {
					t.Errorf("%s: %s", name, reason)
					continue
				}
				passed++
			}
		}
	}
	t.Logf("recorded intrinsic executions: %d/%d pass", passed, total)
	if total == 0 {
		t.Fatal("no recorded cases were found")
	}
}

func recordedCases(t *testing.T, content map[string]json.RawMessage) []recordedCase {
	var out []recordedCase
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var hist struct {
			Events []map[string]json.RawMessage `json:"events"`
		}
		if err := json.Unmarshal(content[k], &hist); err != nil || len(hist.Events) == 0 {
			continue
		}
		c := recordedCase{name: k}
		for _, ev := range hist.Events {
			var typ string
			_ = json.Unmarshal(ev["type"], &typ)
			switch typ {
			case "ExecutionStarted":
				c.input = detail(t, ev["executionStartedEventDetails"], "input")
			case "PassStateExited":
				c.output = detail(t, ev["stateExitedEventDetails"], "output")
			case "ExecutionFailed":
				c.failed = true
				d := map[string]any{}
				_ = json.Unmarshal(ev["executionFailedEventDetails"], &d)
				c.errName, _ = d["error"].(string)
				c.cause, _ = d["cause"].(string)
			}
		}
		out = append(out, c)
	}
	return out
}

func detail(t *testing.T, raw json.RawMessage, field string) any {
	t.Helper()
	var d map[string]json.RawMessage
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("event details: %v", err)
	}
	v, err := jsonv.Decode(d[field])
	if err != nil {
		t.Fatalf("event %s: %v", field, err)
	}
	// The recorder parses JSON strings that start with '{'; an unparsed string stays a string.
	if s, ok := v.(string); ok && strings.HasPrefix(s, "{") {
		if p, err := jsonv.DecodeString(s); err == nil {
			return p
		}
	}
	return v
}

var json5Comment = regexp.MustCompile(`(?m)^\s*//.*$|,\s*//[^\n"]*$`)
var trailingComma = regexp.MustCompile(`,(\s*[}\]])`)

// loadTemplate reads the JSON5 templates of the recordings: end-of-line comments and trailing
// commas are all the JSON5 they use.
func loadTemplate(t *testing.T, path string) template {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := json5Comment.ReplaceAllStringFunc(string(raw), func(m string) string {
		if strings.HasPrefix(m, ",") {
			return ","
		}
		return ""
	})
	s = trailingComma.ReplaceAllString(s, "$1")
	var tpl template
	if err := json.Unmarshal([]byte(s), &tpl); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	st, ok := tpl.States[tpl.StartAt]
	if !ok || st.Type != "Pass" || len(tpl.States) != 1 {
		t.Fatalf("%s: not a single Pass state", path)
	}
	return tpl
}

// runCase evaluates the Pass state's Parameters on the recorded input (then its ResultPath and
// OutputPath, when it has them) and compares with the recording; "" means it matches.
func runCase(tpl template, c recordedCase) string {
	st := tpl.States[tpl.StartAt]
	env := jsonpath.Env{
		Input: c.input,
		Context: map[string]any{
			"Execution":    map[string]any{"Name": normExecName, "Input": c.input},
			"StateMachine": map[string]any{"Id": normSMID, "Name": normSMName},
			"State":        map[string]any{"Name": tpl.StartAt},
		},
	}
	result := map[string]any{}
	for key, v := range st.Parameters {
		expr, ok := v.(string)
		if !ok || !strings.HasSuffix(key, ".$") {
			result[key] = jsonv.Normalize(v)
			continue
		}
		out, err := evalField(expr, env)
		if err != nil {
			if !c.failed {
				return "unexpected failure: " + err.Error()
			}
			var ie *Error
			if !errors.As(err, &ie) || ie.Name != c.errName || !strings.HasSuffix(c.cause, ie.Cause) {
				return "failure " + err.Error() + " differs from the recorded " + c.errName + ": " + c.cause
			}
			return ""
		}
		out, why := normaliseRandom(expr, out, env)
		if why != "" {
			return why
		}
		result[strings.TrimSuffix(key, ".$")] = out
	}
	if c.failed {
		return "succeeded where AWS failed with " + c.errName + ": " + c.cause
	}
	var output any = result
	if st.ResultPath != nil {
		rp, err := jsonpath.ParseReference(*st.ResultPath)
		if err != nil {
			return err.Error()
		}
		if output, err = rp.Set(c.input, result); err != nil {
			return err.Error()
		}
	}
	if st.OutputPath != nil {
		op, err := jsonpath.Parse(*st.OutputPath)
		if err != nil {
			return err.Error()
		}
		var err2 error
		if output, err2 = op.Eval(jsonpath.Env{Input: output}); err2 != nil {
			return err2.Error()
		}
	}
	if !jsonv.Equal(output, c.output) {
		return "output " + jsonv.EncodeString(output) + ", recorded " + jsonv.EncodeString(c.output)
	}
	return ""
}

func evalField(expr string, env jsonpath.Env) (any, error) {
	if IsCall(expr) {
		e, err := Parse(expr)
		if err != nil {
			return nil, err
		}
		return e.Eval(env)
	}
	p, err := jsonpath.Parse(expr)
	if err != nil {
		return nil, err
	}
	return p.Eval(env)
}

// normaliseRandom applies the recordings' normalisation of random values after checking them:
// MathRandom gives an integer in its range ("RandomNumberGenerated"), UUID a v4 UUID
// ("generated-uuid").
func normaliseRandom(expr string, out any, env jsonpath.Env) (any, string) {
	switch {
	case strings.HasPrefix(expr, "States.MathRandom("):
		n, ok := out.(int64)
		if !ok {
			return nil, "MathRandom gave a " + jsonv.TypeName(out) + ", not an integer"
		}
		in, _ := env.Input.(map[string]any)["FunctionInput"].(map[string]any)
		lo, _ := jsonv.ToFloat(in["fst"])
		hi, _ := jsonv.ToFloat(in["snd"])
		if float64(n) < float64(int64(lo)) || float64(n) >= float64(int64(hi)) {
			return nil, "MathRandom gave " + jsonv.EncodeString(n) + ", outside [" + jsonv.EncodeString(lo) + ", " + jsonv.EncodeString(hi) + ")"
		}
		return "RandomNumberGenerated", ""
	case strings.HasPrefix(expr, "States.UUID("):
		s, _ := out.(string)
		u, err := uuid.Parse(s)
		if err != nil || u.Version() != 4 || len(s) != 36 {
			return nil, "UUID gave " + jsonv.EncodeString(out) + ", not a v4 UUID"
		}
		return "generated-uuid", ""
	}
	return out, ""
}
