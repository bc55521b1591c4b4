package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/deploy"
)

// stateMachine makes one state machine from its definition, inline in the template (so cfn-lint
// and the tests see it), with the description's substitutions, logging of all events and tracing.
func (s *Sinew) stateMachine(m deploy.StateMachine, def string) {
	id := logicalID(m.Name)
	subs := map[string]*string{}
	var invoked []*string
	for _, sub := range m.Substitutions {
		v := s.substitution(sub.Value)
		subs[sub.Placeholder] = v
		if sub.Value.Kind == deploy.FunctionARN {
			invoked = append(invoked, v)
		}
	}
	typ := awsstepfunctions.StateMachineType_STANDARD
	if m.Type == "EXPRESS" {
		typ = awsstepfunctions.StateMachineType_EXPRESS
	}
	sm := awsstepfunctions.NewStateMachine(s.Stack, jsii.String(id), &awsstepfunctions.StateMachineProps{
		StateMachineName:        jsii.String(s.physical(m.Name)),
		StateMachineType:        typ,
		Comment:                 jsii.String(m.Purpose),
		DefinitionBody:          awsstepfunctions.DefinitionBody_FromString(jsii.String(def)),
		DefinitionSubstitutions: &subs,
		TracingEnabled:          jsii.Bool(true),
		Logs: &awsstepfunctions.LogOptions{
			Destination: s.logs(id+"Logs", "/aws/vendedlogs/states/"+s.physical(m.Name)),
			Level:       awsstepfunctions.LogLevel_ALL,
			// Events without their data: inputs and outputs carry the callers' arguments and results,
			// which the execution history already keeps for its owner.
			IncludeExecutionData: jsii.Bool(false),
		},
	})
	if len(invoked) > 0 {
		sm.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("InvokeItsFunctions"),
			Actions:   jsii.Strings("lambda:InvokeFunction"),
			Resources: &invoked,
		}))
	}
	s.StateMachines[m.Name] = sm
	nagOn(sm, "AwsSolutions-IAM5",
		"CloudWatch Logs' log delivery actions (logs:CreateLogDelivery, ...) and X-Ray's PutTraceSegments/PutTelemetryRecords/GetSamplingRules/GetSamplingTargets accept only Resource '*'; the CDK adds them for the state machine's logging and tracing.",
		"Resource::*")
}

// substitution is the value of a definition placeholder.
func (s *Sinew) substitution(v deploy.Value) *string {
	switch v.Kind {
	case deploy.FunctionARN:
		// By reference, so the state machine is made after the functions it calls.
		return s.Functions[v.Target].FunctionArn()
	case deploy.FunctionName:
		return s.Functions[v.Target].FunctionName()
	case deploy.TableName:
		return s.Table.TableName()
	case deploy.StateMachineARN:
		return s.stateMachineARN(v.Target)
	case deploy.SecretsKeyID:
		return s.SecretsKey.KeyArn()
	case deploy.EventBusName:
		return s.EventBus.EventBusName()
	}
	panic(fmt.Sprintf("stack: substitution value kind %q unknown to the stack", v.Kind))
}

// settleOnStatusChange sends the state machines' "Execution Status Change" events of ended
// executions to the settle function (workflow.SettleEvent): those that ended without reaching their last
// state (failed, timed out, stopped) need it; a SUCCEEDED one is included because settle records an
// execution its last state did not (it keeps one that was), at one small invocation per execution.
func (s *Sinew) settleOnStatusChange() {
	var settle string
	for _, f := range deploy.Functions() {
		for _, t := range f.Triggers {
			if t == deploy.TriggerExecutionChanged {
				settle = f.Name
			}
		}
	}
	var arns []interface{}
	for _, m := range deploy.StateMachines() {
		arns = append(arns, s.StateMachines[m.Name].StateMachineArn())
	}
	awsevents.NewRule(s.Stack, jsii.String("ExecutionStatusChange"), &awsevents.RuleProps{
		Description: jsii.String("sinew: ended executions of sinew's state machines, to " + settle),
		EventPattern: &awsevents.EventPattern{
			Source:     jsii.Strings("aws.states"),
			DetailType: jsii.Strings("Step Functions Execution Status Change"),
			Detail: &map[string]interface{}{
				"stateMachineArn": arns,
				"status":          []interface{}{"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"},
			},
		},
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(s.Functions[settle], &awseventstargets.LambdaFunctionProps{
			// EventBridge retries a failed asynchronous delivery for up to a day.
			MaxEventAge:   awscdk.Duration_Hours(jsii.Number(24)),
			RetryAttempts: jsii.Number(185),
		})},
	})
}

// alarms makes the alarm topic and an alarm on each state machine's failed and timed-out
// executions and each function's errors and throttles.
func (s *Sinew) alarms() {
	topic := awssns.NewTopic(s.Stack, jsii.String("Alarms"), &awssns.TopicProps{
		DisplayName: jsii.String("sinew alarms"),
		EnforceSSL:  jsii.Bool(true),
	})
	nag(topic, "AwsSolutions-SNS2", "The topic carries only CloudWatch alarm notifications (alarm names and states, no data); CloudWatch cannot publish to a topic under the AWS-managed SNS key, and a key of its own would cost more than the notifications are worth.")
	if s.settings.AlarmEmail != "" {
		awssns.NewSubscription(s.Stack, jsii.String("AlarmEmail"), &awssns.SubscriptionProps{
			Topic: topic, Protocol: awssns.SubscriptionProtocol_EMAIL, Endpoint: jsii.String(s.settings.AlarmEmail),
		})
	}
	action := awscloudwatchactions.NewSnsAction(topic)
	alarm := func(id, what string, metric awscloudwatch.Metric) {
		a := awscloudwatch.NewAlarm(s.Stack, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("sinew: " + what),
			Metric:             metric,
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		a.AddAlarmAction(action)
	}
	five := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum")}
	for _, m := range deploy.StateMachines() {
		sm, id := s.StateMachines[m.Name], logicalID(m.Name)
		// A tool's own failure ends its execution SUCCEEDED with the error result, so a failed
		// execution is a fault of the workflow itself.
		alarm(id+"FailedAlarm", m.Name+" executions failed", sm.MetricFailed(five))
		alarm(id+"TimedOutAlarm", m.Name+" executions timed out", sm.MetricTimedOut(five))
	}
	for _, f := range deploy.Functions() {
		fn, id := s.Functions[f.Name], logicalID(f.Name)
		alarm(id+"ErrorsAlarm", f.Name+" function errors", fn.MetricErrors(five))
		alarm(id+"ThrottlesAlarm", f.Name+" function throttles", fn.MetricThrottles(five))
	}
	awscdk.NewCfnOutput(s.Stack, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{
		Value: topic.TopicArn(), Description: jsii.String("the SNS topic of sinew's alarms"),
	})
}
