package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/deploy"
)

// Alarm thresholds besides "any at all".
const (
	// API5xxThreshold is the 5xx answers in five minutes that page: one can be a client racing a
	// deploy, five are a fault.
	API5xxThreshold = 5
	// APILatencyP99Ms is the p99 latency that pages when it lasts 15 minutes. The chat route may
	// take most of API Gateway's 30 s by design; everything else answers in well under a second.
	APILatencyP99Ms = 10000
	// DurationNearTimeout is the fraction of its timeout a function's longest run may reach.
	DurationNearTimeout = 0.9
)

// deadLetters makes an encrypted queue that keeps what would otherwise be dropped (14 days, SQS's
// longest), and an alarm on its depth.
func (s *Sinew) deadLetters(id, what string) awssqs.Queue {
	q := awssqs.NewQueue(s.Stack, jsii.String(id), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	nag(q, "AwsSolutions-SQS3", "This queue is itself a dead-letter queue ("+what+"); an operator reads and redrives it by hand.")
	s.dlqs = append(s.dlqs, namedQueue{id: id, what: what, q: q})
	return q
}

type namedQueue struct {
	id, what string
	q        awssqs.Queue
}

// alarms makes the alarm topic, the alarms of every part and the dashboard that shows them.
func (s *Sinew) alarms(api builtAPI) {
	topic := awssns.NewTopic(s.Stack, jsii.String("Alarms"), &awssns.TopicProps{
		DisplayName: jsii.String("sinew alarms"),
		EnforceSSL:  jsii.Bool(true),
	})
	// A topic policy replaces SNS's default one, so CloudWatch must be allowed to publish, and only
	// for this account's alarms.
	topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarmsPublish"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  &[]*string{topic.TopicArn()},
		Conditions: &map[string]any{
			"StringEquals": map[string]any{"aws:SourceAccount": awscdk.Aws_ACCOUNT_ID()},
			"ArnLike": map[string]any{"aws:SourceArn": s.Stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("cloudwatch"),
				Resource: jsii.String("alarm"), ResourceName: jsii.String("*"), ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME})},
		},
	}))
	nag(topic, "AwsSolutions-SNS2", "The topic carries only CloudWatch alarm notifications (alarm names and states, no data); CloudWatch cannot publish to a topic under the AWS-managed SNS key, and a key of its own would cost more than the notifications are worth.")
	if s.settings.AlarmEmail != "" {
		awssns.NewSubscription(s.Stack, jsii.String("AlarmEmail"), &awssns.SubscriptionProps{
			Topic: topic, Protocol: awssns.SubscriptionProtocol_EMAIL, Endpoint: jsii.String(s.settings.AlarmEmail),
		})
	}
	m := &monitor{s: s, action: awscloudwatchactions.NewSnsAction(topic)}
	m.apiAlarms(api)
	m.workflowAlarms()
	m.functionAlarms()
	m.tableAlarms()
	m.deadLetterAlarms()
	m.dashboard()
	awscdk.NewCfnOutput(s.Stack, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{
		Value: topic.TopicArn(), Description: jsii.String("the SNS topic of sinew's alarms"),
	})
}

// monitor gathers the alarms and the dashboard's graphs as they are made.
type monitor struct {
	s      *Sinew
	action awscloudwatch.IAlarmAction
	alarms []interfacesawscloudwatch.IAlarmRef
	graphs []awscloudwatch.IWidget
}

var fiveMinutes = awscdk.Duration_Minutes(jsii.Number(5))

func sum() *awscloudwatch.MetricOptions {
	return &awscloudwatch.MetricOptions{Period: fiveMinutes, Statistic: jsii.String("Sum")}
}

// alarm pages when metric reaches threshold in periods consecutive five-minute periods.
func (m *monitor) alarm(id, what string, metric awscloudwatch.IMetric, threshold float64, periods int) {
	a := awscloudwatch.NewAlarm(m.s.Stack, jsii.String(id), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String("sinew: " + what),
		Metric:             metric,
		Threshold:          jsii.Number(threshold),
		EvaluationPeriods:  jsii.Number(periods),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	a.AddAlarmAction(m.action)
	m.alarms = append(m.alarms, a)
}

func (m *monitor) graph(title string, metrics ...awscloudwatch.IMetric) {
	m.graphs = append(m.graphs, awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
		Title: jsii.String(title), Left: &metrics, Width: jsii.Number(8), Height: jsii.Number(6),
	}))
}

func (m *monitor) apiAlarms(api builtAPI) {
	errs := api.api.MetricServerError(sum())
	p99 := api.api.MetricLatency(&awscloudwatch.MetricOptions{Period: fiveMinutes, Statistic: jsii.String("p99")})
	m.alarm("Api5xxAlarm", fmt.Sprintf("at least %d 5xx answers of the HTTP API in 5 minutes", API5xxThreshold), errs, API5xxThreshold, 1)
	m.alarm("ApiLatencyAlarm", fmt.Sprintf("the HTTP API's p99 latency at least %d ms for 15 minutes", APILatencyP99Ms), p99, APILatencyP99Ms, 3)
	m.graph("HTTP API: 4xx and 5xx", api.api.MetricClientError(sum()), errs)
	m.graph("HTTP API: p99 latency (ms)", p99)
}

func (m *monitor) workflowAlarms() {
	var failed, other []awscloudwatch.IMetric
	for _, d := range deploy.StateMachines() {
		sm, id := m.s.StateMachines[d.Name], logicalID(d.Name)
		// A tool's own failure ends its execution SUCCEEDED with the error result, so a failed
		// execution is a fault of the workflow itself.
		f, t, a, th := sm.MetricFailed(sum()), sm.MetricTimedOut(sum()), sm.MetricAborted(sum()), sm.MetricThrottled(sum())
		m.alarm(id+"FailedAlarm", d.Name+" executions failed", f, 1, 1)
		m.alarm(id+"TimedOutAlarm", d.Name+" executions timed out", t, 1, 1)
		m.alarm(id+"AbortedAlarm", d.Name+" executions aborted", a, 1, 1)
		m.alarm(id+"ThrottledAlarm", d.Name+" executions throttled", th, 1, 1)
		failed = append(failed, f, t)
		other = append(other, a, th)
	}
	m.graph("Step Functions: failed and timed out", failed...)
	m.graph("Step Functions: aborted and throttled", other...)
}

func (m *monitor) functionAlarms() {
	var errs, throttles, durations []awscloudwatch.IMetric
	for _, f := range deploy.Functions() {
		fn, id := m.s.Functions[f.Name], logicalID(f.Name)
		e, t := fn.MetricErrors(sum()), fn.MetricThrottles(sum())
		d := fn.MetricDuration(&awscloudwatch.MetricOptions{Period: fiveMinutes, Statistic: jsii.String("Maximum")})
		m.alarm(id+"ErrorsAlarm", f.Name+" function errors", e, 1, 1)
		m.alarm(id+"ThrottlesAlarm", f.Name+" function throttles", t, 1, 1)
		m.alarm(id+"DurationAlarm", fmt.Sprintf("%s function ran %.0f%% of its %v timeout", f.Name, DurationNearTimeout*100, f.Timeout),
			d, float64(f.Timeout.Milliseconds())*DurationNearTimeout, 1)
		errs, throttles, durations = append(errs, e), append(throttles, t), append(durations, d)
	}
	m.graph("Lambda: errors", errs...)
	m.graph("Lambda: throttles", throttles...)
	m.graph("Lambda: longest run (ms)", durations...)
}

// tableOps are the DynamoDB operations sinew's functions use, for the per-operation metrics.
var tableOps = []awsdynamodb.Operation{awsdynamodb.Operation_GET_ITEM, awsdynamodb.Operation_BATCH_GET_ITEM, awsdynamodb.Operation_QUERY,
	awsdynamodb.Operation_PUT_ITEM, awsdynamodb.Operation_UPDATE_ITEM, awsdynamodb.Operation_DELETE_ITEM,
	awsdynamodb.Operation_BATCH_WRITE_ITEM, awsdynamodb.Operation_TRANSACT_WRITE_ITEMS}

func (m *monitor) tableAlarms() {
	throttled := m.s.Table.MetricThrottledRequestsForOperations(&awsdynamodb.OperationsMetricOptions{Operations: &tableOps, Period: fiveMinutes})
	sysErrs := m.s.Table.MetricSystemErrorsForOperations(&awsdynamodb.SystemErrorsForOperationsMetricOptions{Operations: &tableOps, Period: fiveMinutes})
	m.alarm("TableThrottlesAlarm", "DynamoDB throttled requests on the table", throttled, 1, 1)
	m.alarm("TableSystemErrorsAlarm", "DynamoDB system errors on the table", sysErrs, 1, 1)
	// Two graphs: the two sums name their per-operation metrics alike.
	m.graph("DynamoDB: throttled requests", throttled)
	m.graph("DynamoDB: system errors", sysErrs)
}

func (m *monitor) deadLetterAlarms() {
	var depth []awscloudwatch.IMetric
	for _, d := range m.s.dlqs {
		v := d.q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: fiveMinutes, Statistic: jsii.String("Maximum")})
		m.alarm(d.id+"DepthAlarm", "messages in the dead-letter queue of "+d.what, v, 1, 1)
		depth = append(depth, v)
	}
	failed := awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String("AWS/Events"), MetricName: jsii.String("FailedInvocations"),
		DimensionsMap: &map[string]*string{"RuleName": m.s.settleRule.RuleName()}, Period: fiveMinutes, Statistic: jsii.String("Sum")})
	m.alarm("SettleRuleFailedInvocationsAlarm", "EventBridge failed to deliver an Execution Status Change event to settle", failed, 1, 1)
	m.graph("Dead letters and failed deliveries", append(depth, failed)...)
}

// dashboard is one CloudWatch dashboard: the state of every alarm, then the graphs.
func (m *monitor) dashboard() {
	status := awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
		Title: jsii.String("sinew alarms"), Alarms: &m.alarms, Width: jsii.Number(24), Height: jsii.Number(6),
	})
	widgets := append([]awscloudwatch.IWidget{status}, m.graphs...)
	awscloudwatch.NewDashboard(m.s.Stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String(m.s.physical("operations")),
		Widgets:       &[]*[]awscloudwatch.IWidget{&widgets},
	})
}
