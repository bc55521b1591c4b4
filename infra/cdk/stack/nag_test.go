package stack

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// TestNagClean checks cdk-nag's AwsSolutions pack finds nothing unacknowledged in the stack, with
// the default settings and with every optional part switched on.
func TestNagClean(t *testing.T) {
	cases := map[string]map[string]any{
		"defaults": {},
		"everything": {CtxOIDCIssuer: "https://login.example.com/", CtxOIDCAudience: "sinew", CtxCORSOrigins: "https://app.example.com",
			CtxAlarmEmail: "ops@example.com", CtxEventBusName: "default", CtxBedrockModels: "eu.anthropic.claude-haiku-4-5-20251001-v1:0,global.anthropic.claude-haiku-4-5-20251001-v1:0",
			"SINEW_OPENAI_BASE_URL": "https://llm.example.com/v1", CtxFFmpegLayerARN: "arn:aws:lambda:us-east-1:123456789012:layer:ffmpeg:3"},
	}
	for name, ctx := range cases {
		t.Run(name, func(t *testing.T) {
			ann := assertions.Annotations_FromStack(synthWith(t, ctx, true).stack)
			rule := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
			for _, m := range *ann.FindError(jsii.String("*"), rule) {
				t.Errorf("cdk-nag error at %s: %v", *m.Id, m.Entry.Data)
			}
			for _, m := range *ann.FindWarning(jsii.String("*"), rule) {
				t.Errorf("cdk-nag warning at %s: %v", *m.Id, m.Entry.Data)
			}
		})
	}
}

// TestNagFindsUnacknowledged checks the check itself: a wildcard nobody acknowledged is reported.
func TestNagFindsUnacknowledged(t *testing.T) {
	s := synthWith(t, map[string]any{}, true)
	s.s.Policies["prepare"].AddStatements(awsiamStatement("dynamodb:Scan", "*"))
	ann := assertions.Annotations_FromStack(s.stack)
	found := ann.FindError(jsii.String("/sinew/PreparePermissions/Resource"), assertions.Match_StringLikeRegexp(jsii.String(`AwsSolutions-IAM5\[Resource::\*\]`)))
	if len(*found) != 1 {
		t.Errorf("cdk-nag reported %d unacknowledged Resource::* findings on prepare's permissions, want 1", len(*found))
	}
}
