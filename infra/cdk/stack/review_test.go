package stack

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/deploy"
)

// TestLogGroupsNeverCollide: a log group's name ends with the stack's id, so a group kept by the
// Retain policy (after cdk destroy, or a first deploy that rolled back) never makes the next
// deploy fail with "already exists".
func TestLogGroupsNeverCollide(t *testing.T) {
	s := defaultStack(t)
	groups := s.resources("AWS::Logs::LogGroup")
	if len(groups) == 0 {
		t.Fatal("no log groups")
	}
	for id, r := range groups {
		name, _ := json.Marshal(props(r)["LogGroupName"])
		if !strings.Contains(string(name), `"Ref":"AWS::StackId"`) {
			t.Errorf("log group %s is named %s: a fixed name collides with a retained group", id, name)
		}
	}
}

// TestAlarmTopicAcceptsCloudWatch: a topic policy replaces SNS's default, so it must let
// CloudWatch publish, or no alarm is ever delivered.
func TestAlarmTopicAcceptsCloudWatch(t *testing.T) {
	s := defaultStack(t)
	var allowed bool
	for _, p := range s.resources("AWS::SNS::TopicPolicy") {
		for _, st := range statements(props(p)["PolicyDocument"]) {
			if st.Effect == "Allow" && slices.Contains(st.Actions, "sns:Publish") && strings.Contains(st.Principal, "cloudwatch.amazonaws.com") {
				allowed = true
				if st.Condition["StringEquals"] == nil || st.Condition["ArnLike"] == nil {
					t.Errorf("CloudWatch may publish without a source condition: %v", st.Condition)
				}
			}
		}
	}
	if !allowed {
		t.Error("the alarm topic's policy does not let CloudWatch publish")
	}
}

// TestCORSPreflight: with CORS, a preflight OPTIONS request (which carries no token) reaches a
// route without the JWT authorizer instead of $default's 401.
func TestCORSPreflight(t *testing.T) {
	cors := synth(t, map[string]any{CtxCORSOrigins: "https://app.example.com"})
	check(t, "preflight route", func() {
		cors.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), map[string]any{"RouteKey": "OPTIONS /{proxy+}", "AuthorizationType": "NONE"})
	})
	check(t, "no preflight route without CORS", func() {
		defaultStack(t).tpl.ResourcePropertiesCountIs(jsii.String("AWS::ApiGatewayV2::Route"), map[string]any{"RouteKey": "OPTIONS /{proxy+}"}, jsii.Number(0))
	})
}

// TestSettleKeepsWhatFails: an event EventBridge cannot deliver, and one settle fails on after
// Lambda's retries, land in encrypted dead-letter queues with alarms on their depth.
func TestSettleKeepsWhatFails(t *testing.T) {
	s := defaultStack(t)
	settle := s.logicalID(t, s.s.Functions["settle"].Node().DefaultChild())
	queues := s.resources("AWS::SQS::Queue")
	if len(queues) != 2 {
		t.Fatalf("%d queues, want the rule's and settle's dead letters", len(queues))
	}
	for id, q := range queues {
		if props(q)["SqsManagedSseEnabled"] != true && props(q)["KmsMasterKeyId"] == nil {
			t.Errorf("queue %s is not encrypted", id)
		}
	}
	for _, r := range s.resources("AWS::Events::Rule") {
		if props(r)["ScheduleExpression"] != nil {
			continue // the sweep's schedule: a missed one is done by the next (TestSweepRule)
		}
		for _, tg := range props(r)["Targets"].([]any) {
			dlc, _ := tg.(map[string]any)["DeadLetterConfig"].(map[string]any)
			arn, _ := json.Marshal(dlc["Arn"])
			if !slices.ContainsFunc(mapsKeys(queues), func(id string) bool { return strings.Contains(string(arn), id) }) {
				t.Errorf("the settle rule's target has no dead-letter queue: %v", tg)
			}
		}
	}
	check(t, "on-failure destination", func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventInvokeConfig"), map[string]any{
			"FunctionName":         map[string]any{"Ref": settle},
			"MaximumRetryAttempts": 2,
			"DestinationConfig":    map[string]any{"OnFailure": map[string]any{"Destination": assertions.Match_AnyValue()}},
		})
	})
}

// TestSecretsKeyPolicy: the key policy names no role made in the same deploy as a principal (KMS
// may refuse it before IAM propagates the role), gives the account no way to grant itself use
// (kms:CreateGrant), and allows sealing and unsealing only under sinew's encryption context.
func TestSecretsKeyPolicy(t *testing.T) {
	s := defaultStack(t)
	uses := 0
	for _, st := range keyPolicy(t, s) {
		if strings.Contains(st.Principal, "Fn::GetAtt") {
			t.Errorf("%s names a role of the stack as principal: %s", st.Sid, st.Principal)
		}
		for _, a := range st.Actions {
			if a == "kms:CreateGrant" || a == "kms:Create*" || a == "kms:*" {
				t.Errorf("%s allows %s", st.Sid, a)
			}
			if a == "kms:Decrypt" || a == "kms:GenerateDataKey" || strings.HasPrefix(a, "kms:ReEncrypt") {
				uses++
				keys, _ := json.Marshal(st.Condition["ForAllValues:StringEquals"])
				if st.Condition["ArnEquals"] == nil || !strings.Contains(string(keys), "kms:EncryptionContextKeys") || st.Condition["Null"] == nil {
					t.Errorf("%s: %s without the principal and encryption context conditions: %v", st.Sid, a, st.Condition)
				}
			}
		}
	}
	if uses < 4 {
		t.Errorf("%d use grants in the key policy, want seal, unseal and both ReEncrypts", uses)
	}
}

// TestDefinitionsTakeThePartition: no definition keeps arn:aws:, which is wrong in aws-cn and
// aws-us-gov; the partition comes from AWS::Partition.
func TestDefinitionsTakeThePartition(t *testing.T) {
	s := defaultStack(t)
	for _, m := range deploy.StateMachines() {
		def, ok := definition(props(s.StateMachines(t, m.Name)))
		if !ok {
			t.Fatalf("%s: the definition is not a join of strings and AWS::Partition", m.Name)
		}
		if strings.Contains(def, "arn:aws:") || !strings.Contains(def, "arn:<partition>:states:::lambda:invoke") {
			t.Errorf("%s: the definition hard-codes the partition", m.Name)
		}
	}
}

// TestCognitoClientHasNoOAuth: the app client offers no implicit or code flow and no callback URL.
func TestCognitoClientHasNoOAuth(t *testing.T) {
	for _, c := range defaultStack(t).resources("AWS::Cognito::UserPoolClient") {
		p := props(c)
		if p["AllowedOAuthFlows"] != nil || p["CallbackURLs"] != nil || p["AllowedOAuthFlowsUserPoolClient"] == true {
			t.Errorf("the app client allows OAuth flows: %v %v %v", p["AllowedOAuthFlows"], p["CallbackURLs"], p["AllowedOAuthFlowsUserPoolClient"])
		}
	}
}

// TestRotationRoleTrust: only principals the operator tagged may assume the rotation role.
func TestRotationRoleTrust(t *testing.T) {
	s := defaultStack(t)
	id := s.logicalID(t, s.s.RotationRole.Node().DefaultChild())
	trust := statements(props(s.resources("AWS::IAM::Role")[id])["AssumeRolePolicyDocument"])
	for _, st := range trust {
		tag, _ := json.Marshal(st.Condition["StringEquals"])
		if !strings.Contains(string(tag), `"aws:PrincipalTag/`+RotationTag+`":"sinew"`) {
			t.Errorf("the rotation role trusts %s with condition %v", st.Principal, st.Condition)
		}
	}
}

func mapsKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
