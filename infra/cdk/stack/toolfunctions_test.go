package stack

import (
	"strings"
	"testing"

	"sinew/internal/config"
)

// TestToolFunctionGrants: the integration function may invoke exactly the developers' functions
// SINEW_AWS_LAMBDA_FUNCTIONS names (each with its qualifiers), none by default, and no other
// function gets that grant; a setting that is not a list of functions, or "*", stops the synth.
func TestToolFunctionGrants(t *testing.T) {
	invokes := func(s *synthed, fn string) []string {
		var out []string
		for _, st := range s.rolePolicies(t)[fn] {
			if st.Sid == "InvokeToolFunctions" {
				out = append(out, st.Resources...)
			}
		}
		return out
	}
	if got := invokes(defaultStack(t), "integration"); len(got) != 0 {
		t.Errorf("default stack: integration may invoke %v, want no developer function", got)
	}
	s := synth(t, map[string]any{config.EnvLambdaTools: "adder, tools-*,arn:aws:lambda:us-east-1:123456789012:function:billing"})
	got := strings.Join(invokes(s, "integration"), " ")
	for _, want := range []string{":function:adder\"", ":function:adder:*\"", ":function:tools-*\"",
		"arn:aws:lambda:us-east-1:123456789012:function:billing", "arn:aws:lambda:us-east-1:123456789012:function:billing:*"} {
		if !strings.Contains(got, want) {
			t.Errorf("integration's InvokeToolFunctions %s lacks %s", got, want)
		}
	}
	for fn, sts := range s.rolePolicies(t) {
		for _, st := range sts {
			if fn != "integration" && st.Sid == "InvokeToolFunctions" {
				t.Errorf("%s may invoke the developers' functions: %v", fn, st.Resources)
			}
		}
	}
	for _, bad := range []string{"*", "arn:aws:lambda:us-east-1:123456789012:function:*", "not a function", "a:b:c"} {
		_, err := ParseSettings(func(k string) (any, bool) { return bad, k == config.EnvLambdaTools }, []string{config.EnvLambdaTools})
		if err == nil || !strings.Contains(err.Error(), config.EnvLambdaTools) {
			t.Errorf("%s=%q: %v, want a refusal naming the setting", config.EnvLambdaTools, bad, err)
		}
	}
}
