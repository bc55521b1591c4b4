package asl_test

import (
	"errors"
	"strings"
	"testing"

	"sinew/internal/asl"
	"sinew/internal/fault"
)

func TestParseRejects(t *testing.T) {
	cases := []struct {
		name, def, want string
	}{
		{"not json", `{`, "INVALID_JSON_DESCRIPTION: Definition must be a valid JSON object at /"},
		{"no StartAt", `{"States":{"A":{"Type":"Succeed"}}}`, "SCHEMA_VALIDATION_FAILED: These fields are required: [StartAt] at /"},
		{"no States nor StartAt", `{}`, "These fields are required: [States, StartAt] at /"},
		{"bad type", `{"StartAt":"A","States":{"A":{"Type":"Nope"}}}`, "The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map] at /States/A/Type"},
		{"missing next target", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`, "MISSING_TRANSITION_TARGET: Missing 'Next' target: B at /States/A/Next"},
		{"missing start target", `{"StartAt":"X","States":{"A":{"Type":"Succeed"}}}`, "Missing 'Next' target: X at /StartAt"},
		{"unreachable", `{"StartAt":"A","States":{"A":{"Type":"Succeed"},"B":{"Type":"Succeed"}}}`, `State "B" is not reachable at /States/B`},
		{"no next nor end", `{"StartAt":"A","States":{"A":{"Type":"Pass"}}}`, "These fields are required: [Next] or [End] at /States/A"},
		{"bad input path", `{"StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"nope","End":true}}}`, "The value for the field 'InputPath' must be a valid JSONPath at /States/A/InputPath"},
		{"bad parameters path", `{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"x.$":"nope"},"End":true}}}`, "The value for the field 'x.$' must be a valid JSONPath or a valid intrinsic function call at /States/A/Parameters"},
		{"downgrade", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","QueryLanguage":"JSONPath","End":true}}}`, "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine at /States/A"},
		{"jsonpath field in jsonata", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"$","End":true}}}`, "The field 'InputPath' is not supported for the JSONata query language"},
		{"jsonata field in jsonpath", `{"StartAt":"A","States":{"A":{"Type":"Pass","Output":{},"End":true}}}`, "The field 'Output' is not supported for the JSONPath query language"},
		{"unknown field", `{"StartAt":"A","States":{"A":{"Type":"Pass","Foo":1,"End":true}}}`, "The field 'Foo' is not supported by Step Functions at /States/A"},
		{"States.ALL not last", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Retry":[{"ErrorEquals":["States.ALL"]},{"ErrorEquals":["X"]}],"End":true}}}`, "States.ALL must appear alone and in the last retrier or catcher"},
		{"bad resource", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"__tbd__","End":true}}}`, "The resource provided __tbd__ is not recognized"},
		{"empty branches", `{"StartAt":"A","States":{"A":{"Type":"Parallel","Branches":[],"End":true}}}`, "Value cannot be empty at /States/A/Branches"},
		{"bad timestamp", `{"StartAt":"A","States":{"A":{"Type":"Wait","Timestamp":"2020-01-01 00:00:00","End":true}}}`, "String does not match RFC3339 timestamp at /States/A/Timestamp"},
		{"branch missing target", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Z"}}}]}}}`, "Missing 'Next' target: Z at /States/P/Branches[0]/States/A/Next"},
		{"jsonata without evaluator", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% 1 %}","End":true}}}`, "JSONata expressions need a JSONata evaluator"},
		{"choice bad operator value", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.a","NumericEquals":"x","Next":"E"}]},"E":{"Type":"Succeed"}}}`, "The value of the field 'NumericEquals' has the wrong type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := asl.Parse([]byte(tc.def), asl.Options{})
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "Invalid State Machine Definition: '") {
				t.Errorf("error %q lacks AWS's prefix", err)
			}
			if fault.KindOf(err) != fault.InvalidInput {
				t.Errorf("kind %s, want InvalidInput", fault.KindOf(err))
			}
			var de *asl.DefinitionError
			if !errors.As(err, &de) || len(de.Diagnostics) == 0 {
				t.Error("no diagnostics")
			}
		})
	}
}

func TestParseAcceptsStatemachineShapes(t *testing.T) {
	def := `{"StartAt":"A","TimeoutSeconds":60,"States":{
	  "A":{"Type":"Pass","Result":{"x.$":"$.not.evaluated"},"ResultPath":"$.r","Next":"C"},
	  "C":{"Type":"Choice","Choices":[{"And":[{"Variable":"$.r","IsPresent":true},{"Not":{"Variable":"$.r.x","StringMatches":"*zz*"}}],"Next":"M"}],"Default":"F"},
	  "M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":2,"ItemSelector":{"v.$":"$$.Map.Item.Value"},"ItemProcessor":{"ProcessorConfig":{"Mode":"INLINE"},"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"Next":"W"},
	  "W":{"Type":"Wait","SecondsPath":"$.n","Next":"T"},
	  "T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","HeartbeatSeconds":5,"TimeoutSeconds":10,"Parameters":{"FunctionName":"f","Payload":{"t.$":"$$.Task.Token"}},"Retry":[{"ErrorEquals":["States.Timeout"],"MaxAttempts":1,"JitterStrategy":"FULL","MaxDelaySeconds":3}],"Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"F"}],"End":true},
	  "F":{"Type":"Fail","Error":"E","Cause":"C"}}}`
	if _, err := asl.Parse([]byte(def), asl.Options{}); err != nil {
		t.Fatal(err)
	}
}
