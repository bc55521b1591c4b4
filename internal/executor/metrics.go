package executor

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"sinew/internal/fault"
	"sinew/internal/tool"
)

// The ToolErrors metric counts tools' own failures (a provider's refusal, a bad argument, a
// target's timeout), which are calls' results and not Lambda errors. It is written in CloudWatch
// Embedded Metric Format inside the log line that reports the failure, so CloudWatch Logs makes the
// metric from the function's log group: no PutMetricData call, no grant
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
const (
	MetricNamespace   = "sinew"
	MetricToolErrors  = "ToolErrors"
	DimensionToolType = "ToolType"
	// DimensionFunction names the function that ran the call (its deployed name, which holds the
	// stack's), so one stack's failures can be told from another's in the same account and Region.
	DimensionFunction = "FunctionName"
	// ToolFailedMsg is the message of the line.
	ToolFailedMsg = "tool failed"
)

// LogToolError logs call's failure err as one EMF line: ToolErrors 1, by tool type, and by tool
// type and function when it runs in Lambda. It logs at WARN, so Lambda's log-level filter keeps it
// unless the functions log only errors (the metric is then lost with the line).
func LogToolError(ctx context.Context, call *tool.Call, err error) {
	typ := string(call.Type)
	if typ == "" {
		typ = "unknown" // an envelope without a valid call; EMF refuses an empty dimension value
	}
	dims := [][]string{{DimensionToolType}}
	args := []any{DimensionToolType, typ, MetricToolErrors, 1,
		"error_type", string(fault.KindOf(err)), "call_id", call.ID, "tool", call.Name()}
	if fn := lambdacontext.FunctionName; fn != "" {
		dims = append(dims, []string{DimensionToolType, DimensionFunction})
		args = append(args, DimensionFunction, fn)
	}
	meta, merr := json.Marshal(map[string]any{
		"Timestamp": time.Now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace": MetricNamespace, "Dimensions": dims,
			"Metrics": []any{map[string]any{"Name": MetricToolErrors, "Unit": "Count"}},
		}},
	})
	if merr == nil {
		args = append([]any{"_aws", json.RawMessage(meta)}, args...)
	}
	slog.Log(ctx, slog.LevelWarn, ToolFailedMsg, args...)
}
