package conformance

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/jsonv"
)

// TestRecorded runs a few recorded executions end to end and compares our history with AWS's.
func TestRecorded(t *testing.T) {
	wd, _ := os.Getwd()
	root := Root(wd)
	if root == "" {
		t.Skip("conformance/localstack-sfn not found (set SINEW_CONFORMANCE); skipping the recorded cases")
	}
	fnArn := "arn:aws:lambda:us-east-1:000000000000:function:fn"
	raiseArn := "arn:aws:lambda:us-east-1:000000000000:function:raise"
	// Lambda errors carry Python stack traces and request ids that cannot be reproduced.
	lambdaOpt := Options{IgnoreDetails: []string{"lambdaFunctionScheduledEventDetails.resource"}, LooseLambdaErrors: true}
	lambdas := Lambdas{
		"fn":       Identity,
		"raise":    Raise("Exception", "Some exception was raised."),
		"identity": Identity,
		// A UTF-8 answer just over 256 KiB, as the recorded data-limit tests' function returns.
		"big": func([]byte) *asl.LambdaResponse {
			return &asl.LambdaResponse{Payload: []byte(`"` + strings.Repeat("é", 131073) + `"`)}
		},
		// The retry tests deploy a function that always raises under this name.
		"lambda_function_name": Raise("Exception", "Some exception was raised."),
	}
	cases := []struct {
		name     string
		snapshot string
		test     string
		template string
		patch    func(string) string
		input    string // overrides the recorded input
		opt      Options
	}{
		{name: "pass result", snapshot: "base/test_base.snapshot.json", test: "::test_state_pass_result", template: "base/statemachines/pass_result.json5"},
		{name: "pass null paths", snapshot: "base/test_base.snapshot.json", test: "::test_state_pass_result_null_input_output_paths", template: "base/statemachines/pass_result_null_input_output_paths.json5"},
		{name: "fail", snapshot: "base/test_base.snapshot.json", test: "::test_state_fail", template: "base/statemachines/raise_failure.json5"},
		{name: "fail path", snapshot: "base/test_base.snapshot.json", test: "::test_state_fail_path", template: "base/statemachines/raise_failure_path.json5"},
		{name: "fail empty", snapshot: "base/test_base.snapshot.json", test: "::test_state_fail_empty", template: "base/statemachines/raise_empty_failure.json5"},
		{name: "array access", snapshot: "base/test_base.snapshot.json", test: "::test_json_path_array_access[$.items[0]]", template: "base/statemachines/json_path_array_access.json5"},
		{name: "choice docs scenario", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_choice_aws_docs_scenario[CHOICE_STATE_AWS_SCENARIO]", template: "scenarios/statemachines/choice_state_aws_scenario.json5"},
		{name: "wait timestamp", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_wait_timestamp[SECONDS]", template: "scenarios/statemachines/wait_timestamp.json5",
			patch: func(s string) string {
				return strings.ReplaceAll(s, "%WAIT_TIMESTAMP_LITERAL%", "2016-03-14T01:59:00Z")
			}},
		{name: "map item selector", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_map_state_item_selector[MAP_STATE_ITEM_SELECTOR]", template: "scenarios/statemachines/map_state_item_selector.json5"},
		{name: "map catch", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_map_state_catch", template: "scenarios/statemachines/map_state_catch.json5"},
		{name: "map retry", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_map_state_retry", template: "scenarios/statemachines/map_state_retry.json5"},
		{name: "map legacy", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_map_state_legacy", template: "scenarios/statemachines/map_state_legacy.json5"},
		{name: "parallel", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_parallel_state[PARALLEL_STATE]", template: "scenarios/statemachines/parallel_state.json5",
			opt: Options{Unordered: true, DropTypes: []string{"ParallelStateSucceeded"}}},
		{name: "catch States.Runtime", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_catch_states_runtime", template: "scenarios/statemachines/catch_states_runtime.json5",
			patch: func(s string) string { return strings.ReplaceAll(s, "_tbd_", fnArn) },
			opt:   Options{IgnoreDetails: []string{"lambdaFunctionScheduledEventDetails.resource", "executionFailedEventDetails.cause"}}},
		{name: "fail intrinsic", snapshot: "base/test_base.snapshot.json", test: "::test_state_fail_intrinsic", template: "base/statemachines/raise_failure_path_intrinsic.json5"},
		{name: "wildcard no match", snapshot: "base/test_base.snapshot.json", test: "::test_json_path_array_wildcard_or_slice_with_no_input[$.items[*].itemValue]", template: "base/statemachines/json_path_array_access.json5",
			patch: func(s string) string { return strings.ReplaceAll(s, "$.items[0]", "$.items[*].itemValue") }},
		{name: "choice unsorted true", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: `::test_choice_unsorted_parameters[{"result": {"done": true}}]`, template: "scenarios/statemachines/choice_state_unsorted_choice_parameters.json5"},
		{name: "choice unsorted false", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: `::test_choice_unsorted_parameters[{"result": {"done": false}}]`, template: "scenarios/statemachines/choice_state_unsorted_choice_parameters.json5"},
		{name: "choice singleton composite", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_choice_singleton_composite[CHOICE_STATE_SINGLETON_COMPOSITE]", template: "scenarios/statemachines/choice_state_singleton_composite.json5"},
		{name: "wait timestamp path", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_wait_timestamp_path[SECONDS]", template: "scenarios/statemachines/wait_timestamp_path.json5",
			input: `{"TimestampValue": "2016-03-14T01:59:00Z"}`, opt: Options{IgnoreDetails: []string{"executionStartedEventDetails.input", "stateEnteredEventDetails.input", "stateExitedEventDetails.output", "executionSucceededEventDetails.output"}}},
		{name: "map parameters legacy", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_map_state_parameters_legacy", template: "scenarios/statemachines/map_state_parameters_legacy.json5"},
		{name: "map break condition", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_map_state_break_condition", template: "scenarios/statemachines/map_state_break_condition.json5"},
		{name: "map nested", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_map_state_nested", template: "scenarios/statemachines/map_state_nested.json5"},
		{name: "map retry multiple retriers", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_map_state_retry_multiple_retriers", template: "scenarios/statemachines/map_state_retry_multiple_retriers.json5"},
		{name: "parallel catch", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_parallel_state_catch", template: "scenarios/statemachines/parallel_state_catch.json5"},
		{name: "parallel retry", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_parallel_state_retry", template: "scenarios/statemachines/parallel_state_retry.json5"},
		{name: "parallel fail", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_parallel_state_fail", template: "scenarios/statemachines/parallel_state_fail.json5"},
		{name: "retry interval features", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_retry_interval_features", template: "scenarios/statemachines/retry_interval_features.json5",
			patch: func(s string) string {
				return strings.ReplaceAll(strings.ReplaceAll(s, "__tbd__", raiseArn), "_tbd_", raiseArn)
			}, opt: lambdaOpt},
		{name: "retry jitter none", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_retry_interval_features_jitter_none", template: "scenarios/statemachines/retry_interval_features_jitter_none.json5",
			patch: func(s string) string {
				return strings.ReplaceAll(strings.ReplaceAll(s, "__tbd__", raiseArn), "_tbd_", raiseArn)
			}, opt: lambdaOpt},
		{name: "retry max attempts zero", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_retry_interval_features_max_attempts_zero", template: "scenarios/statemachines/retry_interval_features_max_attempts_zero.json5",
			patch: func(s string) string {
				return strings.ReplaceAll(strings.ReplaceAll(s, "__tbd__", raiseArn), "_tbd_", raiseArn)
			}, opt: lambdaOpt},
		{name: "lambda empty retry", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_lambda_empty_retry", template: "scenarios/statemachines/lambda_empty_retry.json5",
			patch: func(s string) string {
				return strings.ReplaceAll(strings.ReplaceAll(s, "__tbd__", raiseArn), "_tbd_", raiseArn)
			}, opt: lambdaOpt},
		{name: "lambda invoke with retry", snapshot: "scenarios/test_base_scenarios.snapshot.json", test: "::test_lambda_invoke_with_retry_base", template: "scenarios/statemachines/lambda_invoke_with_retry_base.json5",
			patch: func(s string) string {
				return strings.ReplaceAll(strings.ReplaceAll(s, "__tbd__", raiseArn), "_tbd_", raiseArn)
			}, opt: lambdaOpt},
		{name: "assign evaluation order", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_state_assign_evaluation_order[BASE_EVALUATION_ORDER_PASS_STATE]", template: "assign/statemachines/base_evaluation_order_pass_state.json5"},
		{name: "assign from parameters", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_assign_from_value[BASE_ASSIGN_FROM_PARAMETERS]", template: "assign/statemachines/base_assign_from_parameters.json5"},
		{name: "assign from result", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_assign_from_value[BASE_ASSIGN_FROM_RESULT]", template: "assign/statemachines/base_assign_from_result.json5"},
		{name: "assign from intrinsic", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_assign_from_value[BASE_ASSIGN_FROM_INTRINSIC_FUNCTION]", template: "assign/statemachines/base_assign_from_intrinsic_function.json5"},
		{name: "assign in choice", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_assign_in_choice_state[CORRECT]", template: "assign/statemachines/base_assign_in_choice.json5"},
		{name: "assign in wait", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_assign_in_wait_state", template: "assign/statemachines/base_assign_in_wait.json5"},
		{name: "reference in parameters", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_reference_assign[BASE_REFERENCE_IN_PARAMETERS]", template: "assign/statemachines/base_reference_in_parameters.json5"},
		{name: "reference in choice", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_reference_assign[BASE_REFERENCE_IN_CHOICE]", template: "assign/statemachines/base_reference_in_choice.json5"},
		{name: "reference in outer scope", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_reference_assign[BASE_REFERENCE_IN_ITERATOR_OUTER_SCOPE]", template: "assign/statemachines/base_reference_in_iterator_outer_scope.json5"},
		{name: "reference in inputpath", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_reference_assign[BASE_REFERENCE_IN_INPUTPATH]", template: "assign/statemachines/base_reference_in_inputpath.json5"},
		{name: "reference in outputpath", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_reference_assign[BASE_REFERENCE_IN_OUTPUTPATH]", template: "assign/statemachines/base_reference_in_outputpath.json5"},
		{name: "reference in intrinsic", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_reference_assign[BASE_REFERENCE_IN_INTRINSIC_FUNCTION]", template: "assign/statemachines/base_reference_in_intrinsic_function.json5"},
		{name: "reference in fail", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_reference_assign[BASE_REFERENCE_IN_FAIL]", template: "assign/statemachines/base_reference_in_fail.json5"},
		{name: "map reference in items path", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_reference_in_map_state[MAP_STATE_REFERENCE_IN_ITEMS_PATH]", template: "assign/statemachines/map_state_reference_in_items_path.json5"},
		{name: "map reference in max concurrency", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_reference_in_map_state[MAP_STATE_REFERENCE_IN_MAX_CONCURRENCY_PATH]", template: "assign/statemachines/map_state_reference_in_max_concurrency_path.json5"},
		{name: "map reference in intrinsic", snapshot: "assign/test_assign_reference_variables.snapshot.json", test: "::test_reference_in_map_state[MAP_STATE_REFERENCE_IN_INTRINSIC_FUNCTION]", template: "assign/statemachines/map_state_reference_in_intrinsic_function.json5"},
		{name: "lambda:invoke result over 256 KiB caught by States.ALL", snapshot: "error_handling/test_states_errors.snapshot.json", test: "::test_service_task_lambada_catch_state_all_data_limit_exceeded_on_large_utf8_response",
			template: "errorhandling/statemachines/task_service_lambda_invoke_catch_data_limit_exceeded.json5", input: `{"FunctionName":"big","Payload":null}`,
			patch: dropFirstCatcher("InvokeLambda"),
			opt:   Options{IgnoreDetails: []string{"executionStartedEventDetails.input", "stateEnteredEventDetails.input", "taskScheduledEventDetails.parameters"}}},
		{name: "legacy lambda result over 256 KiB caught by States.ALL", snapshot: "error_handling/test_states_errors.snapshot.json", test: "::test_task_lambda_catch_state_all_data_limit_exceeded_on_large_utf8_response",
			template: "errorhandling/statemachines/task_lambda_invoke_catch_data_limit_exceeded.json5",
			patch: func(s string) string {
				s = strings.ReplaceAll(strings.ReplaceAll(s, "__tbd__", "arn:aws:lambda:us-east-1:111111111111:function:big"), "_tbd_", "arn:aws:lambda:us-east-1:111111111111:function:big")
				return dropFirstCatcher("InvokeLambda")(s)
			},
			opt: Options{IgnoreDetails: []string{"lambdaFunctionScheduledEventDetails.resource", "lambdaFunctionFailedEventDetails.cause",
				"stateExitedEventDetails.output", "stateEnteredEventDetails.input", "executionSucceededEventDetails.output"}}},
		{name: "legacy lambda exception caught by TaskFailed", snapshot: "error_handling/test_task_lambda.snapshot.json", test: "::test_raise_exception_catch", template: "errorhandling/statemachines/task_lambda_invoke_catch_relevant.json5",
			patch: func(s string) string {
				return strings.ReplaceAll(s, "__tbd__", "arn:aws:lambda:us-east-1:000000000000:function:raise")
			},
			opt: lambdaOpt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Load(root, tc.snapshot, tc.test, "get_execution_history")
			if err != nil {
				t.Fatal(err)
			}
			def, err := Template(root, tc.template)
			if err != nil {
				t.Fatal(err)
			}
			if tc.patch != nil {
				def = []byte(tc.patch(string(def)))
			}
			m, err := asl.Parse(def, asl.Options{})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)), Lambda: lambdas})
			input := rec.Input()
			if tc.input != "" {
				input = tc.input
			}
			x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: input})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := x.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := Normalize(x.History())
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range Diff(rec.Events, got, tc.opt) {
				t.Error(d)
			}
		})
	}
}

// dropFirstCatcher removes a state's first catcher and the state it led to, as the
// catch_state_all tests do to let States.ALL catch States.DataLimitExceeded.
func dropFirstCatcher(state string) func(string) string {
	return func(def string) string {
		v, err := jsonv.DecodeString(def)
		if err != nil {
			return def
		}
		states := v.(map[string]any)["States"].(map[string]any)
		st := states[state].(map[string]any)
		catchers := st["Catch"].([]any)
		delete(states, catchers[0].(map[string]any)["Next"].(string))
		st["Catch"] = catchers[1:]
		return jsonv.EncodeString(v)
	}
}
