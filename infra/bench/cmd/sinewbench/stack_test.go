package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sinew/internal/config"
	"sinew/internal/deploy"
)

// writeTemplate writes a template of every described function and the extra resources.
func writeTemplate(t *testing.T, extra map[string]any) string {
	t.Helper()
	res := map[string]any{}
	for _, f := range deploy.Functions() {
		props := map[string]any{"FunctionName": "sinew-" + f.Name, "MemorySize": f.MemoryMB, "TracingConfig": map[string]any{"Mode": "Active"}}
		if f.Name != "settle" { // settle's LoggingConfig leaves the system log level to Lambda's default
			props["LoggingConfig"] = map[string]any{"LogFormat": "JSON", "SystemLogLevel": "WARN"}
		}
		res["Fn"+f.Name] = map[string]any{"Type": "AWS::Lambda::Function", "Properties": props}
	}
	// A CDK helper function, named by an intrinsic: not one of sinew's.
	res["Helper"] = map[string]any{"Type": "AWS::Lambda::Function", "Properties": map[string]any{"FunctionName": map[string]any{"Ref": "X"}}}
	for k, v := range extra {
		res[k] = v
	}
	raw, err := json.Marshal(map[string]any{"Resources": res})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sinew.template.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func alarm(props map[string]any) map[string]any {
	return map[string]any{"Type": "AWS::CloudWatch::Alarm", "Properties": props}
}

// mathAlarm is an alarm on an expression over n metrics, as CDK writes a sum of per-operation metrics.
func mathAlarm(n, period int) map[string]any {
	metrics := []any{map[string]any{"Expression": "m1+m2", "Id": "expr"}}
	for i := range n {
		metrics = append(metrics, map[string]any{"Id": fmt.Sprint("m", i), "MetricStat": map[string]any{"Period": period, "Stat": "Sum"}})
	}
	return alarm(map[string]any{"Metrics": metrics})
}

// TestIdleCost: the idle month is the keys, the alarms by the metrics they read and their
// resolution, the dashboards and the secrets; the rest of the stack costs nothing idle.
func TestIdleCost(t *testing.T) {
	tests := []struct {
		name                  string
		extra                 map[string]any
		alarms, metrics       int
		kms, alarmCost, total string
	}{
		{"nothing fixed", nil, 0, 0, "0.00", "0.00", "0.00"},
		{"two keys", map[string]any{"K1": map[string]any{"Type": "AWS::KMS::Key"}, "K2": map[string]any{"Type": "AWS::KMS::Key"}}, 0, 0, "2.00", "0.00", "2.00"},
		{"one alarm on one metric", map[string]any{"A": alarm(map[string]any{"Period": 300})}, 1, 1, "0.00", "0.10", "0.10"},
		{"a sum of eight metrics bills as eight", map[string]any{"A": mathAlarm(8, 300)}, 1, 8, "0.00", "0.80", "0.80"},
		{"high resolution", map[string]any{"A": alarm(map[string]any{"Period": 10}), "B": mathAlarm(2, 10)}, 2, 3, "0.00", "0.90", "0.90"},
		{"composite", map[string]any{"C": map[string]any{"Type": "AWS::CloudWatch::CompositeAlarm", "Properties": map[string]any{}}}, 1, 0, "0.00", "0.50", "0.50"},
		{"the stack's shape", map[string]any{
			"K1": map[string]any{"Type": "AWS::KMS::Key"}, "K2": map[string]any{"Type": "AWS::KMS::Key"},
			"A1": alarm(map[string]any{"Period": 300}), "A2": alarm(map[string]any{"Period": 300, "ExtendedStatistic": "p99"}),
			"T": mathAlarm(8, 300), "S": mathAlarm(8, 300), "D": map[string]any{"Type": "AWS::CloudWatch::Dashboard"},
			"Sec": map[string]any{"Type": "AWS::SecretsManager::Secret"},
			"L":   map[string]any{"Type": "AWS::Logs::LogGroup", "Properties": map[string]any{"RetentionInDays": 30}},
		}, 4, 18, "2.00", "1.80", "7.20"},
	}
	for _, tt := range tests {
		f, err := readStack(writeTemplate(t, tt.extra))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		c := f.idle()
		got := []any{f.alarms, f.alarmMetrics, f2(c.kms), f2(c.alarms), f2(c.total())}
		want := []any{tt.alarms, tt.metrics, tt.kms, tt.alarmCost, tt.total}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: alarms, metrics, KMS, alarms $, total $ = %v, want %v", tt.name, got, want)
		}
		if tt.name == "the stack's shape" && (f.mathAlarms != 2 || f.mathMetrics != 16) {
			t.Errorf("%s: %d alarms over %d metrics of expressions, want 2 over 16", tt.name, f.mathAlarms, f.mathMetrics)
		}
		if !idleHeadline.MatchString("- " + f.idleLine()) {
			t.Errorf("%s: the idle line %q lost its form", tt.name, f.idleLine())
		}
	}
}

// TestReadStack: the facts the per-call cost takes from the template.
func TestReadStack(t *testing.T) {
	path := writeTemplate(t, map[string]any{
		"SM": map[string]any{"Type": "AWS::StepFunctions::StateMachine", "Properties": map[string]any{
			"LoggingConfiguration": map[string]any{"Level": "ALL", "IncludeExecutionData": false}, "TracingConfiguration": map[string]any{"Enabled": true}}},
		"Stage": map[string]any{"Type": "AWS::ApiGatewayV2::Stage", "Properties": map[string]any{"AccessLogSettings": map[string]any{"Format": "$context.requestId"}}},
		"L1":    map[string]any{"Type": "AWS::Logs::LogGroup", "Properties": map[string]any{"RetentionInDays": 14}},
		"L2":    map[string]any{"Type": "AWS::Logs::LogGroup", "Properties": map[string]any{"RetentionInDays": 30}},
	})
	f, err := readStack(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range deploy.Functions() {
		if f.memoryMB[fn.Name] != fn.MemoryMB {
			t.Errorf("%s: %d MB, want %d", fn.Name, f.memoryMB[fn.Name], fn.MemoryMB)
		}
	}
	if !f.fromTemplate || !f.lambdaTraced || !f.sfnTraced || f.sfnLevel != "ALL" || f.sfnData || f.accessLog != "$context.requestId" ||
		f.retentionDays != 30 || f.logGroups != 2 || f.systemLevel["api"] != "WARN" || f.systemLevel["settle"] != "INFO" {
		t.Errorf("facts = %+v", f)
	}
	if got := systemLevels(f); !strings.HasPrefix(got, "INFO on settle; WARN on api, ") {
		t.Errorf("system levels = %q, want settle's INFO apart", got)
	}
	// ToolCallPending is on unless the function executor's setting turns it off; off, a function
	// call puts no custom event, whatever the run measured.
	c := callInputs{name: "ask_user", customEvents: 1}
	if f.pendingOff || c.cost(f).events == 0 {
		t.Errorf("by default: pending events off %v, $%.2f of events", f.pendingOff, c.cost(f).events)
	}
	off, err := readStack(writeTemplate(t, map[string]any{"Fnfunction": map[string]any{"Type": "AWS::Lambda::Function", "Properties": map[string]any{
		"FunctionName": "sinew-function", "MemorySize": 256, "TracingConfig": map[string]any{"Mode": "Active"},
		"Environment": map[string]any{"Variables": map[string]any{config.EnvPendingEvents: "off"}}}}}))
	if err != nil || !off.pendingOff || c.cost(off).events != 0 || c.events(off) != 0 {
		t.Errorf("SINEW_PENDING_EVENTS=off: pending events off %v, $%.2f of events (%v)", off.pendingOff, c.cost(off).events, err)
	}
	// A template without one of the described functions is not the stack.
	if _, err := readStack(writeTemplate(t, map[string]any{"Fnapi": map[string]any{"Type": "AWS::SNS::Topic"}})); err == nil {
		t.Error("a template without the api function read without an error")
	}
}
