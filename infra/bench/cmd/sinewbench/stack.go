package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sinew/internal/config"
	"sinew/internal/deploy"
)

// stackFacts is what the deployed stack decides about the cost of a call and of standing idle, read
// from its synthesized CloudFormation template (infra/cdk), or assumed as infra/cdk makes it when the
// template cannot be had (source says which).
type stackFacts struct {
	source        string // the template read, or why none was
	fromTemplate  bool
	memoryMB      map[string]int    // each function's, by its name in internal/deploy
	systemLevel   map[string]string // each function's system log level (LoggingConfig.SystemLogLevel)
	lambdaTraced  bool              // active tracing (X-Ray) on the functions
	sfnLevel      string            // the Standard state machines' log level
	expressLevel  string            // the Express state machine's log level
	sfnData       bool              // IncludeExecutionData
	sfnTraced     bool
	pendingOff    bool   // the function executor's SINEW_PENDING_EVENTS is off: no ToolCallPending
	accessLog     string // the HTTP API stage's access log format
	retentionDays int    // the log groups' retention (the longest)
	alarms        int
	alarmMetrics  int     // what the alarms bill by: each metric a metric-math alarm reads counts
	alarmDollars  float64 // a month
	mathAlarms    int     // alarms on an expression over several metrics
	mathMetrics   int     // the metrics those read
	metricFilters int     // log metric filters: custom metrics, billed only for hours with data
	dashboards    int
	kmsKeys       int
	secrets       int
	logGroups     int
}

// assumedFacts is the stack as infra/cdk made it when this model was written, and the functions'
// memory from internal/deploy (which infra/cdk deploys): what the model uses without a template.
func assumedFacts(why string) stackFacts {
	f := stackFacts{source: why, memoryMB: map[string]int{}, systemLevel: map[string]string{}, lambdaTraced: true, sfnLevel: "ERROR", expressLevel: "ERROR", sfnTraced: true,
		retentionDays: logRetainDays, accessLog: `{"requestId":"$context.requestId","ip":"$context.identity.sourceIp",` +
			`"method":"$context.httpMethod","routeKey":"$context.routeKey","path":"$context.path",` +
			`"status":"$context.status","responseLength":"$context.responseLength","latencyMs":$context.responseLatency,` +
			`"integrationError":"$context.integrationErrorMessage",` +
			`"authorizerError":"$context.authorizer.error","developer":"$context.authorizer.claims.sub"}`}
	for _, fn := range deploy.Functions() {
		f.memoryMB[fn.Name], f.systemLevel[fn.Name] = fn.MemoryMB, "WARN"
	}
	return f
}

// synthTemplate synthesizes infra/cdk's stack with its default settings into dir and answers the
// template's path. Assets are not bundled (the CDK's aws:cdk:bundling-stacks set to none): the
// functions' code does not change what they cost.
func synthTemplate(ctx context.Context, dir string) (string, []string, error) {
	raw, err := os.ReadFile("infra/cdk/cdk.json")
	if err != nil {
		return "", nil, err
	}
	var app struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &app); err != nil {
		return "", nil, fmt.Errorf("infra/cdk/cdk.json: %w", err)
	}
	app.Context["aws:cdk:bundling-stacks"] = []string{}
	cdkCtx, err := json.Marshal(app.Context)
	if err != nil {
		return "", nil, err
	}
	argv := []string{"go", "-C", "infra/cdk", "run", "."}
	env := []string{"CDK_OUTDIR=" + dir, "CDK_CONTEXT_JSON=" + string(cdkCtx), "CDK_DISABLE_VERSION_CHECK=1",
		"JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20"}
	if _, err := runCmd(ctx, argv, env); err != nil {
		return "", argv, err
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.template.json"))
	if len(matches) != 1 {
		return "", argv, fmt.Errorf("synth wrote %d templates to %s, want 1", len(matches), dir)
	}
	return matches[0], argv, nil
}

type cfnResource struct {
	Type       string          `json:"Type"`
	Properties json.RawMessage `json:"Properties"`
}

// readStack reads the facts from a synthesized template.
func readStack(path string) (stackFacts, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return stackFacts{}, err
	}
	var tpl struct {
		Resources map[string]cfnResource `json:"Resources"`
	}
	if err := json.Unmarshal(raw, &tpl); err != nil {
		return stackFacts{}, fmt.Errorf("%s: %w", path, err)
	}
	f := stackFacts{source: path, fromTemplate: true, memoryMB: map[string]int{}, systemLevel: map[string]string{}, lambdaTraced: true}
	for _, id := range slices.Sorted(maps.Keys(tpl.Resources)) {
		if err := f.add(tpl.Resources[id]); err != nil {
			return stackFacts{}, fmt.Errorf("%s: %s: %w", path, id, err)
		}
	}
	for _, fn := range deploy.Functions() {
		if _, ok := f.memoryMB[fn.Name]; !ok {
			return stackFacts{}, fmt.Errorf("%s: no function %s", path, fn.Name)
		}
	}
	return f, nil
}

// add counts one resource into the facts.
func (f *stackFacts) add(r cfnResource) error {
	switch r.Type {
	case "AWS::Lambda::Function":
		return f.addFunction(r.Properties)
	case "AWS::StepFunctions::StateMachine":
		var p struct {
			StateMachineType     string
			LoggingConfiguration struct{ Level, IncludeExecutionData any }
			TracingConfiguration struct{ Enabled bool }
		}
		if err := json.Unmarshal(r.Properties, &p); err != nil {
			return err
		}
		if p.StateMachineType == "EXPRESS" {
			f.expressLevel = fmt.Sprint(p.LoggingConfiguration.Level)
			return nil
		}
		f.sfnLevel = fmt.Sprint(p.LoggingConfiguration.Level)
		f.sfnData = p.LoggingConfiguration.IncludeExecutionData == true
		f.sfnTraced = p.TracingConfiguration.Enabled
	case "AWS::ApiGatewayV2::Stage":
		var p struct{ AccessLogSettings struct{ Format string } }
		if err := json.Unmarshal(r.Properties, &p); err != nil {
			return err
		}
		f.accessLog = p.AccessLogSettings.Format
	case "AWS::Logs::LogGroup":
		var p struct{ RetentionInDays int }
		if err := json.Unmarshal(r.Properties, &p); err != nil {
			return err
		}
		f.logGroups++
		f.retentionDays = max(f.retentionDays, p.RetentionInDays)
	case "AWS::CloudWatch::Alarm", "AWS::CloudWatch::CompositeAlarm":
		return f.addAlarm(r)
	case "AWS::Logs::MetricFilter":
		f.metricFilters++
	case "AWS::CloudWatch::Dashboard":
		f.dashboards++
	case "AWS::KMS::Key":
		f.kmsKeys++
	case "AWS::SecretsManager::Secret":
		f.secrets++
	}
	return nil
}

func (f *stackFacts) addFunction(props json.RawMessage) error {
	var p struct {
		FunctionName  any // a string here; an intrinsic for CDK's own helper functions
		MemorySize    int
		TracingConfig struct{ Mode string }
		LoggingConfig struct{ SystemLogLevel string }
		Environment   struct{ Variables map[string]any }
	}
	if err := json.Unmarshal(props, &p); err != nil {
		return err
	}
	// The stack prefixes each function's name with its own ("sinew-api").
	full, _ := p.FunctionName.(string)
	_, name, ok := strings.Cut(full, "-")
	if !ok {
		return nil // CDK's own helper functions, if any: not sinew's
	}
	if p.MemorySize == 0 {
		p.MemorySize = 128 // Lambda's default
	}
	f.memoryMB[name] = p.MemorySize
	// Lambda's default system log level is INFO (<https://docs.aws.amazon.com/lambda/latest/api/API_LoggingConfig.html>).
	f.systemLevel[name] = cmp.Or(p.LoggingConfig.SystemLogLevel, "INFO")
	f.lambdaTraced = f.lambdaTraced && p.TracingConfig.Mode == "Active"
	if name == "function" && p.Environment.Variables[config.EnvPendingEvents] == "off" {
		f.pendingOff = true
	}
	return nil
}

// addAlarm prices an alarm as CloudWatch bills it: by the metrics it reads (a metric-math alarm
// over eight metrics bills as eight), at the high-resolution rate under a 60 s period.
func (f *stackFacts) addAlarm(r cfnResource) error {
	f.alarms++
	if r.Type == "AWS::CloudWatch::CompositeAlarm" {
		f.alarmDollars += compositeAlarm
		return nil
	}
	var p struct {
		Period  int
		Metrics []struct {
			MetricStat *struct{ Period int }
		}
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	periods := []int{p.Period}
	if len(p.Metrics) > 0 {
		periods = nil
		for _, m := range p.Metrics {
			if m.MetricStat != nil {
				periods = append(periods, m.MetricStat.Period)
			}
		}
		if len(periods) > 1 {
			f.mathAlarms, f.mathMetrics = f.mathAlarms+1, f.mathMetrics+len(periods)
		}
	}
	for _, period := range periods {
		f.alarmMetrics++
		if period > 0 && period < 60 {
			f.alarmDollars += alarmHighRes
		} else {
			f.alarmDollars += alarmPerMetric
		}
	}
	return nil
}

// idleCost is what the stack costs a month with no calls at all: its keys, alarms, dashboards and
// secrets. Everything else is billed per request, and the logs a stack keeps expire with their
// retention.
type idleCost struct {
	kms, alarms, dashboards, secrets float64
}

func (f stackFacts) idle() idleCost {
	return idleCost{kms: float64(f.kmsKeys) * kmsPerKeyMonth, alarms: f.alarmDollars,
		dashboards: float64(f.dashboards) * dashboardMonth, secrets: float64(f.secrets) * secretMonth}
}

func (c idleCost) total() float64 { return c.kms + c.alarms + c.dashboards + c.secrets }

// idleLine is the headline of the idle stack, in the form other tools read.
func (f stackFacts) idleLine() string {
	c := f.idle()
	return fmt.Sprintf("Idle stack: $%.2f per month (%d KMS keys $%.2f, %d alarms on %d metrics $%.2f, %d dashboard $%.2f, %d secrets $%.2f)",
		c.total(), f.kmsKeys, c.kms, f.alarms, f.alarmMetrics, c.alarms, f.dashboards, c.dashboards, f.secrets, c.secrets)
}
