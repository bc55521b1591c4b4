package conformance

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
)

// TestRecordedStartExecution replays states:startExecution.sync and .sync:2 with the child
// machines the recorded tests deployed.
func TestRecordedStartExecution(t *testing.T) {
	wd, _ := os.Getwd()
	root := Root(wd)
	if root == "" {
		t.Skip("conformance/localstack-sfn not found (set SINEW_CONFORMANCE)")
	}
	// Dates, request ids and ARNs are placeholders in the recording.
	opt := Options{IgnoreDetails: []string{"taskSubmittedEventDetails.output", "taskSucceededEventDetails.output", "taskFailedEventDetails.cause",
		"stateExitedEventDetails.output", "executionSucceededEventDetails.output", "executionFailedEventDetails.cause",
		"executionStartedEventDetails.input", "stateEnteredEventDetails.input", "taskScheduledEventDetails.parameters"}}
	cases := []struct {
		name, test, template, child string
		status                      string
	}{
		{"sync2", "::test_start_execution_sync2", "callbacks/statemachines/sfn_start_execution_sync2.json5", "base/statemachines/pass_result.json5", asl.StatusSucceeded},
		{"sync", "::test_start_execution_sync", "callbacks/statemachines/sfn_start_execution_sync.json5", "base/statemachines/pass_result.json5", asl.StatusSucceeded},
		{"sync child fails", "::test_start_execution_sync_delegate_failure", "callbacks/statemachines/sfn_start_execution_sync.json5", "base/statemachines/raise_failure.json5", asl.StatusFailed},
	}
	const childArn = "arn:aws:states:us-east-1:000000000000:stateMachine:child"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Load(root, "callback/test_callback.snapshot.json", tc.test, "get_execution_history")
			if err != nil {
				t.Fatal(err)
			}
			parent, err := Template(root, tc.template)
			if err != nil {
				t.Fatal(err)
			}
			childDef, err := Template(root, tc.child)
			if err != nil {
				t.Fatal(err)
			}
			pm, err := asl.Parse(parent, asl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cm, err := asl.Parse(childDef, asl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Unix(0, 0)), Machines: func(arn string) (*asl.Machine, bool) {
				return cm, arn == childArn
			}})
			x, err := eng.Start(context.Background(), asl.StartInput{Machine: pm,
				Input: `{"StateMachineArn":"` + childArn + `","Input":null,"Name":"TestStartTarget"}`})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			d, err := x.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := Normalize(x.History())
			for _, diff := range Diff(rec.Events, got, opt) {
				t.Error(diff)
			}
			if d.Status != tc.status {
				t.Fatalf("status %s: %s", d.Status, d.Cause)
			}
			h := x.History()
			switch tc.name {
			case "sync2":
				if d.Output == "" || !contains(d.Output, `"Output":{"Arg1":"argument1"}`) {
					t.Errorf("output %s", d.Output)
				}
			case "sync":
				if !contains(d.Output, `"Output":"{\"Arg1\":\"argument1\"}"`) {
					t.Errorf("output %s", d.Output)
				}
			default:
				tf := h[len(h)-2].TaskFailedEventDetails
				if tf == nil || tf.Error != "States.TaskFailed" || !contains(tf.Cause, `"Error":"SomeFailure"`) {
					t.Errorf("TaskFailed %+v", tf)
				}
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
