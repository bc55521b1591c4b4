package conformance

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
)

// sleepyLambda "sleeps" 60 s on the engine's clock, as the recorded tests' wait_60_seconds
// function does; on a virtual clock that moves time past the task's timeout at once.
type sleepyLambda struct{ clock asl.Clock }

func (l sleepyLambda) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	if err := l.clock.Sleep(ctx, 60*time.Second); err != nil {
		return nil, err
	}
	return &asl.LambdaResponse{Payload: []byte(`{}`)}, nil
}

func TestRecordedTimeouts(t *testing.T) {
	wd, _ := os.Getwd()
	root := Root(wd)
	if root == "" {
		t.Skip("conformance/localstack-sfn not found (set SINEW_CONFORMANCE)")
	}
	fn := "arn:aws:lambda:us-east-1:000000000000:function:sleepy"
	cases := []struct {
		name, test, template string
		patch                func(string) string
		input                string
		opt                  Options
	}{
		{name: "legacy lambda", test: "::test_fixed_timeout_lambda", template: "timeouts/statemachines/lambda_wait_with_timeout_seconds.json5",
			patch: func(s string) string { return strings.ReplaceAll(s, "__tbc__", fn) },
			opt:   Options{IgnoreDetails: []string{"lambdaFunctionScheduledEventDetails.resource"}}},
		{name: "lambda:invoke", test: "::test_fixed_timeout_service_lambda", template: "timeouts/statemachines/service_lambda_wait_with_timeout_seconds.json5",
			input: `{"FunctionName":"sleepy","Payload":null}`,
			opt:   Options{IgnoreDetails: []string{"executionStartedEventDetails.input", "stateEnteredEventDetails.input", "taskScheduledEventDetails.parameters"}}},
		{name: "lambda:invoke, TimeoutSecondsPath", test: "::test_fixed_timeout_service_lambda_with_path", template: "timeouts/statemachines/service_lambda_wait_with_timeout_seconds_path.json5",
			input: `{"TimeoutSecondsValue":5,"FunctionName":"sleepy","Payload":null}`,
			opt:   Options{IgnoreDetails: []string{"executionStartedEventDetails.input", "stateEnteredEventDetails.input", "taskScheduledEventDetails.parameters"}}},
	}
	// TODO(conformance): test_service_lambda_map_timeout (four iterations timing out together) needs
	// the four invocations in flight before virtual time moves; its event order is the scheduler's.
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Load(root, "timeouts/test_timeouts.snapshot.json", tc.test, "get_execution_history")
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
				t.Fatal(err)
			}
			clock := asl.NewVirtualClock(time.Unix(0, 0))
			eng := asl.New(asl.Config{Clock: clock, Lambda: sleepyLambda{clock}})
			input := tc.input
			if input == "" {
				input = rec.Input()
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
			got, _ := Normalize(x.History())
			for _, d := range Diff(rec.Events, got, tc.opt) {
				t.Error(d)
			}
		})
	}
	t.Run("global timeout", func(t *testing.T) {
		// Recorded only through DescribeExecution: status TIMED_OUT.
		m, err := asl.Parse([]byte(`{"StartAt":"W","TimeoutSeconds":5,"States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`), asl.Options{})
		if err != nil {
			t.Fatal(err)
		}
		eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Unix(0, 0))})
		x, _ := eng.Start(context.Background(), asl.StartInput{Machine: m})
		d, _ := x.Wait(context.Background())
		if d.Status != asl.StatusTimedOut {
			t.Fatalf("%+v", d)
		}
	})
}
