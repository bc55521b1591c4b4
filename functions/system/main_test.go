package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	syshandler "sinew/internal/handlers/system"
	"sinew/internal/lambdaboundary"
	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/system"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/tool"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

// TestHandler invokes the handler as the Lambda runtime does (JSON in, JSON or a named error out)
// against DynamoDB Local.
func TestHandler(t *testing.T) {
	db := ddblocal.Client(t)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(db, ddblocal.NewTable(t, db), sl)
	h := lambdaboundary.Handler(syshandler.New(&system.Executor{Resources: &resources.Service{Store: st}}))
	agent, err := st.CreateAgent(context.Background(), "dev-1", store.Agent{Name: "helper"})
	if err != nil {
		t.Fatal(err)
	}

	def := tool.Tool{Name: "get_agent", Type: tool.TypeSystem, System: &tool.SystemDef{Resource: "agent", Operation: "get",
		Arguments: map[string]any{"agent_id": "0190a0a0-0000-7000-8000-000000000000"}}}
	call := tool.NewCall(&def, tool.NewCallID(), map[string]any{"agent_id": agent.ID}) // the call overrides the default
	ev := func(c tool.Call, dev string) []byte {
		b, err := json.Marshal(map[string]any{"call": c, "tool": def,
			"context": map[string]any{"developer_id": dev, "agent_id": nil, "task_id": nil, "session_id": nil, "execution_id": "e1", "depth": 0}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	out, ierr := lambdaboundary.Invoke(context.Background(), h, ev(call, "dev-1"))
	if ierr != nil {
		t.Fatalf("error %+v", ierr)
	}
	var res struct {
		ID, Type, Name string
		Output         map[string]any
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if res.ID != call.ID || res.Type != "system" || res.Name != "agent.get" || res.Output["id"] != agent.ID || res.Output["name"] != "helper" {
		t.Errorf("result %s", out)
	}

	// Failures are Lambda errors with the fixed names.
	for _, tc := range []struct {
		name, dev, want string
		call            tool.Call
	}{
		{"another developer", "dev-2", "Sinew.NotFound", call},
		{"unsupported", "dev-1", "Sinew.InvalidInput", tool.NewCall(&tool.Tool{Name: "x", Type: tool.TypeSystem, System: &tool.SystemDef{Resource: "job", Operation: "get"}}, tool.NewCallID(), nil)},
		{"not a system call", "dev-1", "Sinew.InvalidInput", tool.NewCall(&tool.Tool{Name: "f", Type: tool.TypeFunction, Function: &tool.FunctionDef{}}, tool.NewCallID(), nil)},
		{"bad call id", "dev-1", "Sinew.InvalidInput", tool.Call{ID: "nope", Type: tool.TypeSystem, System: call.System}},
		{"no developer", "", "Sinew.InvalidInput", call},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ierr := lambdaboundary.Invoke(context.Background(), h, ev(tc.call, tc.dev))
			if ierr == nil || ierr.Type != tc.want {
				t.Fatalf("error %+v, want %s", ierr, tc.want)
			}
			if tc.name == "unsupported" && !strings.Contains(ierr.Message, "job.get is not supported") {
				t.Errorf("message %q", ierr.Message)
			}
		})
	}
}
