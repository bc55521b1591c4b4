package stack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/deploy"
)

// TestFunctionsLogJSON: every function logs in Lambda's JSON format, at the stage's levels (prod leaves
// out Lambda's own per-invocation records).
func TestFunctionsLogJSON(t *testing.T) {
	for stage, level := range map[string][2]string{StageProd: {"INFO", "WARN"}, StageDev: {"DEBUG", "INFO"}} {
		s := synth(t, map[string]any{CtxStage: stage})
		check(t, stage, func() {
			s.tpl.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
				"LoggingConfig": map[string]any{"LogFormat": "JSON", "ApplicationLogLevel": level[0], "SystemLogLevel": level[1]}})
		})
	}
}

// TestStages: dev throws its data away with the stack and keeps logs a week; prod keeps both and
// has termination protection. The table's and the pool's own deletion protection is a setting, off
// by default so that a failed first create can roll back. An explicit setting wins over the
// stage's default.
func TestStages(t *testing.T) {
	dev := synth(t, map[string]any{CtxStage: StageDev})
	check(t, "dev", func() {
		dev.tpl.AllResources(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionPolicy": "Delete"})
		dev.tpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionProtectionEnabled": false})
		dev.tpl.AllResourcesProperties(jsii.String("AWS::Logs::LogGroup"), map[string]any{"RetentionInDays": DevLogRetentionDays})
		if isTrue(dev.s.Stack.TerminationProtection()) {
			t.Error("dev: termination protection on, want off")
		}
	})
	check(t, "prod", func() {
		p := defaultStack(t)
		p.tpl.AllResources(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionPolicy": "RetainExceptOnCreate"})
		p.tpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionProtectionEnabled": false})
		p.tpl.HasResourceProperties(jsii.String("AWS::Cognito::UserPool"), map[string]any{"DeletionProtection": "INACTIVE", "UserPoolTier": "LITE"})
		if !isTrue(p.s.Stack.TerminationProtection()) {
			t.Error("prod: termination protection off, want on")
		}
	})
	guarded := synth(t, map[string]any{CtxDeletionProtection: "true"})
	check(t, "prod with deletion protection", func() {
		guarded.tpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionProtectionEnabled": true})
		guarded.tpl.HasResourceProperties(jsii.String("AWS::Cognito::UserPool"), map[string]any{"DeletionProtection": "ACTIVE"})
	})
	kept := synth(t, map[string]any{CtxStage: StageDev, CtxRemovalPolicy: "retain", CtxLogRetentionDays: 90})
	check(t, "dev with explicit settings", func() {
		kept.tpl.AllResources(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionPolicy": "RetainExceptOnCreate"})
		kept.tpl.AllResourcesProperties(jsii.String("AWS::Logs::LogGroup"), map[string]any{"RetentionInDays": 90})
	})
}

// TestChatRouteThrottle: the chat route spends model tokens and has a lower throttle of its own.
func TestChatRouteThrottle(t *testing.T) {
	s := synth(t, map[string]any{CtxChatThrottleRate: 2, CtxChatThrottleBurst: 4})
	check(t, "route settings", func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
			"RouteSettings":        map[string]any{ChatRoute.Method + " " + ChatRoute.Path: map[string]any{"ThrottlingRateLimit": 2, "ThrottlingBurstLimit": 4}},
			"DefaultRouteSettings": map[string]any{"ThrottlingRateLimit": DefaultThrottleRate}})
	})
	check(t, "defaults", func() {
		defaultStack(t).tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
			"RouteSettings": map[string]any{ChatRoute.Method + " " + ChatRoute.Path: map[string]any{
				"ThrottlingRateLimit": DefaultChatThrottleRate, "ThrottlingBurstLimit": DefaultChatThrottleBurst}}})
	})
}

// TestCostAllocationTags: every taggable resource carries the application, stack and stage tags
// and the operator's own.
func TestCostAllocationTags(t *testing.T) {
	s := synth(t, map[string]any{CtxTags: "cost-center=ml-platform,team=agents"})
	want := map[string]string{"application": "sinew", "sinew:stack": "sinew", "sinew:stage": "prod", "cost-center": "ml-platform", "team": "agents"}
	for _, typ := range []string{"AWS::Lambda::Function", "AWS::DynamoDB::Table", "AWS::StepFunctions::StateMachine", "AWS::SQS::Queue", "AWS::KMS::Key"} {
		for id, r := range s.resources(typ) {
			raw, _ := json.Marshal(props(r)["Tags"])
			for k, v := range want {
				if !strings.Contains(string(raw), k) || !strings.Contains(string(raw), v) {
					t.Errorf("%s %s lacks tag %s=%s: %s", typ, id, k, v, raw)
				}
			}
		}
	}
}

// TestTaskResponderPolicy: the managed policy a client's role attaches allows SendTask* on sinew's
// state machines and nothing else, and is an output.
func TestTaskResponderPolicy(t *testing.T) {
	s := defaultStack(t)
	pols := s.resources("AWS::IAM::ManagedPolicy")
	if len(pols) != 1 {
		t.Fatalf("%d managed policies", len(pols))
	}
	for _, p := range pols {
		if props(p)["Roles"] != nil || props(p)["Users"] != nil {
			t.Error("the task responder policy is attached to something in the stack")
		}
		for _, st := range statements(props(p)["PolicyDocument"]) {
			if strings.Join(st.Actions, ",") != "states:SendTaskFailure,states:SendTaskHeartbeat,states:SendTaskSuccess" || len(st.Resources) != len(deploy.StateMachines()) {
				t.Errorf("task responder statement %+v", st)
			}
		}
	}
	check(t, "output", func() {
		s.tpl.HasOutput(jsii.String("TaskResponderPolicyArn"), map[string]any{"Value": map[string]any{"Ref": assertions.Match_AnyValue()}})
	})
}

// TestDashboard: one dashboard shows every alarm's state and the graphs of each part.
func TestDashboard(t *testing.T) {
	s := defaultStack(t)
	for _, d := range s.resources("AWS::CloudWatch::Dashboard") {
		body, _ := json.Marshal(props(d)["DashboardBody"])
		for _, w := range []string{"sinew alarms", "HTTP API", "Lambda: errors", "Step Functions", "DynamoDB", "Dead letters"} {
			if !strings.Contains(string(body), w) {
				t.Errorf("the dashboard lacks %q", w)
			}
		}
	}
}

// TestAlarmThresholds: the duration alarm sits at 90% of the timeout of each function whose runs
// are short by design.
func TestAlarmThresholds(t *testing.T) {
	s := defaultStack(t)
	for _, f := range deploy.Functions() {
		if _, long := LongByDesign[f.Name]; long {
			continue
		}
		check(t, f.Name, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
				"MetricName": "Duration", "Statistic": "Maximum", "Threshold": float64(f.Timeout.Milliseconds()) * DurationNearTimeout,
				"Dimensions": []any{map[string]any{"Name": "FunctionName", "Value": map[string]any{"Ref": s.logicalID(t, s.s.Functions[f.Name].Node().DefaultChild())}}}})
		})
	}
}

func isTrue(b *bool) bool { return b != nil && *b }
