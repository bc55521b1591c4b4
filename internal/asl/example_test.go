package asl_test

import (
	"context"
	"fmt"
	"time"

	"sinew/internal/asl"
)

// The engine runs a state machine written in the Amazon States Language, here a Pass state that
// shapes its input and a Choice between two ends, and records its history as Step Functions does.
func Example() {
	m, err := asl.Parse([]byte(`{
		"StartAt": "Shape",
		"States": {
			"Shape": {"Type": "Pass", "Parameters": {"n.$": "$.count", "who.$": "$.user.name"}, "Next": "Many?"},
			"Many?": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericGreaterThan": 2, "Next": "Many"}], "Default": "Few"},
			"Many": {"Type": "Pass", "Result": "many", "ResultPath": "$.verdict", "End": true},
			"Few": {"Type": "Succeed"}
		}
	}`), asl.Options{})
	if err != nil {
		fmt.Println("parse:", err)
		return
	}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))})
	x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `{"count": 3, "user": {"name": "Ada"}}`})
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	d, err := x.Wait(context.Background())
	if err != nil {
		fmt.Println("wait:", err)
		return
	}
	fmt.Println(d.Status, d.Output)
	for _, e := range x.History() {
		fmt.Println(e.Type)
	}
	// Output:
	// SUCCEEDED {"n":3,"verdict":"many","who":"Ada"}
	// ExecutionStarted
	// PassStateEntered
	// PassStateExited
	// ChoiceStateEntered
	// ChoiceStateExited
	// PassStateEntered
	// PassStateExited
	// ExecutionSucceeded
}
