package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The log records AWS writes for a call, rebuilt at their real size: local mode and the engine keep
// the history AWS's logs are made from, but do not write the records themselves.

// sfnLogRecord is one record of a state machine's CloudWatch log at level ALL, in the shape of the
// examples in <https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html>.
type sfnLogRecord struct {
	ID              string          `json:"id"`
	Type            string          `json:"type"`
	Details         json.RawMessage `json:"details"`
	PreviousEventID string          `json:"previous_event_id"`
	EventTimestamp  string          `json:"event_timestamp"`
	ExecutionArn    string          `json:"execution_arn"`
	RedriveCount    string          `json:"redrive_count"`
}

// executionData are the details' members that IncludeExecutionData=false leaves out of the log,
// as GetExecutionHistory leaves them out of the history (local mode's sfnapi does the same).
var executionData = []string{"input", "output", "parameters"}

// sfnLogBytes is the size of the records Step Functions logs for a history (GetExecutionHistory's
// events, as the engine keeps them): one record per event, with or without its execution data.
func sfnLogBytes(history []json.RawMessage, arn string, withData bool) (int, error) {
	n := 0
	for _, raw := range history {
		var ev map[string]json.RawMessage
		if err := json.Unmarshal(raw, &ev); err != nil {
			return 0, err
		}
		rec := sfnLogRecord{ExecutionArn: arn, RedriveCount: "0", Details: json.RawMessage("{}")}
		var ts time.Time
		var id, prev int64
		for k, dst := range map[string]any{"type": &rec.Type, "id": &id, "previousEventId": &prev, "timestamp": &ts} {
			if v, ok := ev[k]; ok {
				if err := json.Unmarshal(v, dst); err != nil {
					return 0, fmt.Errorf("history event %s: %w", k, err)
				}
			}
		}
		rec.ID, rec.PreviousEventID = strconv.FormatInt(id, 10), strconv.FormatInt(prev, 10)
		rec.EventTimestamp = strconv.FormatInt(ts.UnixMilli(), 10)
		for k, v := range ev {
			if !strings.HasSuffix(k, "EventDetails") {
				continue
			}
			d, err := detailsWithout(v, withData)
			if err != nil {
				return 0, err
			}
			rec.Details = d
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return 0, err
		}
		n += len(b)
	}
	return n, nil
}

func detailsWithout(v json.RawMessage, withData bool) (json.RawMessage, error) {
	if withData {
		return v, nil
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(v, &d); err != nil {
		return nil, err
	}
	for _, k := range executionData {
		delete(d, k)
	}
	return json.Marshal(d)
}

// The two records Lambda writes per invocation at system log level INFO in the JSON log format
// (platform.start and platform.report; "start" and "report" in
// <https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-log-level.html>), in the
// Telemetry API's shapes (<https://docs.aws.amazon.com/lambda/latest/dg/telemetry-schema-reference.html>),
// with the tracing member active tracing adds. Identifiers have their real lengths.
const (
	exampleRequestID = "8f5d2a6e-3b1c-4c8e-9a7f-2d4b6c8e0a1f"
	exampleTracing   = `{"spanId":"6a1b2c3d4e5f6a7b","type":"X-Amzn-Trace-Id","value":"Root=1-6751f4c2-6e4f3e2a1b0c9d8e7f6a5b4c;Parent=6a1b2c3d4e5f6a7b;Sampled=1"}`
	platformStart    = `{"time":"2026-12-06T06:14:54.123Z","type":"platform.start","record":{"requestId":"%s","version":"$LATEST"%s}}`
	platformReport   = `{"time":"2026-12-06T06:14:54.135Z","type":"platform.report","record":{"requestId":"%s","metrics":{"durationMs":%.3f,` +
		`"billedDurationMs":%d,"memorySizeMB":%d,"maxMemoryUsedMB":%d}%s,"status":"success"}}`
)

// platformRecords reports whether fn's system log level keeps a successful invocation's
// platform.start and platform.report, both INFO records: WARN leaves them out.
func (f stackFacts) platformRecords(fn string) bool {
	return f.systemLevel[fn] != "WARN"
}

// lambdaLogBytes is the size of Lambda's own records for one invocation of ms at memMB.
func lambdaLogBytes(memMB int, ms float64, traced bool) int {
	return lambdaStartBytes(traced) + lambdaReportBytes(memMB, ms, traced)
}

func tracingMember(traced bool) string {
	if traced {
		return `,"tracing":` + exampleTracing
	}
	return ""
}

func lambdaStartBytes(traced bool) int {
	return len(fmt.Sprintf(platformStart, exampleRequestID, tracingMember(traced)))
}

func lambdaReportBytes(memMB int, ms float64, traced bool) int {
	used := min(memMB, 64) // a Go function's resident memory: two digits
	return len(fmt.Sprintf(platformReport, exampleRequestID, ms, billedMs(ms), memMB, used, tracingMember(traced)))
}

// billedMs is Lambda's billed duration: the run rounded up to the millisecond.
func billedMs(ms float64) int {
	b := int(ms)
	if float64(b) < ms || b == 0 {
		b++
	}
	return b
}

var contextVar = regexp.MustCompile(`\$context\.[A-Za-z0-9.]*[A-Za-z0-9]`)

// accessLogBytes is the size of one access log line of the HTTP API in format (the stage's
// AccessLogSettings), with values of a call's real lengths; API Gateway writes "-" for an empty one.
func accessLogBytes(format string, ms float64) int {
	latency := strconv.Itoa(billedMs(ms))
	values := map[string]string{
		"$context.requestId": "JZ3f1hbyIAMEYpQ=", "$context.identity.sourceIp": "203.0.113.10",
		"$context.requestTime": "06/Dec/2026:06:14:54 +0000", "$context.httpMethod": "POST", "$context.routeKey": "$default",
		"$context.path": "/tool-calls", "$context.status": "202", "$context.responseLength": "180",
		"$context.responseLatency": latency, "$context.integrationLatency": latency,
		"$context.authorizer.claims.sub": exampleRequestID,
	}
	line := contextVar.ReplaceAllStringFunc(format, func(v string) string {
		if s, ok := values[v]; ok {
			return s
		}
		return "-"
	})
	return len(line)
}
