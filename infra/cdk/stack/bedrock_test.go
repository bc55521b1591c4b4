package stack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"sinew/internal/deploy"
)

// TestBedrockGrants holds each model-calling function's Bedrock statements to exactly what an id
// reaches: a model id its foundation model in the stack's Region; a geographic profile the profile
// and its model in any Region, but only through that profile; a global profile the profile, its
// model in the Region and the Region-less model ARN, both only through it. Functions that call no
// model get none.
func TestBedrockGrants(t *testing.T) {
	const (
		haiku   = "anthropic.claude-haiku-4-5-20251001-v1:0"
		profile = "arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/"
	)
	model := func(region, id string) string {
		return "arn:${AWS::Partition}:bedrock:" + region + "::foundation-model/" + id
	}
	via := func(p string) string { return `{"StringEquals":{"bedrock:InferenceProfileArn":"` + profile + p + `"}}` }
	global := func(p string) string {
		return `{"StringEquals":{"aws:RequestedRegion":"unspecified","bedrock:InferenceProfileArn":"` + profile + p + `"}}`
	}
	tests := []struct {
		name string
		ctx  map[string]any
		want []string // "sid resources... condition", sorted resources
	}{
		{"model id", map[string]any{"SINEW_MODEL": "bedrock:amazon.nova-micro-v1:0"},
			[]string{"InvokeModels " + model("${AWS::Region}", "amazon.nova-micro-v1:0") + " -"}},
		{"geographic profile", map[string]any{"SINEW_MODEL": "bedrock:eu." + haiku}, []string{
			"InvokeModels " + profile + "eu." + haiku + " -",
			"Profile1Model " + model("*", haiku) + " " + via("eu."+haiku)}},
		{"Japan's profile", map[string]any{"SINEW_MODEL": "bedrock:jp." + haiku}, []string{
			"InvokeModels " + profile + "jp." + haiku + " -",
			"Profile1Model " + model("*", haiku) + " " + via("jp."+haiku)}},
		{"global profile", map[string]any{"SINEW_MODEL": "bedrock:global." + haiku}, []string{
			"InvokeModels " + profile + "global." + haiku + " -",
			"Profile1Model " + model("${AWS::Region}", haiku) + " " + via("global."+haiku),
			"Profile1ModelGlobal " + model("", haiku) + " " + global("global."+haiku)}},
		{"several", map[string]any{"SINEW_MODEL": "bedrock:us." + haiku, CtxBedrockModels: "amazon.nova-micro-v1:0,global." + haiku}, []string{
			"InvokeModels " + profile + "global." + haiku + " " + profile + "us." + haiku + " " + model("${AWS::Region}", "amazon.nova-micro-v1:0") + " -",
			"Profile1Model " + model("*", haiku) + " " + via("us."+haiku),
			"Profile2Model " + model("${AWS::Region}", haiku) + " " + via("global."+haiku),
			"Profile2ModelGlobal " + model("", haiku) + " " + global("global."+haiku)}},
		{"no Bedrock model", map[string]any{"SINEW_MODEL": "openai:gpt-4o-mini", "SINEW_OPENAI_BASE_URL": "https://llm.example.com/v1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pols := synth(t, tt.ctx).rolePolicies(t)
			for _, f := range deploy.Functions() {
				var got []string
				for _, st := range hasAction(pols[f.Name], "bedrock:InvokeModel") {
					got = append(got, renderGrant(t, st))
				}
				want := tt.want
				if !f.Allows(deploy.BedrockInvoke, "") {
					want = nil
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s's Bedrock statements:\n\t%s\nwant\n\t%s", f.Name, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
				}
			}
		})
	}
}

// renderGrant writes a bedrock:InvokeModel statement as "sid resources... condition" with the
// template's intrinsics as ${...}, after checking it allows that action alone.
func renderGrant(t *testing.T, st statement) string {
	t.Helper()
	if st.Effect != "Allow" || !slices.Equal(st.Actions, []string{"bedrock:InvokeModel"}) {
		t.Errorf("%s: %s %v, want Allow of bedrock:InvokeModel alone", st.Sid, st.Effect, st.Actions)
	}
	var res []string
	for _, r := range st.Resources {
		res = append(res, renderIntrinsic(t, r))
	}
	slices.Sort(res)
	cond := "-"
	if st.Condition != nil {
		c := map[string]map[string]string{}
		for op, kv := range st.Condition {
			c[op] = map[string]string{}
			for k, v := range kv.(map[string]any) {
				b, _ := json.Marshal(v)
				c[op][k] = renderIntrinsic(t, string(b))
			}
		}
		b, _ := json.Marshal(c) // sorted keys
		cond = string(b)
	}
	return st.Sid + " " + strings.Join(res, " ") + " " + cond
}

// renderIntrinsic renders a value as asStrings gives it: a plain string, or the JSON of an
// Fn::Join of strings and Refs, written as ${Ref}.
func renderIntrinsic(t *testing.T, v string) string {
	t.Helper()
	var j struct {
		Join []json.RawMessage `json:"Fn::Join"`
	}
	if err := json.Unmarshal([]byte(v), &j); err != nil || len(j.Join) != 2 {
		var s string
		if json.Unmarshal([]byte(v), &s) == nil {
			return s
		}
		return v
	}
	var parts []any
	if err := json.Unmarshal(j.Join[1], &parts); err != nil {
		t.Fatalf("%s: %v", v, err)
	}
	var b strings.Builder
	for _, p := range parts {
		switch x := p.(type) {
		case string:
			b.WriteString(x)
		case map[string]any:
			fmt.Fprintf(&b, "${%v}", x["Ref"])
		}
	}
	return b.String()
}

// TestModelProblem holds the preflight's model check: an id is refused only where Bedrock would
// refuse it, and the refusal names the id to use in that Region.
func TestModelProblem(t *testing.T) {
	const haiku = "anthropic.claude-haiku-4-5-20251001-v1:0"
	tests := []struct {
		id, region string
		problem    string // a part of the problem; "" for none
		use        string
	}{
		{"us." + haiku, "us-east-1", "", ""},
		{"us." + haiku, "us-west-2", "", ""},
		{"eu." + haiku, "eu-west-1", "", ""},
		{"global." + haiku, "eu-west-1", "", ""},
		{"jp." + haiku, "ap-northeast-1", "", ""},
		{"apac." + haiku, "ap-northeast-1", "", ""},
		{haiku, "us-east-1", "only through an inference profile", "us." + haiku},
		{haiku, "eu-west-1", "only through an inference profile", "eu." + haiku},
		{haiku, "ap-northeast-1", "only through an inference profile", "jp." + haiku},
		{haiku, "ap-southeast-2", "only through an inference profile", "au." + haiku},
		{haiku, "ap-south-1", "only through an inference profile", "apac." + haiku},
		{haiku, "sa-east-1", "only through an inference profile", "global." + haiku},
		{haiku, "us-gov-west-1", "only through an inference profile", ""},
		{"us." + haiku, "eu-west-1", "called from us-east-1, us-east-2, us-west-1, us-west-2, not from eu-west-1", "eu." + haiku},
		{"eu." + haiku, "us-east-1", "not from us-east-1", "us." + haiku},
		{"jp." + haiku, "ap-south-1", "not from ap-south-1", "apac." + haiku},
		{"ca." + haiku, "ca-central-1", "no ca. inference profile", "global." + haiku},
		{"us.anthropic.claude-3-5-haiku-20241022-v1:0", "us-east-1", "end of life on Bedrock on 2026-06-19", "us." + haiku},
		{"anthropic.claude-3-5-haiku-20241022-v1:0", "eu-west-1", "end of life", "eu." + haiku},
		{"anthropic.claude-3-haiku-20240307-v1:0", "us-east-1", "end of life on Bedrock on 2026-09-10", "us." + haiku},
		{"anthropic.claude-3-haiku-20240307-v1:0", "eu-central-2", "", ""},
		{"amazon.nova-micro-v1:0", "eu-west-1", "", ""},                      // not in the table: not checked
		{"us.amazon.nova-micro-v1:0", "eu-west-1", "not from eu-west-1", ""}, // the geography still is
	}
	for _, tt := range tests {
		t.Run(tt.id+"@"+tt.region, func(t *testing.T) {
			problem, use := ModelProblem(tt.id, tt.region)
			if (problem == "") != (tt.problem == "") || !strings.Contains(problem, tt.problem) || use != tt.use {
				t.Errorf("ModelProblem = %q, use %q; want a problem with %q, use %q", problem, use, tt.problem, tt.use)
			}
		})
	}
}
