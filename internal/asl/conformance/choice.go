package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sinew/internal/asl"
	"sinew/internal/jsonv"
)

// The Choice operator cases: one machine per operator and one execution per recorded pair.

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
