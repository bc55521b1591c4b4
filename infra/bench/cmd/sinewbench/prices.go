package main

// AWS list prices in us-east-1, as read on pricesRead from the pages in priceSources. Free tiers
// are left out throughout: they are per account, not per call, and a stack shares them.
const pricesRead = "2026-12-06"

const (
	sfnPerTransition = 0.025 / 1000 // Step Functions Standard, per state transition
	expressPerRun    = 1.00 / 1e6   // Step Functions Express, per execution (request)
	expressPerGBs    = 0.00001667   // Step Functions Express duration, per GB-second (the first 1,000 GB-hours a month)
	lambdaPerRequest = 0.20 / 1e6   // Lambda, per request
	lambdaPerGBs     = 0.0000133334 // Lambda duration on arm64, per GB-second (billed per ms)
	ddbPerRead       = 0.125 / 1e6  // DynamoDB on-demand, per read request unit
	ddbPerWrite      = 0.625 / 1e6  // DynamoDB on-demand, per write request unit
	apigwPerRequest  = 1.00 / 1e6   // API Gateway HTTP API, per request (first 300 million a month)
	eventsPerCustom  = 1.00 / 1e6   // EventBridge, per custom event put (each 64 KB of it)
	logsPerGB        = 0.50         // CloudWatch Logs ingestion, Standard class and vended logs' first tier
	logsStoredPerGB  = 0.03         // CloudWatch Logs storage, per GB-month
	xrayPerTrace     = 5.00 / 1e6   // X-Ray, per trace recorded
	kmsPerRequest    = 0.03 / 1e4   // KMS, per symmetric request (Decrypt)
	kmsPerKeyMonth   = 1.00         // KMS, per customer managed key a month (each rotation adds $1, twice)
	alarmPerMetric   = 0.10         // CloudWatch standard-resolution alarm, per metric it reads, a month
	alarmHighRes     = 0.30         // the same at high resolution (a period under 60 s)
	compositeAlarm   = 0.50         // CloudWatch composite alarm, a month
	dashboardMonth   = 3.00         // CloudWatch dashboard, a month (3 are free in the free tier)
	secretMonth      = 0.40         // Secrets Manager, per secret a month
)

// Not prices but the rules that turn counts into what is billed.
const (
	gb            = 1 << 30 // AWS's GB for data volumes
	expressMemGB  = 0.0625  // an Express execution's billed memory: its first 64 MB chunk (sinew's inputs are KBs)
	expressStepMs = 100     // Express duration is billed in 100 ms steps
	xraySampled   = 0.05    // the default sampling rule's fixed rate, beyond its reservoir of 1 a second
	logRetainDays = 30      // the stack's log groups' retention, when the template does not say
)

var priceSources = []string{
	"Step Functions Standard $0.025 per 1,000 state transitions; Express $1.00 per million executions and $0.00001667 per GB-second " +
		"(the first 1,000 GB-hours a month), memory billed in 64 MB chunks and duration in 100 ms steps, rounded up: <https://aws.amazon.com/step-functions/pricing/>",
	"Lambda $0.20 per million requests; arm64 duration $0.0000133334 per GB-second, billed per millisecond: <https://aws.amazon.com/lambda/pricing/>",
	"DynamoDB on-demand $0.625 per million write request units, $0.125 per million read request units (the Standard table class " +
		"since the November 2024 on-demand price cut): <https://aws.amazon.com/dynamodb/pricing/on-demand/>",
	"API Gateway HTTP APIs $1.00 per million requests (the first 300 million a month): <https://aws.amazon.com/api-gateway/pricing/>",
	"EventBridge $1.00 per million custom events put (PutEvents, each 64 KB chunk an event); events that AWS services send to the " +
		"default bus, Step Functions' Execution Status Change among them, are free: <https://aws.amazon.com/eventbridge/pricing/>",
	"CloudWatch Logs $0.50 per GB ingested (Standard class; Lambda's and Step Functions' logs are vended logs, the same $0.50 " +
		"up to 10 TB a month), $0.03 per GB-month stored; alarms $0.10 per metric a standard-resolution alarm reads ($0.30 at high " +
		"resolution, $0.50 a composite alarm); dashboards $3.00 a month each: <https://aws.amazon.com/cloudwatch/pricing/>",
	"X-Ray $5.00 per million traces recorded: <https://aws.amazon.com/xray/pricing/>; the default sampling rule records the first " +
		"request each second and 5% of the rest: <https://docs.aws.amazon.com/xray/latest/devguide/xray-console-sampling.html>",
	"KMS $1.00 a month per customer managed key (each automatic rotation adds $1.00 a month, for the first two), $0.03 per 10,000 " +
		"requests: <https://aws.amazon.com/kms/pricing/>",
	"Secrets Manager $0.40 per secret a month: <https://aws.amazon.com/secrets-manager/pricing/>",
}
