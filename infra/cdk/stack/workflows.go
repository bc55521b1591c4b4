package stack

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/deploy"
)

// stateMachine makes one state machine from its definition, inline in the template (so cfn-lint
// and the tests see it), with the description's substitutions, logging of failures and tracing.
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
	// The definitions name AWS's service integrations as arn:aws:states:::...; the partition comes
	// from the stack instead (the definition becomes a join with AWS::Partition), so the same
	// definition runs in aws-cn and aws-us-gov.
	def = strings.ReplaceAll(def, `"arn:aws:`, `"arn:`+*awscdk.Aws_PARTITION()+`:`)
	// Only failures are logged. A Standard execution keeps its whole history for 90 days
	// (GetExecutionHistory, the console), so level ALL would only copy it into CloudWatch Logs, at
	// more than a function call's own DynamoDB writes; an Express execution keeps no history, and
	// every event of every call would cost more than the call itself.
	typ, level := awsstepfunctions.StateMachineType_STANDARD, awsstepfunctions.LogLevel_ERROR
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
			Level:       level,
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
	why := "A Standard workflow logs errors only: its execution history keeps every event for 90 days (GetExecutionHistory), " +
		"so level ALL would copy it into CloudWatch Logs at more than a function call's own DynamoDB writes; a failed " +
		"execution's events are logged, and every outcome is on sinew's own execution record."
	if m.Type == "EXPRESS" {
		why = "An Express workflow logs errors only: at level ALL every event of every tool call is ingested " +
			"into CloudWatch Logs, which would cost more than the call itself; a failed call's events are logged, and its outcome " +
			"is on sinew's own execution record."
	}
	nag(sm, "AwsSolutions-SF1", why)
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
	case deploy.TaskRoleARN:
		return s.TaskRole.RoleArn()
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
	// Julep tasks' machines, made at run time: their records settle as the others'.
	arns = append(arns, map[string]interface{}{"prefix": s.stateMachineARN(strings.TrimSuffix(deploy.TaskMachines, "*"))})
	fn := s.Functions[settle]
	rule := awsevents.NewRule(s.Stack, jsii.String("ExecutionStatusChange"), &awsevents.RuleProps{
		Description: jsii.String("sinew: ended executions of sinew's state machines, to " + settle),
		EventPattern: &awsevents.EventPattern{
			Source:     jsii.Strings("aws.states"),
			DetailType: jsii.Strings("Step Functions Execution Status Change"),
			Detail: &map[string]interface{}{
				"stateMachineArn": arns,
				"status":          []interface{}{"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"},
			},
		},
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn, &awseventstargets.LambdaFunctionProps{
			// EventBridge retries a delivery Lambda refuses (throttled, unavailable) for up to a
			// day, then puts the event in the dead-letter queue.
			MaxEventAge:     awscdk.Duration_Hours(jsii.Number(24)),
			RetryAttempts:   jsii.Number(185),
			DeadLetterQueue: s.deadLetters("SettleDeliveryDLQ", "events of ended executions EventBridge could not deliver to "+settle),
		})},
	})
	// Once Lambda accepts the asynchronous invoke, a function error is retried twice by Lambda and
	// then goes to this queue, so an outcome settle could not record is kept, not dropped.
	fn.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{
		RetryAttempts: jsii.Number(2),
		MaxEventAge:   awscdk.Duration_Hours(jsii.Number(6)),
		OnFailure:     awslambdadestinations.NewSqsDestination(s.deadLetters("SettleFailedDLQ", "events "+settle+" failed on after Lambda's retries")),
	})
	s.settleRule = rule
}

// sweepOnSchedule sends the function deploy.TriggerSweep triggers a "Scheduled Event" every
// deploy.SweepPeriod: the sweep settles, from Step Functions, the open records whose status change
// never arrived (an event EventBridge dead-lettered, a settle that failed past its retries). A
// missed sweep costs one period and the next one does its work, so a delivery is not retried past
// the period and lands in no queue.
func (s *Sinew) sweepOnSchedule() {
	var fn string
	for _, f := range deploy.Functions() {
		if slices.Contains(f.Triggers, deploy.TriggerSweep) {
			fn = f.Name
		}
	}
	if fn == "" {
		return
	}
	awsevents.NewRule(s.Stack, jsii.String("SweepOpenRecords"), &awsevents.RuleProps{
		Description: jsii.String(fmt.Sprintf("sinew: every %v, %s settles the records whose execution ended without its status change reaching it", deploy.SweepPeriod, fn)),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(deploy.SweepPeriod.Minutes()))),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(s.Functions[fn], &awseventstargets.LambdaFunctionProps{
			MaxEventAge:   awscdk.Duration_Minutes(jsii.Number(deploy.SweepPeriod.Minutes())),
			RetryAttempts: jsii.Number(2),
		})},
	})
}
