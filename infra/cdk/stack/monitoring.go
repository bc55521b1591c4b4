package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
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
	// APILatencyP99Ms is the p99 latency of the $default route that pages when it lasts 15
	// minutes. That route takes every request but chat's and MCP's, whose waits are by design and
	// have routes of their own; its answers take well under a second.
	APILatencyP99Ms = 5000
	// DurationNearTimeout is the fraction of its timeout a function's longest run may reach.
	DurationNearTimeout = 0.9
)

// LongByDesign are the functions whose ordinary runs reach their timeout: a duration alarm on them
// would page on callers' legitimate waits. API Gateway's 5xx (a cut-off request) and the $default
// route's latency watch the HTTP ones.
var LongByDesign = map[string]string{
	"apicall":     "an api_call waits for its target up to its own timeout, at most 600 s",
	"integration": "a provider runs up to its own time bound (an MCP tool's up to 280 s, of the function's 300 s)",
	"api":         "an MCP tools/call waits for its execution up to SINEW_MCP_WAIT_S, which may be set up to 29 s",
	"chat":        "a chat runs up to SINEW_CHAT_BUDGET_S, which may be set up to 29 s, before agent_loop takes over",
}

// Every function's Lambda errors page: a tool's own failure (a provider's refusal, a bad argument, a
// target's timeout) is the call's error result on every path, and a caller's mistake (an unknown
// tool) is prepare's answer, so an invocation fails only on a fault. Tools' failures are counted by
// the executors' ToolErrors metric instead (CloudWatch Embedded Metric Format in their log lines,
// internal/executor/metrics.go), graphed and not alarmed: its rate follows what callers ask of
// their tools, which an operator cannot act on.
const (
	toolErrorsNamespace = "sinew"
	toolErrorsMetric    = "ToolErrors"
	toolTypeDimension   = "ToolType"
	functionDimension   = "FunctionName"
)

// toolTypeOf is the tool type each executor function runs, as the ToolErrors metric names it.
var toolTypeOf = map[string]string{"integration": "integration", "apicall": "api_call", "system": "system"}

// Log lines that are failures nothing else reports, and the metrics their filters make.
const (
	// PendingPublishFailed is what internal/workflow logs when ToolCallPending could not be put on
	// the bus: the call is recorded and waits, so the function does not fail.
	PendingPublishFailed = "publishing ToolCallPending failed"
	pendingPublishMetric = "ToolCallPendingPublishFailures"
	defaultRouteLatency  = "ApiDefaultRouteLatency"
	defaultRouteKey      = "$default"
)

// deadLetters makes an encrypted queue that keeps what would otherwise be dropped (14 days, SQS's
// longest), and an alarm on its depth.
func (s *Sinew) deadLetters(id, what string) awssqs.Queue {
	q := awssqs.NewQueue(s.Stack, jsii.String(id), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		// What it holds is the only record of an outcome not yet settled: kept with the data.
		RemovalPolicy: s.removal(),
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

// apiAlarms page on the API's 5xx answers and on the latency of its $default route, taken from the
// access logs: API Gateway's own latency is per stage (chat's and MCP's waits in it), and per route
// only with detailed metrics, whose dimension names AWS documents two ways (Route; Method and
// Resource), while the access log's routeKey is the stack's own format.
func (m *monitor) apiAlarms(api builtAPI) {
	errs := api.api.MetricServerError(sum())
	latency := awslogs.NewMetricFilter(m.s.Stack, jsii.String("ApiDefaultRouteLatencyFilter"), &awslogs.MetricFilterProps{
		LogGroup: api.accessLogs,
		FilterPattern: awslogs.FilterPattern_All(awslogs.FilterPattern_StringValue(jsii.String("$.routeKey"), jsii.String("="), jsii.String(defaultRouteKey)),
			awslogs.FilterPattern_NumberValue(jsii.String("$.latencyMs"), jsii.String(">="), jsii.Number(0))),
		MetricNamespace: m.s.metricNamespace(), MetricName: jsii.String(defaultRouteLatency),
		MetricValue: jsii.String("$.latencyMs"), Unit: awscloudwatch.Unit_MILLISECONDS,
	})
	p99 := latency.Metric(&awscloudwatch.MetricOptions{Period: fiveMinutes, Statistic: jsii.String("p99")})
	m.alarm("Api5xxAlarm", fmt.Sprintf("at least %d 5xx answers of the HTTP API in 5 minutes", API5xxThreshold), errs, API5xxThreshold, 1)
	m.alarm("ApiDefaultRouteLatencyAlarm", fmt.Sprintf("the $default route's p99 latency (every route but chat and MCP) at least %d ms for 15 minutes", APILatencyP99Ms),
		p99, APILatencyP99Ms, 3)
	m.graph("HTTP API: 4xx and 5xx", api.api.MetricClientError(sum()), errs)
	m.graph("HTTP API: p99 latency (ms), all routes and $default", api.api.MetricLatency(&awscloudwatch.MetricOptions{Period: fiveMinutes, Statistic: jsii.String("p99")}), p99)
}

// metricNamespace holds the metrics of the stack's log filters; the stack's name keeps two stacks
// of one account and Region apart.
func (s *Sinew) metricNamespace() *string { return jsii.String("sinew/" + s.name) }

// workflowAlarms page on executions that failed, timed out or were throttled. Aborted ones are
// graphed only: an abort is a caller's cancel (PUT /executions/{id} with status cancelled stops the
// execution), not a fault.
func (m *monitor) workflowAlarms() {
	var failed, other []awscloudwatch.IMetric
	for _, d := range deploy.StateMachines() {
		sm, id := m.s.StateMachines[d.Name], logicalID(d.Name)
		// A tool's own failure ends its execution SUCCEEDED with the error result, so a failed
		// execution is a fault of the workflow itself.
		f, t, a, th := sm.MetricFailed(sum()), sm.MetricTimedOut(sum()), sm.MetricAborted(sum()), sm.MetricThrottled(sum())
		m.alarm(id+"FailedAlarm", d.Name+" executions failed", f, 1, 1)
		m.alarm(id+"TimedOutAlarm", d.Name+" executions timed out", t, 1, 1)
		m.alarm(id+"ThrottledAlarm", d.Name+" executions throttled", th, 1, 1)
		failed = append(failed, f, t)
		other = append(other, a, th)
	}
	m.graph("Step Functions: failed and timed out", failed...)
	m.graph("Step Functions: aborted and throttled", other...)
}

// functionAlarms page on every function's errors and throttles and on runs near the timeout where
// runs are short by design (not LongByDesign); the dashboard graphs all three for every function,
// and the executors' ToolErrors.
func (m *monitor) functionAlarms() {
	var errs, throttles, durations, tools []awscloudwatch.IMetric
	for _, f := range deploy.Functions() {
		fn, id := m.s.Functions[f.Name], logicalID(f.Name)
		e, t := fn.MetricErrors(sum()), fn.MetricThrottles(sum())
		d := fn.MetricDuration(&awscloudwatch.MetricOptions{Period: fiveMinutes, Statistic: jsii.String("Maximum")})
		m.alarm(id+"ErrorsAlarm", f.Name+" function errors", e, 1, 1)
		m.alarm(id+"ThrottlesAlarm", f.Name+" function throttles", t, 1, 1)
		if _, long := LongByDesign[f.Name]; !long {
			m.alarm(id+"DurationAlarm", fmt.Sprintf("%s function ran %.0f%% of its %v timeout", f.Name, DurationNearTimeout*100, f.Timeout),
				d, float64(f.Timeout.Milliseconds())*DurationNearTimeout, 1)
		}
		errs, throttles, durations = append(errs, e), append(throttles, t), append(durations, d)
		if typ, ok := toolTypeOf[f.Name]; ok {
			// This stack's own: the function's name holds the stack's.
			tools = append(tools, awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(toolErrorsNamespace),
				MetricName: jsii.String(toolErrorsMetric), Label: jsii.String(typ), Period: fiveMinutes, Statistic: jsii.String("Sum"),
				DimensionsMap: &map[string]*string{toolTypeDimension: jsii.String(typ), functionDimension: fn.FunctionName()}}))
		}
	}
	m.graph("Lambda: errors", errs...)
	m.graph("Lambda: throttles", throttles...)
	m.graph("Lambda: longest run (ms)", durations...)
	m.graph("Tools: their own failures (ToolErrors, not alarmed)", tools...)
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

// deadLetterAlarms page on what did not reach its destination: a dead letter kept, an event
// EventBridge or Lambda could deliver neither to settle nor to its dead-letter queue, and a
// ToolCallPending that was never published.
func (m *monitor) deadLetterAlarms() {
	var depth []awscloudwatch.IMetric
	for _, d := range m.s.dlqs {
		v := d.q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: fiveMinutes, Statistic: jsii.String("Maximum")})
		m.alarm(d.id+"DepthAlarm", "messages in the dead-letter queue of "+d.what, v, 1, 1)
		depth = append(depth, v)
	}
	rule := func(metric string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String("AWS/Events"), MetricName: jsii.String(metric),
			DimensionsMap: &map[string]*string{"RuleName": m.s.settleRule.RuleName()}, Period: fiveMinutes, Statistic: jsii.String("Sum")})
	}
	failed, lost := rule("FailedInvocations"), rule("InvocationsFailedToBeSentToDlq")
	m.alarm("SettleRuleFailedInvocationsAlarm", "EventBridge failed to deliver an Execution Status Change event to settle", failed, 1, 1)
	m.alarm("SettleRuleDeadLetterFailuresAlarm", "EventBridge could deliver an Execution Status Change event neither to settle nor to its dead-letter queue: the event is lost", lost, 1, 1)
	// settle's on-failure destination is its last record of an outcome it could not settle.
	undelivered := m.s.Functions["settle"].Metric(jsii.String("DestinationDeliveryFailures"), sum())
	m.alarm("SettleDestinationDeliveryFailuresAlarm", "Lambda could not put an event settle failed on into its dead-letter queue: the event is lost", undelivered, 1, 1)
	pending := awslogs.NewMetricFilter(m.s.Stack, jsii.String("ToolCallPendingPublishFilter"), &awslogs.MetricFilterProps{
		LogGroup:        m.s.Functions["function"].LogGroup(),
		FilterPattern:   awslogs.FilterPattern_StringValue(jsii.String("$.msg"), jsii.String("="), jsii.String(PendingPublishFailed)),
		MetricNamespace: m.s.metricNamespace(), MetricName: jsii.String(pendingPublishMetric), MetricValue: jsii.String("1"),
	}).Metric(sum())
	m.alarm("ToolCallPendingPublishAlarm", "ToolCallPending could not be published: the call waits, but only GET /calls shows it", pending, 1, 1)
	m.graph("Dead letters and failed deliveries", append(depth, failed, lost, undelivered, pending)...)
}

// dashboard is one CloudWatch dashboard: the state of every alarm, then the graphs.
func (m *monitor) dashboard() {
	status := awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
		Title: jsii.String("sinew alarms"), Alarms: &m.alarms, Width: jsii.Number(24), Height: jsii.Number(6),
	})
	widgets := append([]awscloudwatch.IWidget{status}, m.graphs...)
	// No fixed name: dashboard names are global to the account, so two stacks of one name in two
	// Regions would collide; the output gives the name CloudFormation chose.
	d := awscloudwatch.NewDashboard(m.s.Stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		Widgets: &[]*[]awscloudwatch.IWidget{&widgets},
	})
	awscdk.NewCfnOutput(m.s.Stack, jsii.String("DashboardName"), &awscdk.CfnOutputProps{
		Value: d.DashboardName(), Description: jsii.String("the CloudWatch dashboard of sinew's alarms and graphs"),
	})
}
