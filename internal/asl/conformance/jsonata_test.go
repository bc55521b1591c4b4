package conformance

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
)

// jsonataCases are recorded JSONata-mode executions that need no AWS service. Every recorded
// execution of each test is run (the intrinsic tests record one per input).
var jsonataCases = []struct {
	name, snapshot, test, template string
	opt                            Options
}{
	{"partition", "intrinsic_functions/test_array_jsonata.snapshot.json", "::test_array_partition", "intrinsicfunctions/statemachines/array/array_partition_jsonata.json5", Options{}},
	{"range", "intrinsic_functions/test_array_jsonata.snapshot.json", "::test_array_range", "intrinsicfunctions/statemachines/array/array_range_jsonata.json5", Options{}},
	{"output empty", "outputdecl/test_output.snapshot.json", "::test_base_cases[BASE_EMPTY]", "outputdecl/statemachines/base_empty.json5", Options{}},
	{"output literals", "outputdecl/test_output.snapshot.json", "::test_base_cases[BASE_LITERALS]", "outputdecl/statemachines/base_literals.json5", Options{}},
	// The output embeds $states.context, whose ARNs and times the recording replaced by placeholders.
	{"output expr", "outputdecl/test_output.snapshot.json", "::test_base_cases[BASE_EXPR]", "outputdecl/statemachines/base_expr.json5",
		Options{IgnoreDetails: []string{"stateExitedEventDetails.output", "executionSucceededEventDetails.output"}}},
	{"output direct expr", "outputdecl/test_output.snapshot.json", "::test_base_cases[BASE_DIRECT_EXPR]", "outputdecl/statemachines/base_direct_expr.json5", Options{}},
	{"output in choice true", "outputdecl/test_output.snapshot.json", "::test_output_in_choice[CONDITION_TRUE]", "outputdecl/statemachines/choice_condition_jsonata.json5", Options{}},
	{"output in choice false", "outputdecl/test_output.snapshot.json", "::test_output_in_choice[CONDITION_FALSE]", "outputdecl/statemachines/choice_condition_jsonata.json5", Options{}},
	{"query language jsonata", "query_language/test_base_query_language.snapshot.json", "::test_base_query_language_field[JSONATA]", "querylanguage/statemachines/base_pass_jsonata.json5", Options{}},
	{"query language override", "query_language/test_base_query_language.snapshot.json", "::test_query_language_field_override[JSONATA_OVERRIDE]", "querylanguage/statemachines/base_pass_jsonata_override.json5", Options{}},
	{"query language override default", "query_language/test_base_query_language.snapshot.json", "::test_query_language_field_override[JSONATA_OVERRIDE_DEFAULT]", "querylanguage/statemachines/base_pass_jsonata_override_default.json5", Options{}},
	{"jsonata assign, jsonpath reference", "query_language/test_mixed_query_language.snapshot.json", "::test_variable_sampling[JSONATA_ASSIGN_JSONPATH_REF]", "querylanguage/statemachines/jsonata_assign_jsonpath_reference.json5", Options{}},
	{"jsonpath assign, jsonata reference", "query_language/test_mixed_query_language.snapshot.json", "::test_variable_sampling[JSONPATH_ASSIGN_JSONATA_REF]", "querylanguage/statemachines/jsonpath_assign_jsonata_reference.json5", Options{}},
	{"jsonata output to jsonpath", "query_language/test_mixed_query_language.snapshot.json", "::test_output_to_state[JSONATA_OUTPUT_TO_JSONPATH]", "querylanguage/statemachines/jsonata_output_to_jsonpath.json5", Options{}},
	{"jsonpath output to jsonata", "query_language/test_mixed_query_language.snapshot.json", "::test_output_to_state[JSONPATH_OUTPUT_TO_JSONATA]", "querylanguage/statemachines/jsonpath_output_to_jsonata.json5", Options{}},
	{"choice docs scenario", "scenarios/test_base_scenarios.snapshot.json", "::test_choice_aws_docs_scenario[CHOICE_STATE_AWS_SCENARIO_JSONATA]", "scenarios/statemachines/choice_state_aws_scenario_jsonata.json5", Options{}},
	{"choice singleton composite", "scenarios/test_base_scenarios.snapshot.json", "::test_choice_singleton_composite[CHOICE_STATE_SINGLETON_COMPOSITE_JSONATA]", "scenarios/statemachines/choice_state_singleton_composite_jsonata.json5", Options{}},
	{"choice unsorted positive", "scenarios/test_base_scenarios.snapshot.json", "::test_choice_unsorted_parameters_positive[CHOICE_STATE_UNSORTED_CHOICE_PARAMETERS_JSONATA]", "scenarios/statemachines/choice_state_unsorted_choice_parameters_jsonata.json5", Options{}},
	{"choice unsorted negative", "scenarios/test_base_scenarios.snapshot.json", "::test_choice_unsorted_parameters_negative[CHOICE_STATE_UNSORTED_CHOICE_PARAMETERS_JSONATA]", "scenarios/statemachines/choice_state_unsorted_choice_parameters_jsonata.json5", Options{}},
	{"choice condition constant", "scenarios/test_base_scenarios.snapshot.json", "::test_choice_condition_constant_jsonata", "scenarios/statemachines/choice_state_condition_constant_jsonata.json5", Options{}},
	{"map item selector", "scenarios/test_base_scenarios.snapshot.json", "::test_map_state_item_selector[MAP_STATE_ITEM_SELECTOR_JSONATA]", "scenarios/statemachines/map_state_item_selector_jsonata.json5", Options{}},
	{"wait seconds", "scenarios/test_base_scenarios.snapshot.json", "::test_wait_seconds_jsonata", "scenarios/statemachines/wait_seconds_jsonata.json5", Options{}},
	{"fail error", "scenarios/test_base_scenarios.snapshot.json", "::test_fail_error_jsonata", "scenarios/statemachines/fail_error_jsonata.json5", Options{}},
	{"fail cause", "scenarios/test_base_scenarios.snapshot.json", "::test_fail_cause_jsonata", "scenarios/statemachines/fail_cause_jsonata.json5", Options{}},
	{"undefined output", "assign/test_assign_reference_variables.snapshot.json", "::test_undefined_reference[BASE_UNDEFINED_OUTPUT]", "assign/statemachines/base_undefined_output.json5", Options{}},
	{"undefined output field", "assign/test_assign_reference_variables.snapshot.json", "::test_undefined_reference[BASE_UNDEFINED_OUTPUT_FIELD]", "assign/statemachines/base_undefined_output_field.json5", Options{}},
	{"undefined output, many states", "assign/test_assign_reference_variables.snapshot.json", "::test_undefined_reference[BASE_UNDEFINED_OUTPUT_MULTIPLE_STATES]", "assign/statemachines/base_undefined_output_multiple_states.json5", Options{}},
	{"undefined assign", "assign/test_assign_reference_variables.snapshot.json", "::test_undefined_reference[BASE_UNDEFINED_ASSIGN]", "assign/statemachines/base_undefined_assign.json5", Options{}},
	{"undefined arguments", "assign/test_assign_reference_variables.snapshot.json", "::test_undefined_reference[BASE_UNDEFINED_ARGUMENTS]", "assign/statemachines/base_undefined_arguments.json5", Options{}},
	{"undefined arguments field", "assign/test_assign_reference_variables.snapshot.json", "::test_undefined_reference[BASE_UNDEFINED_ARGUMENTS_FIELD]", "assign/statemachines/base_undefined_arguments_field.json5", Options{}},
	{"task errorOutput", "states_variables/test_error_output.snapshot.json", "::test_task_catch_error_output[TASK_CATCH_ERROR_OUTPUT]", "statevariables/statemachines/task_catch_error_output.json5", looseTask},
	{"task errorOutput to jsonpath", "states_variables/test_error_output.snapshot.json", "::test_task_catch_error_output[TASK_CATCH_ERROR_OUTPUT_TO_JSONPATH]", "statevariables/statemachines/task_catch_error_output_to_jsonpath.json5", looseTask},
	{"task errorOutput variables", "states_variables/test_error_output.snapshot.json", "::test_catch_error_variable_sampling[TASK_CATCH_ERROR_VARIABLE_SAMPLING]", "statevariables/statemachines/task_catch_error_variable_sampling.json5", looseTask},
	{"task errorOutput variables to jsonpath", "states_variables/test_error_output.snapshot.json", "::test_catch_error_variable_sampling[TASK_CATCH_ERROR_VARIABLE_SAMPLING_TO_JSONPATH]", "statevariables/statemachines/task_catch_error_variable_sampling_to_jsonpath.json5", looseTask},
	{"task errorOutput with retry", "states_variables/test_error_output.snapshot.json", "::test_task_catch_error_with_retry[TASK_CATCH_ERROR_OUTPUT_WITH_RETRY]", "statevariables/statemachines/task_catch_error_output_with_retry.json5", looseTask},
	{"task errorOutput with retry to jsonpath", "states_variables/test_error_output.snapshot.json", "::test_task_catch_error_with_retry[TASK_CATCH_ERROR_OUTPUT_WITH_RETRY_TO_JSONPATH]", "statevariables/statemachines/task_catch_error_output_with_retry_to_jsonpath.json5", looseTask},
	{"map errorOutput", "states_variables/test_error_output.snapshot.json", "::test_map_catch_error[MAP_CATCH_ERROR_OUTPUT]", "statevariables/statemachines/map_catch_error_output.json5", looseTask},
	{"map errorOutput with retry", "states_variables/test_error_output.snapshot.json", "::test_map_catch_error[MAP_CATCH_ERROR_OUTPUT_WITH_RETRY]", "statevariables/statemachines/map_catch_error_output_with_retry.json5", looseTask},
	{"map errorOutput variables", "states_variables/test_error_output.snapshot.json", "::test_map_catch_error[MAP_CATCH_ERROR_VARIABLE_SAMPLING]", "statevariables/statemachines/map_catch_error_variable_sampling.json5", looseTask},
	{"parallel errorOutput", "states_variables/test_error_output.snapshot.json", "::test_parallel_catch_error[PARALLEL_CATCH_ERROR_OUTPUT]", "statevariables/statemachines/parallel_catch_error_output.json5", looseParallel},
	{"parallel errorOutput variables", "states_variables/test_error_output.snapshot.json", "::test_parallel_catch_error[PARALLEL_CATCH_ERROR_VARIABLE_SAMPLING]", "statevariables/statemachines/parallel_catch_error_variable_sampling.json5", looseParallel},
	{"parallel errorOutput with retry", "states_variables/test_error_output.snapshot.json", "::test_parallel_catch_error[PARALLEL_CATCH_ERROR_OUTPUT_WITH_RETRY]", "statevariables/statemachines/parallel_catch_error_output_with_retry.json5", looseParallel},
}

// The state-variable tests call a Lambda that raises; its ARN is a placeholder in the recording.
var (
	looseTask     = Options{LooseLambdaErrors: true, IgnoreDetails: []string{"taskScheduledEventDetails.parameters"}}
	looseParallel = Options{LooseLambdaErrors: true, IgnoreDetails: []string{"taskScheduledEventDetails.parameters"}, Unordered: true,
		DropTypes: []string{"ParallelStateSucceeded", "ParallelStateFailed"}} // this recording's Parallel normaliser drops both
)

// TestRecordedJSONata runs the recorded JSONata executions and reports how many agree; the ones
// that do not are listed (they measure the library: see internal/asl/jsonata/README.md).
func TestRecordedJSONata(t *testing.T) {
	wd, _ := os.Getwd()
	root := Root(wd)
	if root == "" {
		t.Skip("conformance/localstack-sfn not found (set SINEW_CONFORMANCE)")
	}
	total, agree := 0, 0
	for _, tc := range jsonataCases {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := Keys(root, tc.snapshot, tc.test)
			if err != nil {
				t.Fatal(err)
			}
			def, err := Template(root, tc.template)
			if err != nil {
				t.Fatal(err)
			}
			def = []byte(strings.ReplaceAll(string(def), "%LAMBDA_FUNCTION_ARN_LITERAL_PLACEHOLDER%", "arn:aws:lambda:us-east-1:000000000000:function:raise"))
			m, err := asl.Parse(def, asl.Options{JSONata: jsonata.New()})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			for _, key := range keys {
				total++
				rec, err := Load(root, tc.snapshot, tc.test, key)
				if err != nil {
					t.Fatal(err)
				}
				eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)),
					Lambda: Lambdas{"raise": Raise("Exception", "Some exception was raised.")}})
				x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: rec.Input()})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				_, err = x.Wait(ctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				got, _ := Normalize(x.History())
				diffs := Diff(rec.Events, got, tc.opt)
				if len(diffs) == 0 {
					agree++
				}
				for _, d := range diffs {
					t.Errorf("%s: %s", key, d)
				}
			}
		})
	}
	t.Logf("JSONata recorded executions: %d of %d agree", agree, total)
}
