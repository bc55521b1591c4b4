package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// costNotes says which inputs of the cost were measured in this run and which are assumed, and
// from what.
func costNotes(r *report, f stackFacts) {
	src := "the stack's synthesized template (" + f.source + ")"
	if !f.fromTemplate {
		src = "infra/cdk as it was when this model was written, and internal/deploy for memory; **the template was not read: " + f.source + "**"
	}
	r.printf("cost", "Measured in this run, by `TestRequestBudget` with SINEW_COST_INPUTS set (each call written to a file the model reads):\n\n"+
		"- State transitions (Task and Choice states entered; `statemachines/tool_call.asl.json` has no other states on these paths) "+
		"and history events: the engine's history of each call. Through `POST /tool-calls` a call enters Dispatch alone; a bare start "+
		"enters Dispatch too, whose Prepare hands a server-side call to its executor (a function tool goes on to Prepare and Function: 3).\n"+
		"- DynamoDB requests and request units, as DynamoDB reports them (below).\n"+
		"- Every Lambda invocation and its time: the handler's run in process, from its start to its return (the api function's as "+
		"the HTTP round trip of its request, the executors' including their answer to the task token); billed rounded up to the "+
		"millisecond at the function's configured memory. The times are this machine's, shared with other work, with DynamoDB Local "+
		"on loopback: in AWS the DynamoDB round trips take what they take there and a function below 1,769 MB gets less than one "+
		"vCPU; they are not scaled. Cold starts (Lambda bills a custom runtime's init) are left out.\n"+
		"- What the functions log: every record of their `slog` JSON handler at INFO, as `functions/*/main.go` set it up, the local "+
		"stand-ins' (the engine's, local AWS services') left out: the api function's line per request, apicall's per call.\n"+
		"- Custom events put: the function executor's ToolCallPending (one PutEvents entry of a function call; none when the "+
		"template sets the function's `SINEW_PENDING_EVENTS` off).\n\n")
	r.printf("cost", "Read from %s: each function's memory (%s), active tracing on the functions (%v) and the state machines (%v), "+
		"the functions' system log level (%s), the state machines' log level %s with execution data %s, the HTTP API's access "+
		"log format, the log groups' retention (%d days), and for the idle stack its alarms, dashboards, keys and secrets.\n\n",
		src, sortedFunctions(f), f.lambdaTraced, f.sfnTraced, systemLevels(f), f.sfnLevel, map[bool]string{true: "included", false: "left out"}[f.sfnData], f.retentionDays)
	r.printf("cost", "Assumed, with their sources:\n\n"+
		"- Step Functions' log: none for a call that succeeds at level ERROR or OFF; at level ALL one record per history event, in the shape of the examples of "+
		"<https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html> (id, type, details, previous_event_id, event_timestamp, "+
		"execution_arn, redrive_count), rendered from the measured history; without execution data, the details less their input, "+
		"output and parameters (as GetExecutionHistory leaves them out). Neither local mode nor the engine writes these records; the "+
		"engine keeps the history they are made from, so their size is the history's, not a guess.\n"+
		"- Lambda's own log: at system log level INFO or DEBUG in the JSON format, a platform.start and a platform.report record per invocation "+
		"(<https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-log-level.html>) in the Telemetry API's shapes, with "+
		"active tracing's member, the measured time and the function's memory (%d and %d bytes for a 10 ms invocation at 512 MB, traced); "+
		"at WARN none for a successful invocation, both records being INFO ones (the budget's calls all succeed; a failed "+
		"invocation's records are not counted). Lambda's metrics (duration, errors, throttles) do not come from these records.\n"+
		"- The access log line: the stage's format with values of real lengths (a 16-character request id, an IPv4 address, a UUID "+
		"for the caller's claim), %d bytes.\n"+
		"- CloudWatch Logs: billed by the bytes of the records (GB as 2^30 bytes), each GB kept for its retention at the storage "+
		"rate on its uncompressed size (CloudWatch bills stored logs compressed, so this is an upper bound).\n", lambdaStartBytes(true), lambdaReportBytes(512, 10, true),
		accessLogBytes(f.accessLog, 10))
	xrayNote(r)
	r.printf("cost", "- KMS: none of TestRequestBudget's tools holds a stored secret, so these calls make no KMS request. An executor opens "+
		"each sealed value it uses with one KMS Decrypt (`internal/secrets/envelope`, no cache), so every stored secret a tool's "+
		"call uses adds %s per million calls. The table's own key is not asked per request: DynamoDB caches the table key it "+
		"makes with it (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/encryption.howitworks.html>).\n"+
		"- EventBridge: Step Functions' Execution Status Change events reach the default bus free (AWS service events); the rule's "+
		"delivery to settle is counted as settle's invocation. SQS and SNS carry only dead letters and alarms: nothing per call.\n"+
		"- Free tiers are left out.\n\n", fmt.Sprintf("$%.2f", kmsPerRequest*1e6))
	ddbNote(r)
}

// systemLevels says the functions' system log levels: one level when they share it.
func systemLevels(f stackFacts) string {
	by := map[string][]string{}
	for _, fn := range slices.Sorted(maps.Keys(f.systemLevel)) {
		by[f.systemLevel[fn]] = append(by[f.systemLevel[fn]], fn)
	}
	if len(by) == 1 {
		for level := range by {
			return level + " on every function"
		}
	}
	var parts []string
	for _, level := range slices.Sorted(maps.Keys(by)) {
		parts = append(parts, level+" on "+strings.Join(by[level], ", "))
	}
	return strings.Join(parts, "; ")
}

func xrayNote(r *report) {
	r.printf("cost", "- X-Ray: sampling is decided once, where a trace starts (<https://docs.aws.amazon.com/xray/latest/devguide/xray-console-sampling.html>): "+
		"at the api function for each HTTP request (the AWS SDK passes a Lambda's trace header on, so Step Functions and the "+
		"executors join that trace), at Step Functions for a bare StartExecution, and at settle for each status-change event. The "+
		"table's traces are those starts; the cost records %.0f%% of them, the default rule's rate beyond its reservoir of one "+
		"trace a second: a busy stack's figure. A stack with fewer calls than that reservoir has nearly all of them recorded: up to "+
		"$5.00 per million calls per trace start (the reservoir's most, one trace a second all month, is about $13 a month per "+
		"rule).\n", xraySampled*100)
}

func ddbNote(r *report) {
	r.printf("cost", "DynamoDB is billed by request units as DynamoDB reports them: the tests' counted client asks every request for "+
		"its consumed capacity (`ReturnConsumedCapacity: INDEXES`) and `internal/awscount` adds up what DynamoDB Local returns, the table and "+
		"its index `gsi1` together: an item rounded up to 1 KB per write unit and 4 KB per read unit (a write costs the larger of the item "+
		"before and after it), a transaction's items twice, and one more write unit for every write that puts, changes or deletes a `gsi1` "+
		"entry (two when the entry's key changes); GetItem, BatchGetItem, Query, Scan and TransactGetItems are priced as read units, the "+
		"other operations as write units, and an eventually consistent read's half unit is rounded up to a whole one per operation. "+
		"`internal/awscount`'s `TestUnits` holds DynamoDB Local's figures to AWS's documented rules; where they depart the counter corrects "+
		"them or estimates them from the request. A transaction's index units are taken as DynamoDB Local reports them, twice like the "+
		"items, which AWS documents for the items only: the function type's may be overstated by at most 4 units, $2.50 per million calls.\n\n")
}

// idleSection prices the stack standing idle for a month, from its template.
func idleSection(r *report, f stackFacts) {
	if !f.fromTemplate {
		r.printf("cost", "The idle stack: not measured in this run (%s).\n\n", f.source)
		return
	}
	c := f.idle()
	r.headline("%s", f.idleLine())
	r.printf("cost", "The idle stack, a month, from the template: %d customer managed KMS keys $%.2f (each key's yearly rotation adds $1.00 a "+
		"month for its first two rotations: $%.2f from the third year); %d alarms reading %d metrics $%.2f (CloudWatch bills an alarm "+
		"by the metrics it reads: %d of them sum several metrics each, %d of the %d, as the table's throttle and system-error alarms "+
		"sum eight operations' each); "+
		"%d dashboard $%.2f (free within the free tier's first 3); %d Secrets Manager secrets $%.2f (the stack makes the model key's "+
		"secret, $%.2f more, only when the model is OpenAI-compatible and no secret ARN is given). **$%.2f a month.** Not in it: the "+
		"%d metric filters' custom metrics, billed only for the hours they get data (none while idle); the %d log groups' storage, "+
		"which empties %d days after the last call; the DynamoDB table's storage and point-in-time backups (cents for a small table); "+
		"Cognito (free to 10,000 monthly active users on the Lite plan). Lambda, Step Functions, API Gateway, EventBridge, SQS, SNS, "+
		"X-Ray and DynamoDB on demand cost nothing while idle.\n\n",
		f.kmsKeys, c.kms, float64(f.kmsKeys)*3*kmsPerKeyMonth, f.alarms, f.alarmMetrics, c.alarms, f.mathAlarms, f.mathMetrics, f.alarmMetrics,
		f.dashboards, c.dashboards, f.secrets, c.secrets, secretMonth, c.total(), f.metricFilters, f.logGroups, f.retentionDays)
}
