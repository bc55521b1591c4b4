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

// sqsWorker stands in for sqs:sendMessage plus the test's consumer: it hands the task token found
// in the message body to answer, on its own goroutine, as a queue consumer would.
func sqsWorker(eng **asl.Engine, answer func(eng *asl.Engine, token string, body map[string]any)) asl.Integration {
	return asl.IntegrationFunc(func(ctx context.Context, call *asl.TaskCall) (any, error) {
		params := call.Parameters.(map[string]any)
		body, _ := params["MessageBody"].(map[string]any)
		go answer(*eng, call.TaskToken, body)
		return map[string]any{"MD5OfMessageBody": "md5", "MessageId": "00000000-0000-0000-0000-000000000001"}, nil
	})
}

func TestRecordedCallbacks(t *testing.T) {
	wd, _ := os.Getwd()
	root := Root(wd)
	if root == "" {
		t.Skip("conformance/localstack-sfn not found (set SINEW_CONFORMANCE)")
	}
	ignore := Options{IgnoreDetails: []string{"executionStartedEventDetails.roleArn", "taskScheduledEventDetails.parameters", "taskSubmittedEventDetails.output"}}
	cases := []struct {
		name, test, template string
		answer               func(eng *asl.Engine, token string, body map[string]any)
	}{
		{"success", "::test_sqs_wait_for_task_token", "callbacks/statemachines/sqs_wait_for_task_token.json5",
			func(eng *asl.Engine, tok string, body map[string]any) {
				_ = eng.SendTaskSuccess(tok, jsonv.EncodeString(body["Message"]))
			}},
		{"failure", "::test_sqs_failure_in_wait_for_task_token", "callbacks/statemachines/sqs_wait_for_task_token.json5",
			func(eng *asl.Engine, tok string, _ map[string]any) {
				_ = eng.SendTaskFailure(tok, "Failure error", "Failure cause")
			}},
		{"failure without error fields, caught", "::test_sqs_failure_in_wait_for_task_tok_no_error_field[SQS_WAIT_FOR_TASK_TOKEN_CATCH]", "callbacks/statemachines/sqs_wait_for_task_token_catch.json5",
			func(eng *asl.Engine, tok string, _ map[string]any) {
				_ = eng.SendTaskFailure(tok, "", "")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Load(root, "callback/test_callback.snapshot.json", tc.test, "get_execution_history")
			if err != nil {
				t.Fatal(err)
			}
			def, err := Template(root, tc.template)
			if err != nil {
				t.Fatal(err)
			}
			m, err := asl.Parse(def, asl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var eng *asl.Engine
			eng = asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Unix(0, 0)),
				Integrations: map[string]asl.Integration{"sqs:sendMessage": sqsWorker(&eng, tc.answer)}})
			x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: rec.Input()})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := x.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			got, _ := Normalize(x.History())
			for _, d := range Diff(rec.Events, got, ignore) {
				t.Error(d)
			}
			if strings.Contains(tc.name, "caught") && eng.PendingTokens() != 0 {
				t.Errorf("%d tokens still pending", eng.PendingTokens())
			}
		})
	}
}
