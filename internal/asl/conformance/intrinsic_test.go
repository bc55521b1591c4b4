package conformance

import (
	"context"
	"os"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
)

// TestRecordedIntrinsics replays the recorded intrinsic-function executions through the engine
// (Pass states whose Parameters call the functions), one execution per recorded input.
// Random-valued tests (MathRandom, UUID) are left out: their values are placeholders.
func TestRecordedIntrinsics(t *testing.T) {
	wd, _ := os.Getwd()
	root := Root(wd)
	if root == "" {
		t.Skip("conformance/localstack-sfn not found (set SINEW_CONFORMANCE)")
	}
	const dir = "intrinsicfunctions/statemachines/"
	cases := []struct{ snapshot, test, template string }{
		{"test_array.snapshot.json", "::TestArray::test_array_0", "array/array_0.json5"},
		{"test_array.snapshot.json", "::TestArray::test_array_2", "array/array_2.json5"},
		{"test_array.snapshot.json", "::TestArray::test_array_partition", "array/array_partition.json5"},
		{"test_array.snapshot.json", "::TestArray::test_array_contains", "array/array_contains.json5"},
		{"test_array.snapshot.json", "::TestArray::test_array_range", "array/array_range.json5"},
		{"test_array.snapshot.json", "::TestArray::test_array_get_item", "array/array_get_item.json5"},
		{"test_array.snapshot.json", "::TestArray::test_array_length", "array/array_length.json5"},
		{"test_generic.snapshot.json", "::test_format_1", "generic/format_1.json5"},
		{"test_generic.snapshot.json", "::test_format_2", "generic/format_2.json5"},
		{"test_generic.snapshot.json", "::test_nested_calls_1", "generic/nested_calls_1.json5"},
		{"test_generic.snapshot.json", "::test_nested_calls_2", "generic/nested_calls_2.json5"},
		{"test_generic.snapshot.json", "::test_escape_sequence", "generic/escape_sequence.json5"},
		{"test_hash_calculations.snapshot.json", "::test_hash", "hash_calculations/hash.json5"},
		{"test_json_manipulation.snapshot.json", "::test_string_to_json", "json_manipulation/string_to_json.json5"},
		{"test_json_manipulation.snapshot.json", "::test_json_to_string", "json_manipulation/json_to_string.json5"},
		{"test_json_manipulation.snapshot.json", "::test_json_merge", "json_manipulation/json_merge.json5"},
		{"test_json_manipulation.snapshot.json", "::test_json_merge_escaped_argument", "json_manipulation/json_merge_escaped_argument.json5"},
		{"test_json_manipulation_jsonata.snapshot.json", "::test_parse", "json_manipulation/parse_jsonata.json5"},
		{"test_math_operations.snapshot.json", "::test_math_add", "math_operations/math_add.json5"},
	}
	total, agree := 0, 0
	for _, tc := range cases {
		t.Run(tc.test, func(t *testing.T) {
			keys, err := Keys(root, "intrinsic_functions/"+tc.snapshot, tc.test)
			if err != nil {
				t.Fatal(err)
			}
			def, err := Template(root, dir+tc.template)
			if err != nil {
				t.Fatal(err)
			}
			m, err := asl.Parse(def, asl.Options{JSONata: jsonata.New()})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Unix(0, 0))})
			for _, key := range keys {
				total++
				rec, err := Load(root, "intrinsic_functions/"+tc.snapshot, tc.test, key)
				if err != nil {
					t.Fatal(err)
				}
				// The nested-call tests read the state machine's name, recorded as this placeholder.
				x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: rec.Input(),
					StateMachineArn: "arn:aws:states:us-east-1:111111111111:stateMachine:<ArnPart_0idx>"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := x.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				got, _ := Normalize(x.History())
				diffs := Diff(rec.Events, got, Options{})
				if len(diffs) == 0 {
					agree++
				}
				for _, d := range diffs {
					t.Errorf("%s: %s", key, d)
				}
			}
		})
	}
	t.Logf("intrinsic recorded executions: %d of %d agree", agree, total)
}
