package workflow_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/lambdaboundary"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

func invoke(t *testing.T, h lambda.Handler, event any) (map[string]any, string, string) {
	t.Helper()
	out, ierr := lambdaboundary.Invoke(t.Context(), h, []byte(jsonv.EncodeString(event)))
	if ierr != nil {
		return nil, ierr.Type, ierr.Message
	}
	var m map[string]any
	if len(out) > 0 && string(out) != "null" {
		v, err := jsonv.Decode(out)
		if err != nil {
			t.Fatalf("answer %s is not JSON", out)
		}
		m, _ = v.(map[string]any)
	}
	return m, "", ""
}

func loadEvent(t *testing.T, rel string) map[string]any {
	t.Helper()
	v, err := jsonv.Decode(readFile(t, rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return v.(map[string]any)
}

// TestPrepare runs the prepare Lambda on events/prepare/input.json and variations: which tool is
// found (task first, the agent's with inherit_tools), the snapshot without setup, the wait
// settings, and the request's rules, each failure typed and recorded on the execution.
func TestPrepare(t *testing.T) {
	h := newHarness(t)
	dev := "dev-a"
	lookup := func(src string) string {
		return `{"name":"lookup","type":"integration","integration":{"provider":"dummy","setup":{"api_key":"k-` + src + `"},"arguments":{"source":"` + src + `"}}}`
	}
	agent := h.agent(dev, nil, lookup("agent"), `{"name":"echo","type":"integration","integration":{"provider":"dummy"}}`, askUser(120, 10))
	task := func(inherit bool, tools ...string) string {
		var ts []tool.Tool
		for _, s := range tools {
			tl, err := tool.Decode([]byte(s))
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, *tl)
		}
		tk, _, err := h.store.CreateTask(h.ctx, dev, agent, store.Task{Name: "t", InheritTools: inherit}, ts)
		if err != nil {
			t.Fatal(err)
		}
		return tk.ID
	}
	inheriting := task(true, lookup("task"))
	closed := task(false, lookup("task"))

	tests := []struct {
		name      string
		change    map[string]any
		wantErr   fault.Kind
		wantField string
		check     func(t *testing.T, p map[string]any)
	}{
		{"the sample event", nil, "", "", func(t *testing.T, p map[string]any) {
			call := p["call"].(map[string]any)
			jsonEqual(t, "call", call, map[string]any{"id": workflow.CallIDFor(dev, "sample-execution-1"), "type": "integration",
				"integration": map[string]any{"name": "echo", "arguments": map[string]any{"greeting": "hello", "count": 3}}})
			jsonEqual(t, "wait", p["wait"], map[string]any{"timeout_seconds": nil, "heartbeat_seconds": nil})
			// The agent's metadata for echo, empty, which the executor merges without reading it again.
			jsonEqual(t, "context", p["context"], map[string]any{"developer_id": dev, "agent_id": agent, "task_id": nil, "session_id": nil, "execution_id": "sample-execution-1", "depth": 0,
				"metadata": map[string]any{"agent": map[string]any{}}})
		}},
		{"the agent's tool, without its setup", map[string]any{"tool": "lookup", "execution_id": "e-agent"}, "", "", func(t *testing.T, p map[string]any) {
			integ := p["tool"].(map[string]any)["integration"].(map[string]any)
			if integ["arguments"].(map[string]any)["source"] != "agent" || integ["setup"] != nil || p["tool"].(map[string]any)["id"] == nil {
				t.Errorf("tool = %v, want the agent's, with its id and without setup", p["tool"])
			}
			if md := p["context"].(map[string]any)["metadata"]; md != nil {
				t.Errorf("context.metadata = %v for a tool with a stored setup, which only its executor reads", md)
			}
		}},
		{"the task's tool first", map[string]any{"tool": "lookup", "task_id": inheriting, "execution_id": "e-task"}, "", "", func(t *testing.T, p map[string]any) {
			if src := p["tool"].(map[string]any)["integration"].(map[string]any)["arguments"].(map[string]any)["source"]; src != "task" {
				t.Errorf("source = %v, want task", src)
			}
		}},
		{"the agent's tool through inherit_tools", map[string]any{"tool": "echo", "task_id": inheriting, "execution_id": "e-inherit"}, "", "", nil},
		{"no inherit_tools: the agent's tools are not seen", map[string]any{"tool": "echo", "task_id": closed, "execution_id": "e-closed"}, fault.NotFound, "tool", nil},
		{"a function tool's wait", map[string]any{"tool": "ask_user", "execution_id": "e-fn"}, "", "", func(t *testing.T, p map[string]any) {
			jsonEqual(t, "wait", p["wait"], map[string]any{"timeout_seconds": 120, "heartbeat_seconds": 10})
		}},
		{"unknown tool", map[string]any{"tool": "nope", "execution_id": "e-unknown"}, fault.NotFound, "tool", nil},
		{"both task and session", map[string]any{"task_id": inheriting, "session_id": inheriting, "execution_id": "e-both"}, fault.InvalidInput, "session_id", nil},
		{"arguments not an object", map[string]any{"arguments": []any{1}, "execution_id": "e-args"}, fault.InvalidInput, "arguments", nil},
		{"no agent", map[string]any{"agent_id": nil, "execution_id": "e-noagent"}, fault.InvalidInput, "agent_id", nil},
		{"a bad tool name", map[string]any{"tool": "no spaces", "execution_id": "e-name"}, fault.InvalidInput, "tool", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := loadEvent(t, "events/prepare/input.json")
			ev["developer_id"], ev["agent_id"] = dev, agent
			for k, v := range tt.change {
				ev[k] = v
			}
			p, typ, msg := invoke(t, h.handler["prepare"], ev)
			execID := ev["execution_id"].(string)
			if tt.wantErr == "" {
				if typ != "" {
					t.Fatalf("error %s: %s", typ, msg)
				}
				if tt.check != nil {
					tt.check(t, p)
				}
				if rec := h.record(dev, execID); rec.Status != store.ExecRunning {
					t.Errorf("record status = %s, want running", rec.Status)
				}
				return
			}
			if typ != string(tt.wantErr) {
				t.Fatalf("error = %s %q, want %s", typ, msg, tt.wantErr)
			}
			// The same rule through the domain call names the field.
			var in workflow.PrepareInput
			b, _ := json.Marshal(ev)
			_ = json.Unmarshal(b, &in)
			in.ExecutionID += "-again"
			if _, err := h.svc.Prepare(h.ctx, in); fault.FieldOf(err) != tt.wantField {
				t.Errorf("field = %q (%v), want %q", fault.FieldOf(err), err, tt.wantField)
			}
			if rec := h.record(dev, execID); rec.Status != store.ExecFailed || rec.Error == nil {
				t.Errorf("record = %s %v, want failed with the error", rec.Status, rec.Error)
			}
		})
	}
}

func TestIDs(t *testing.T) {
	a, b := workflow.CallIDFor("dev", "exec-1"), workflow.CallIDFor("dev", "exec-2")
	if !tool.ValidCallID(a) || a == b || a != workflow.CallIDFor("dev", "exec-1") || a == workflow.CallIDFor("dev2", "exec-1") {
		t.Errorf("CallIDFor: %s %s", a, b)
	}
	n := workflow.IdempotentName("dev", "POST /tool-calls", "k")
	if !strings.HasPrefix(n, "idem-") || len(n) > 80 || n == workflow.IdempotentName("dev2", "POST /tool-calls", "k") ||
		n == workflow.IdempotentName("dev", "POST /tasks/{id}/executions", "k") || n != workflow.IdempotentName("dev", "POST /tool-calls", "k") {
		t.Errorf("IdempotentName: %s", n)
	}
}

func TestWaitOf(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	tests := []struct {
		name    string
		fn      *tool.FunctionDef
		timeout int64
		hb      *int64
		field   string
	}{
		{"default 31 days", &tool.FunctionDef{}, tool.DefaultFunctionTimeoutSeconds, nil, ""},
		{"set", &tool.FunctionDef{TimeoutSeconds: i(60), HeartbeatSeconds: i(10)}, 60, i(10), ""},
		{"heartbeat not under the timeout", &tool.FunctionDef{TimeoutSeconds: i(60), HeartbeatSeconds: i(60)}, 0, nil, "function.heartbeat_seconds"},
		{"over a year", &tool.FunctionDef{TimeoutSeconds: i(tool.MaxFunctionTimeoutSeconds + 1)}, 0, nil, "function.timeout_seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := workflow.WaitOf(&tool.Tool{Name: "f", Type: tool.TypeFunction, Function: tt.fn})
			if tt.field != "" {
				if err == nil || fieldOf(err) != tt.field {
					t.Errorf("err = %v, want one naming %s", err, tt.field)
				}
				return
			}
			if err != nil || *w.TimeoutSeconds != tt.timeout || (tt.hb == nil) != (w.HeartbeatSeconds == nil) || (tt.hb != nil && *tt.hb != *w.HeartbeatSeconds) {
				t.Errorf("WaitOf = %+v, %v", w, err)
			}
		})
	}
}
