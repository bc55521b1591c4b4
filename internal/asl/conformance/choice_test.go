package conformance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/jsonv"
)

// TestRecordedChoiceOperators replays the recorded Choice operator cases: one machine per operator
// (the template with the operator substituted, the value given literally or by "$.Value" for the
// ...Path forms) and one execution per recorded (input, output) pair. Timestamp inputs whose
// values the recording replaced by "date" are skipped: they are lossy.
func TestRecordedChoiceOperators(t *testing.T) {
	wd, _ := os.Getwd()
	root := Root(wd)
	if root == "" {
		t.Skip("conformance/localstack-sfn not found (set SINEW_CONFORMANCE)")
	}
	tmpl, err := Template(root, "choiceoperators/statemachines/template.json5")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "v2", "choice_operators", "*.snapshot.json"))
	total, ran := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
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
			t.Fatal(err)
		}
		for id, entry := range doc {
			test := id[strings.LastIndex(id, "::")+2:]
			op := operatorOf(test)
			t.Run(test, func(t *testing.T) {
				eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Unix(0, 0))})
				for _, c := range entry.Content.Cases {
					total++
					in, err := jsonv.Decode(c.Input)
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(string(c.Input), `"date"`) {
						continue
					}
					value := `"$.Value"`
					if !strings.HasSuffix(op, "Path") {
						value = jsonv.EncodeString(in.(map[string]any)["Value"])
					}
					def := strings.Replace(strings.Replace(string(tmpl), "%ComparisonOperatorType%", op, 1), `"$.Value"`, value, 1)
					m, err := asl.Parse([]byte(def), asl.Options{})
					if err != nil {
						t.Errorf("%s with %s: %v", op, c.Input, err)
						continue
					}
					x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: string(c.Input)})
					if err != nil {
						t.Fatal(err)
					}
					d, _ := x.Wait(context.Background())
					want, _ := jsonv.Decode(c.Output)
					got, _ := jsonv.DecodeString(d.Output)
					if !jsonv.Equal(want, got) {
						t.Errorf("%s on %s: got %s (%s %s), recorded %s", op, c.Input, d.Output, d.Error, d.Cause, c.Output)
					}
					ran++
				}
			})
		}
	}
	t.Logf("choice operator cases: %d run, %d recorded (the rest have lossy timestamp inputs)", ran, total)
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
