package system

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"sinew/internal/executor"
	"sinew/internal/handler"
	"sinew/internal/lambdaboundary"
	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	systempkg "sinew/internal/system"
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
	h := lambdaboundary.Handler(executor.Handler(&executor.System{System: &systempkg.Executor{Resources: &resources.Service{Store: st}}}, nil))
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
	if res.ID != call.ID || res.Type != "system" || res.Name != "get_agent" || res.Output["id"] != agent.ID || res.Output["name"] != "helper" {
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

// TestFromEnvRunsSessionChat: the system function as deployed (built from the environment) runs
// session.chat through the chat service, one level deeper, and refuses it past the depth bound.
func TestFromEnvRunsSessionChat(t *testing.T) {
	db := ddblocal.Client(t)
	table := ddblocal.NewTable(t, db)
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"expect":{"last_role":"user","contains":"ping"},"reply":{"content":"pong from the agent"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"SINEW_TABLE": table, "AWS_ENDPOINT_URL_DYNAMODB": ddblocal.Endpoint(t), "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_EC2_METADATA_DISABLED": "true",
		"SINEW_MODEL": "scripted:" + script, "SINEW_AGENT_LOOP_ARN": "arn:aws:states:us-east-1:000000000000:stateMachine:agent_loop",
	} {
		t.Setenv(k, v)
	}
	ctx := context.Background()
	h, err := New(ctx, handler.Env{})
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(db, table, nil)
	agent, err := st.CreateAgent(ctx, "dev-1", store.Agent{Name: "helper", Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.CreateSession(ctx, "dev-1", store.Session{AgentID: agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	def := tool.Tool{Name: "ask", Type: tool.TypeSystem, System: &tool.SystemDef{Resource: "session", Operation: "chat"}}
	invoke := func(dev string, depth int) ([]byte, *messages.InvokeResponse_Error) {
		call := tool.NewCall(&def, tool.NewCallID(), map[string]any{"session_id": sess.ID, "messages": []any{map[string]any{"role": "user", "content": "ping"}}})
		b, err := json.Marshal(map[string]any{"call": call, "tool": def,
			"context": map[string]any{"developer_id": dev, "agent_id": nil, "task_id": nil, "session_id": nil, "execution_id": "e1", "depth": depth}})
		if err != nil {
			t.Fatal(err)
		}
		return lambdaboundary.Invoke(ctx, h, b)
	}
	out, ierr := invoke("dev-1", 0)
	if ierr != nil {
		t.Fatalf("session.chat: %+v", ierr)
	}
	if !strings.Contains(string(out), "pong from the agent") {
		t.Errorf("session.chat result %s", out)
	}
	msgs, err := st.ListMessages(ctx, "dev-1", sess.ID, store.Page{Limit: 10})
	if err != nil || len(msgs.Items) != 2 {
		t.Errorf("history after session.chat: %+v %v", msgs, err)
	}
	// Another developer's session is not found; a call already at the bound is refused.
	if _, ierr := invoke("dev-2", 0); ierr == nil || ierr.Type != "Sinew.NotFound" {
		t.Errorf("another developer: %+v", ierr)
	}
	if _, ierr := invoke("dev-1", systempkg.DefaultMaxDepth); ierr == nil || ierr.Type != "Sinew.InvalidInput" || !strings.Contains(ierr.Message, "limited to") {
		t.Errorf("at the depth bound: %+v", ierr)
	}
}

// TestSameCallRunsOnce: a repeated invocation of one call (a Lambda retry) answers the first run's
// result and does not write twice; another call id runs again.
func TestSameCallRunsOnce(t *testing.T) {
	db := ddblocal.Client(t)
	st := store.New(db, ddblocal.NewTable(t, db), nil)
	h := lambdaboundary.Handler(executor.Handler(&executor.System{System: &systempkg.Executor{Resources: &resources.Service{Store: st}}}, nil))
	def := tool.Tool{Name: "make_agent", Type: tool.TypeSystem, System: &tool.SystemDef{Resource: "agent", Operation: "create"}}
	invoke := func(c tool.Call) map[string]any {
		b, err := json.Marshal(map[string]any{"call": c, "tool": def,
			"context": map[string]any{"developer_id": "dev-1", "agent_id": nil, "task_id": nil, "session_id": nil, "execution_id": "e1", "depth": 0}})
		if err != nil {
			t.Fatal(err)
		}
		out, ierr := lambdaboundary.Invoke(context.Background(), h, b)
		if ierr != nil {
			t.Fatalf("agent.create: %+v", ierr)
		}
		var res struct{ Output map[string]any }
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		return res.Output
	}
	call := tool.NewCall(&def, tool.NewCallID(), map[string]any{"name": "once"})
	first, again := invoke(call), invoke(call)
	if first["id"] == nil || first["id"] != again["id"] {
		t.Errorf("the repeated call answered %v, the first %v", again["id"], first["id"])
	}
	other := invoke(tool.NewCall(&def, tool.NewCallID(), map[string]any{"name": "once"}))
	if other["id"] == first["id"] {
		t.Error("another call id answered the first call's agent")
	}
	list, err := st.ListAgents(context.Background(), "dev-1", store.Page{Limit: 10})
	if err != nil || len(list.Items) != 2 {
		t.Errorf("agents after two calls (one repeated): %d %v", len(list.Items), err)
	}
}
