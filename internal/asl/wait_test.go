package asl_test

import (
	"context"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
)

// TestWaitValuesCheckedAsAWS runs a Wait state on values AWS refuses at run time and on the edges
// it accepts.
func TestWaitValuesCheckedAsAWS(t *testing.T) {
	const entered = "An error occurred while executing the state 'W' (entered at the event id #2). "
	path := func(field string) string {
		return `{"StartAt":"W","States":{"W":{"Type":"Wait","` + field + `":"$.v","End":true}}}`
	}
	jn := func(field string) string {
		return `{"QueryLanguage":"JSONata","StartAt":"W","States":{"W":{"Type":"Wait","` + field + `":"{% $states.input.v %}","End":true}}}`
	}
	cases := []struct {
		name, def, input, errName, cause string
	}{
		{"SecondsPath zero", path("SecondsPath"), `{"v":0}`, "", ""},
		{"SecondsPath at the maximum", path("SecondsPath"), `{"v":99999999}`, "", ""},
		{"SecondsPath whole float", path("SecondsPath"), `{"v":3.0}`, "", ""},
		{"SecondsPath missing", path("SecondsPath"), `{}`, "States.Runtime",
			entered + "The SecondsPath parameter does not reference an input value: $.v"},
		{"SecondsPath negative", path("SecondsPath"), `{"v":-1}`, "States.Runtime",
			entered + "The SecondsPath parameter references a negative value: $.v == -1"},
		{"SecondsPath fraction", path("SecondsPath"), `{"v":1.5}`, "States.Runtime",
			entered + "The SecondsPath parameter cannot be parsed as a long value: $.v == 1.5"},
		{"SecondsPath string", path("SecondsPath"), `{"v":"10"}`, "States.Runtime",
			entered + "The SecondsPath parameter cannot be parsed as a long value: $.v == 10"},
		{"SecondsPath object", path("SecondsPath"), `{"v":{"a":1}}`, "States.Runtime",
			entered + `The SecondsPath parameter cannot be parsed as a long value: $.v == {"a":1}`},
		{"SecondsPath above the maximum", path("SecondsPath"), `{"v":100000000}`, "States.Runtime",
			entered + "The SecondsPath parameter references a value greater than 99999999: $.v == 100000000"},
		{"JSONata Seconds", jn("Seconds"), `{"v":5}`, "", ""},
		{"JSONata Seconds string", jn("Seconds"), `{"v":"5"}`, "States.QueryEvaluationError",
			entered + `The JSONata expression '$states.input.v' specified for the field 'Seconds' returned an unexpected result type. Expected 'integer', but was 'string' for value: "5"`},
		{"JSONata Seconds fraction", jn("Seconds"), `{"v":0.5}`, "States.QueryEvaluationError",
			entered + `The JSONata expression '$states.input.v' specified for the field 'Seconds' returned an unexpected result type. Expected 'integer', but was 'number' for value: 0.5`},
		{"JSONata Seconds negative", jn("Seconds"), `{"v":-3}`, "States.QueryEvaluationError",
			entered + `The JSONata expression '$states.input.v' specified for the field 'Seconds' returned a value out of range. Expected an integer between 0 and 99999999, but was: -3`},
		{"JSONata Seconds too large", jn("Seconds"), `{"v":1e9}`, "States.QueryEvaluationError",
			entered + `The JSONata expression '$states.input.v' specified for the field 'Seconds' returned a value out of range. Expected an integer between 0 and 99999999, but was: 1000000000`},
		{"TimestampPath offset", path("TimestampPath"), `{"v":"2024-01-01T00:00:05+00:00"}`, "", ""},
		{"TimestampPath no zone", path("TimestampPath"), `{"v":"2016-12-05T21:29:29"}`, "States.Runtime",
			entered + "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.v == 2016-12-05T21:29:29"},
		{"TimestampPath bad month", path("TimestampPath"), `{"v":"2016-13-05T21:29:29Z"}`, "States.Runtime",
			entered + "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.v == 2016-13-05T21:29:29Z"},
		{"JSONata Timestamp space", jn("Timestamp"), `{"v":"2016-12-05 21:29:29Z"}`, "States.QueryEvaluationError",
			entered + "The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: 2016-12-05 21:29:29Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
			m, err := asl.Parse([]byte(tc.def), asl.Options{JSONata: jsonata.New()})
			if err != nil {
				t.Fatal(err)
			}
			x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: tc.input})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			d, err := x.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.errName == "" {
				if d.Status != asl.StatusSucceeded {
					t.Fatalf("status %s: %s %s", d.Status, d.Error, d.Cause)
				}
				return
			}
			if d.Status != asl.StatusFailed || d.Error != tc.errName || d.Cause != tc.cause {
				t.Fatalf("got %s %s %q\nwant FAILED %s %q", d.Status, d.Error, d.Cause, tc.errName, tc.cause)
			}
			if tc.errName == "States.QueryEvaluationError" {
				if got := types(x); len(got) < 3 || got[2] != "EvaluationFailed" {
					t.Fatalf("events %v: want EvaluationFailed after WaitStateEntered", got)
				}
			}
		})
	}
}
