package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/lambdaboundary"
	"sinew/internal/tool"
)

// runs answers every call with out or err.
type runs struct {
	out any
	err error
}

func (r runs) Run(context.Context, Envelope) (any, error) { return r.out, r.err }

// emfLines are the log lines in logs that carry CloudWatch Embedded Metric Format metadata.
func emfLines(t *testing.T, logs []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(logs), []byte("\n")) {
		var m map[string]any
		if len(line) == 0 || json.Unmarshal(line, &m) != nil {
			continue
		}
		if _, ok := m["_aws"]; ok {
			out = append(out, m)
		}
	}
	return out
}

// checkToolErrorsMetric checks one EMF line as CloudWatch reads it: in namespace sinew, ToolErrors
// counted 1, with the tool's type among its dimensions and as a root member.
func checkToolErrorsMetric(t *testing.T, m map[string]any, typ tool.Type) {
	t.Helper()
	var emf struct {
		Timestamp         *int64 `json:"Timestamp"`
		CloudWatchMetrics []struct {
			Namespace  string     `json:"Namespace"`
			Dimensions [][]string `json:"Dimensions"`
			Metrics    []struct {
				Name string `json:"Name"`
				Unit string `json:"Unit"`
			} `json:"Metrics"`
		} `json:"CloudWatchMetrics"`
	}
	raw, _ := json.Marshal(m["_aws"])
	if err := json.Unmarshal(raw, &emf); err != nil || emf.Timestamp == nil || len(emf.CloudWatchMetrics) != 1 {
		t.Fatalf("_aws = %s (%v), want a Timestamp and one metric directive", raw, err)
	}
	d := emf.CloudWatchMetrics[0]
	if d.Namespace != MetricNamespace || len(d.Metrics) != 1 || d.Metrics[0].Name != MetricToolErrors || d.Metrics[0].Unit != "Count" {
		t.Errorf("directive %+v, want %s/%s in Count", d, MetricNamespace, MetricToolErrors)
	}
	for _, set := range d.Dimensions {
		if len(set) == 0 || set[0] != DimensionToolType {
			t.Errorf("dimension set %v, want %s first", set, DimensionToolType)
		}
		for _, k := range set {
			if _, ok := m[k].(string); !ok {
				t.Errorf("dimension %s is not a root string member of %v", k, m)
			}
		}
	}
	if len(d.Dimensions) == 0 || m[DimensionToolType] != string(typ) || m[MetricToolErrors] != float64(1) {
		t.Errorf("line %v, want %s=%s and %s=1", m, DimensionToolType, typ, MetricToolErrors)
	}
}

// TestHandlerToolFailures: a tool's failure is the invocation's result, never its error, on every
// path that reads error results (agent_loop's Tasks and the chat path say so with error_result;
// tool_call's Dispatch gets it through the token), and each one is counted by one ToolErrors EMF
// line; a fault (Sinew.Transient, which the callers retry, or sinew's own) stays the invocation's
// error and counts no tool failure. Without error_result or a token (agent_loop's earlier
// definition, still running) the tool's failure is the invocation's error, as that definition reads it.
func TestHandlerToolFailures(t *testing.T) {
	call := `{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","type":"integration","integration":{"name":"echo","arguments":{}}}`
	refused := fault.New(fault.Provider, "the service refused")
	tests := []struct {
		name      string
		event     string // after the call
		err       error
		wantErr   string // the invocation's error type
		wantAns   string // the invocation's answer
		wantSent  []string
		wantLines int
	}{
		{"error results: a tool's failure", `,"error_result":true`, refused, "",
			`{"error":{"message":"the service refused","type":"Sinew.Provider"},"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","name":"echo","type":"integration"}`, nil, 1},
		{"error results: a timeout is the tool's", `,"error_result":true`, fault.New(fault.Timeout, "the target took too long"), "",
			`{"error":{"message":"the target took too long","type":"Sinew.Timeout"},"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","name":"echo","type":"integration"}`, nil, 1},
		{"error results: a transient fault", `,"error_result":true`, fault.New(fault.Transient, "busy"), "Sinew.Transient", "", nil, 0},
		{"error results: sinew's own fault", `,"error_result":true`, fault.New(fault.Internal, "broken"), "Sinew.Internal", "", nil, 0},
		{"error results: success", `,"error_result":true`, nil, "",
			`{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","name":"echo","output":{"n":1},"type":"integration"}`, nil, 0},
		{"a token: the failure goes to it", `,"task_token":"tok"`, refused, "", `{}`, []string{"Sinew.Provider|the service refused"}, 1},
		{"an earlier agent_loop: the invocation's error", ``, refused, "Sinew.Provider", "", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			prev := slog.Default()
			slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
			defer slog.SetDefault(prev)
			rec := &recordingSFN{}
			h := lambdaboundary.Handler(Handler(runs{out: map[string]any{"n": 1}, err: tt.err}, &Tokens{SFN: rec}))
			event := `{"call":` + call + `,"tool":null,"context":{"developer_id":"dev","agent_id":"a"}` + tt.event + `}`
			out, ierr := lambdaboundary.Invoke(context.Background(), h, []byte(event))
			switch {
			case tt.wantErr != "" && (ierr == nil || ierr.Type != tt.wantErr):
				t.Errorf("invocation error %+v, want %s", ierr, tt.wantErr)
			case tt.wantErr == "" && ierr != nil:
				t.Errorf("invocation error %+v, want the answer %s", ierr, tt.wantAns)
			case tt.wantErr == "":
				got, _ := jsonv.Decode(out)
				if jsonv.EncodeString(got) != tt.wantAns {
					t.Errorf("answer %s, want %s", out, tt.wantAns)
				}
			}
			if strings.Join(rec.failure, ",") != strings.Join(tt.wantSent, ",") {
				t.Errorf("SendTaskFailure %v, want %v", rec.failure, tt.wantSent)
			}
			lines := emfLines(t, logs.Bytes())
			if len(lines) != tt.wantLines {
				t.Fatalf("%d EMF lines, want %d: %s", len(lines), tt.wantLines, logs.String())
			}
			for _, m := range lines {
				checkToolErrorsMetric(t, m, tool.TypeIntegration)
			}
		})
	}
}
