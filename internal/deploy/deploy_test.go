package deploy

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"sinew/internal/config"
)

// moduleRoot walks up from the package directory to go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package directory")
		}
		dir = parent
	}
}

// TestStateMachinePlaceholders checks each definition file uses exactly the placeholders described.
func TestStateMachinePlaceholders(t *testing.T) {
	root := moduleRoot(t)
	for _, m := range StateMachines() {
		t.Run(m.Name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(root, m.File))
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(raw) {
				t.Fatalf("%s is not valid JSON", m.File)
			}
			if err := m.CheckPlaceholders(raw); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestCheckPlaceholdersAndRender(t *testing.T) {
	m := StateMachine{Name: "demo", File: "statemachines/demo.asl.json", Substitutions: []Substitution{
		{Placeholder: "PrepareFunctionArn", Value: Value{Kind: FunctionARN, Target: "prepare"}},
		{Placeholder: "TableName", Value: Value{Kind: TableName}},
	}}
	good := []byte(`{"StartAt":"P","States":{"P":{"Type":"Task","Resource":"${PrepareFunctionArn}","Parameters":{"t":"${TableName}","u":"${TableName}"},"End":true}}}`)
	resolve := func(v Value) (string, error) {
		if v.Kind == FunctionARN {
			return "arn:aws:lambda:us-east-1:000000000000:function:" + v.Target, nil
		}
		return `odd"name`, nil
	}
	out, err := m.Render(good, resolve)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	want := `{"StartAt":"P","States":{"P":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:000000000000:function:prepare","Parameters":{"t":"odd\"name","u":"odd\"name"},"End":true}}}`
	if string(out) != want || !json.Valid(out) {
		t.Errorf("Render =\n%s\nwant\n%s", out, want)
	}

	tests := []struct {
		name, def string
		want      []string
	}{
		{"undefined used", `{"a":"${PrepareFunctionArn}","b":"${TableName}","c":"${Other}"}`, []string{"uses ${Other}"}},
		{"defined unused", `{"a":"${PrepareFunctionArn}"}`, []string{"defines ${TableName}"}},
		{"both", `{"a":"${X}"}`, []string{"uses ${X}", "defines ${PrepareFunctionArn}", "defines ${TableName}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.CheckPlaceholders([]byte(tt.def))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if _, err := m.Render([]byte(tt.def), resolve); err == nil {
				t.Error("Render of a mismatched definition should fail")
			}
		})
	}
	if _, err := m.Render(good, func(Value) (string, error) { return "", errors.New("no table") }); err == nil || !strings.Contains(err.Error(), "no table") {
		t.Errorf("Render should pass on resolve's error, got %v", err)
	}
}

// TestFunctionFolders checks every folder under functions/ is described, and reports described
// functions whose folder is still to come.
func TestFunctionFolders(t *testing.T) {
	root := moduleRoot(t)
	entries, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		present[e.Name()] = true
		if _, ok := FunctionByName(e.Name()); !ok {
			t.Errorf("functions/%s is not described in internal/deploy", e.Name())
		}
		if _, err := os.Stat(filepath.Join(root, "functions", e.Name(), "main.go")); err != nil {
			t.Errorf("functions/%s has no main.go", e.Name())
		}
	}
	for _, f := range Functions() {
		if !present[f.Name] {
			t.Logf("functions/%s is described but not written yet", f.Name)
		}
	}
}

func TestDescriptionConsistent(t *testing.T) {
	fns := Functions()
	var names []string
	for _, f := range fns {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, config.Functions) {
		t.Errorf("functions %v differ from config.Functions %v", names, config.Functions)
	}
	known := map[string]bool{}
	for _, v := range config.Variables() {
		known[v.Name] = true
	}
	machines := map[string]bool{}
	for _, m := range StateMachines() {
		machines[m.Name] = true
	}
	for _, f := range fns {
		if f.Purpose == "" || f.MemoryMB < 128 || f.MemoryMB > 10240 || f.Timeout <= 0 || f.Timeout > 900*time.Second {
			t.Errorf("%s: purpose %q, memory %d MB, timeout %s out of Lambda's bounds", f.Name, f.Purpose, f.MemoryMB, f.Timeout)
		}
		if (slices.Contains(f.Triggers, TriggerHTTP) || slices.Contains(f.Triggers, TriggerHTTPChat)) && f.Timeout > MaxHTTPTimeout {
			t.Errorf("%s serves HTTP but may run %s, past API Gateway's %s", f.Name, f.Timeout, MaxHTTPTimeout)
		}
		env := map[string]bool{}
		for _, e := range f.Env {
			if !known[e] {
				t.Errorf("%s gets %s, which config does not know", f.Name, e)
			}
			if env[e] {
				t.Errorf("%s gets %s twice", f.Name, e)
			}
			env[e] = true
		}
		if !env[config.EnvTable] {
			t.Errorf("%s does not get %s", f.Name, config.EnvTable)
		}
		for _, p := range f.Permissions {
			switch p.Action {
			case TableRead, TableWrite:
				if len(p.Items) == 0 || p.Target != "" {
					t.Errorf("%s: %s needs item kinds and no target: %+v", f.Name, p.Action, p)
				}
			case InvokeFunction:
				if _, ok := FunctionByName(p.Target); !ok {
					t.Errorf("%s invokes unknown function %q", f.Name, p.Target)
				}
				// A function it invokes is found by its deployed name.
				if !env[config.FunctionEnv(p.Target)] {
					t.Errorf("%s invokes %s but does not get %s", f.Name, p.Target, config.FunctionEnv(p.Target))
				}
			case StartExecution, ManageExecution, DescribeExecution, SendTaskResult, AnswerOwnTask:
				if !machines[p.Target] {
					t.Errorf("%s: %s on unknown state machine %q", f.Name, p.Action, p.Target)
				}
				if p.Action == StartExecution {
					want := map[string]string{ToolCall: config.EnvToolCallARN, AgentLoop: config.EnvAgentLoopARN}[p.Target]
					if !env[want] {
						t.Errorf("%s starts %s but does not get %s", f.Name, p.Target, want)
					}
				}
			default:
				if p.Target != "" || len(p.Items) != 0 {
					t.Errorf("%s: %s takes no target or items: %+v", f.Name, p.Action, p)
				}
			}
		}
		// What the function is told about must be usable: a key it gets, it may use; a bus, it may
		// put to; a model, it may call.
		if env[config.EnvSecretsKey] && !f.Allows(SecretsKeyEncrypt, "") && !f.Allows(SecretsKeyDecrypt, "") {
			t.Errorf("%s gets the secrets key but may not use it", f.Name)
		}
		if env[config.EnvEventBus] != f.Allows(PutEvents, "") {
			t.Errorf("%s: event bus variable and events:put permission disagree", f.Name)
		}
		if env[config.EnvModel] != f.Allows(BedrockInvoke, "") {
			t.Errorf("%s: model variable and bedrock:invoke permission disagree", f.Name)
		}
	}
	// Only the integration and apicall roles may decrypt setup secrets.
	var decrypters []string
	for _, f := range fns {
		if f.Allows(SecretsKeyDecrypt, "") {
			decrypters = append(decrypters, f.Name)
		}
	}
	sort.Strings(decrypters)
	if !slices.Equal(decrypters, []string{"apicall", "integration"}) {
		t.Errorf("functions that may decrypt secrets: %v, want only apicall and integration", decrypters)
	}
	// Exactly one function serves each kind of trigger.
	for _, tr := range []Trigger{TriggerHTTP, TriggerHTTPChat, TriggerExecutionChanged, TriggerSweep} {
		var n int
		for _, f := range fns {
			if slices.Contains(f.Triggers, tr) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d functions have trigger %s, want 1", n, tr)
		}
	}
	for _, m := range StateMachines() {
		if m.File != "statemachines/"+m.Name+".asl.json" || m.Type != "STANDARD" {
			t.Errorf("%s: file %s type %s", m.Name, m.File, m.Type)
		}
		seen := map[string]bool{}
		for _, s := range m.Substitutions {
			if seen[s.Placeholder] {
				t.Errorf("%s defines ${%s} twice", m.Name, s.Placeholder)
			}
			seen[s.Placeholder] = true
			if s.Value.Kind == FunctionARN {
				if _, ok := FunctionByName(s.Value.Target); !ok {
					t.Errorf("%s: ${%s} names unknown function %q", m.Name, s.Placeholder, s.Value.Target)
				}
			}
		}
	}
}

func TestValueOf(t *testing.T) {
	tests := []struct {
		name string
		want Value
	}{
		{config.EnvTable, Value{Kind: TableName}},
		{config.EnvToolCallARN, Value{Kind: StateMachineARN, Target: ToolCall}},
		{config.EnvAgentLoopARN, Value{Kind: StateMachineARN, Target: AgentLoop}},
		{config.FunctionEnv("apicall"), Value{Kind: FunctionName, Target: "apicall"}},
		{config.EnvSecretsKey, Value{Kind: SecretsKeyID}},
		{config.EnvEventBus, Value{Kind: EventBusName}},
		{config.EnvModel, Value{Kind: OperatorSetting}},
		{config.ProviderEnv("brave"), Value{Kind: OperatorSetting}},
	}
	for _, tt := range tests {
		if got := ValueOf(tt.name); got != tt.want {
			t.Errorf("ValueOf(%s) = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestInvokersAreShort: a function that invokes another may run at most MaxInvokerTimeout, so none
// is described to wait long on another (the CDK's TestNoLongFunctionWaitsOnAnother holds the
// template to the same rule).
func TestInvokersAreShort(t *testing.T) {
	for _, f := range Functions() {
		for _, p := range f.Permissions {
			if p.Action != InvokeFunction {
				continue
			}
			if _, ok := FunctionByName(p.Target); !ok {
				t.Errorf("%s invokes %s, which is not described", f.Name, p.Target)
			}
			if f.Timeout > MaxInvokerTimeout {
				t.Errorf("%s invokes %s and may run %v, over %v", f.Name, p.Target, f.Timeout, MaxInvokerTimeout)
			}
		}
	}
}
