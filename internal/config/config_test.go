package config

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"sinew/internal/fault"
)

func env(m map[string]string) LookupFunc {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoadDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatalf("Load with no environment: %v", err)
	}
	if c.Table != "sinew" || c.JWTClaim != "sub" || c.EventBus != "default" || !c.PendingEvents {
		t.Errorf("defaults: table=%q claim=%q bus=%q pending events %v", c.Table, c.JWTClaim, c.EventBus, c.PendingEvents)
	}
	if c.ChatBudget != 25*time.Second || c.MCPWait != 25*time.Second {
		t.Errorf("chat budget = %s, MCP wait = %s, want 25s", c.ChatBudget, c.MCPWait)
	}
	if c.MaxCallsPerReply != 32 || c.MaxCallsPerTurn != 128 {
		t.Errorf("call bounds %d per reply, %d per turn; want 32 and 128", c.MaxCallsPerReply, c.MaxCallsPerTurn)
	}
	if c.Model.Provider != "bedrock" || c.Model.Name == "" {
		t.Errorf("model = %+v, want a bedrock default", c.Model)
	}
	for _, f := range Flags {
		if v, ok := c.FlagDefaults[f]; !ok || v {
			t.Errorf("flag %s default = %v (present %v), want false", f, v, ok)
		}
	}
	for _, f := range Functions {
		if c.FunctionNames[f] != f {
			t.Errorf("function %s deployed name = %q, want the folder name", f, c.FunctionNames[f])
		}
	}
	if !c.APICallAllow.Empty() || len(c.ProviderBaseURLs) != 0 {
		t.Errorf("allow list and provider URLs should be empty by default: %+v %v", c.APICallAllow, c.ProviderBaseURLs)
	}
}

func TestLoadValues(t *testing.T) {
	c, err := Load(env(map[string]string{
		EnvTable:                "t1",
		EnvToolCallARN:          "arn:aws:states:us-east-1:1:stateMachine:tool_call",
		FunctionEnv("apicall"):  "sinew-apicall-x",
		EnvModel:                "openai:gpt-4o-mini",
		EnvOpenAIBaseURL:        "http://127.0.0.1:11434/v1/",
		EnvAPICallAllow:         " 127.0.0.1/32, ::1 ,localhost:8080,[::1]:9000",
		EnvFlagDefaults:         "auto_run_tools_chat=true",
		EnvJWTClaim:             "custom:dev",
		EnvChatBudget:           "12.5",
		EnvMaxCallsPerReply:     "8",
		EnvMaxCallsPerTurn:      "40",
		EnvPendingEvents:        "off",
		ProviderEnv("weather"):  "http://127.0.0.1:9999",
		ProviderEnv("mailgun"):  "",
		"SINEW_UNRELATED_THING": "x",
	}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Table != "t1" || c.FunctionNames["apicall"] != "sinew-apicall-x" || c.FunctionNames["api"] != "api" {
		t.Errorf("table/functions: %q %v", c.Table, c.FunctionNames)
	}
	if c.Model != (Model{"openai", "gpt-4o-mini"}) {
		t.Errorf("model = %+v", c.Model)
	}
	if c.OpenAIBaseURL != "http://127.0.0.1:11434/v1" {
		t.Errorf("openai base url = %q (trailing slash should go)", c.OpenAIBaseURL)
	}
	for _, tc := range []struct {
		host string
		ip   string
		port uint16
		want bool
	}{
		{"", "127.0.0.1", 1, true},
		{"", "::1", 443, true},
		{"localhost", "127.0.0.2", 8080, true},
		{"localhost", "127.0.0.2", 8081, false},
		{"", "10.0.0.1", 80, false},
	} {
		if got := c.APICallAllow.Allows(tc.host, netip.MustParseAddr(tc.ip), tc.port); got != tc.want {
			t.Errorf("allow list: Allows(%q, %s, %d) = %v, want %v", tc.host, tc.ip, tc.port, got, tc.want)
		}
	}
	if !c.FlagDefaults[FlagAutoRunToolsChat] || c.FlagDefaults[FlagAutoToolCallsPromptStep] {
		t.Errorf("flags = %v", c.FlagDefaults)
	}
	if c.PendingEvents {
		t.Error("SINEW_PENDING_EVENTS=off: pending events still on")
	}
	if c.MaxCallsPerReply != 8 || c.MaxCallsPerTurn != 40 {
		t.Errorf("call bounds %d, %d; want 8 and 40", c.MaxCallsPerReply, c.MaxCallsPerTurn)
	}
	if c.JWTClaim != "custom:dev" || c.ChatBudget != 12500*time.Millisecond {
		t.Errorf("claim %q budget %s", c.JWTClaim, c.ChatBudget)
	}
	if c.ProviderBaseURLs["weather"] != "http://127.0.0.1:9999" || len(c.ProviderBaseURLs) != 1 {
		t.Errorf("provider urls = %v", c.ProviderBaseURLs)
	}
}

func TestLoadInvalid(t *testing.T) {
	tests := []struct {
		name, variable, value string
		wantInMsg             string
	}{
		{"flag set twice", EnvFlagDefaults, "auto_run_tools_chat=true,auto_run_tools_chat=false", "more than once"},
		{"unknown flag", EnvFlagDefaults, "name=true", `unknown flag "name"`},
		{"flag not bool", EnvFlagDefaults, "auto_run_tools_chat=yes", "true or false"},
		{"flag without value", EnvFlagDefaults, "auto_run_tools_chat", "name=true"},
		{"bad cidr", EnvAPICallAllow, "10.0.0.0/33", "10.0.0.0/33"},
		{"host without port", EnvAPICallAllow, "example.com", "example.com"},
		{"port zero", EnvAPICallAllow, "example.com:0", "example.com:0"},
		{"port too big", EnvAPICallAllow, "example.com:70000", "example.com:70000"},
		{"budget not a number", EnvChatBudget, "soon", "number of seconds"},
		{"calls per reply zero", EnvMaxCallsPerReply, "0", "from 1 to 1000"},
		{"calls per reply too many", EnvMaxCallsPerReply, "1001", "from 1 to 1000"},
		{"calls per turn not a number", EnvMaxCallsPerTurn, "lots", "from 1 to 1500"},
		{"budget zero", EnvChatBudget, "0", "less than 30"},
		{"budget at limit", EnvChatBudget, "30", "less than 30"},
		{"budget negative", EnvChatBudget, "-1", "less than 30"},
		{"budget NaN", EnvChatBudget, "NaN", "number of seconds"},
		{"mcp wait at limit", EnvMCPWait, "30", "SINEW_MCP_WAIT_S=\"30\": want more than 0 and less than 30"},
		{"mcp wait not a number", EnvMCPWait, "1m", "number of seconds"},
		{"pending events neither on nor off", EnvPendingEvents, "yes", "want on or off"},
		{"model no provider", EnvModel, "claude", "bedrock:<model id>"},
		{"model unknown provider", EnvModel, "vertex:gemini", "bedrock:<model id>"},
		{"model empty name", EnvModel, "openai:", "bedrock:<model id>"},
		{"openai url relative", EnvOpenAIBaseURL, "localhost:11434", "absolute http or https"},
		{"provider url ftp", ProviderEnv("brave"), "ftp://x", "absolute http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(env(map[string]string{tt.variable: tt.value}))
			if err == nil {
				t.Fatalf("%s=%q: want an error", tt.variable, tt.value)
			}
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tt.variable {
				t.Errorf("error kind %s field %q, want InvalidInput naming %s", fault.KindOf(err), fault.FieldOf(err), tt.variable)
			}
			if !strings.Contains(err.Error(), tt.wantInMsg) || !strings.Contains(err.Error(), tt.variable) {
				t.Errorf("message %q should name %s and contain %q", err.Error(), tt.variable, tt.wantInMsg)
			}
		})
	}
}

func TestLoadReportsEveryProblem(t *testing.T) {
	_, err := Load(env(map[string]string{EnvChatBudget: "x", EnvModel: "y", EnvAPICallAllow: "z"}))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, v := range []string{EnvChatBudget, EnvModel, EnvAPICallAllow} {
		if !strings.Contains(err.Error(), v) {
			t.Errorf("error %q does not name %s", err, v)
		}
	}
}

func TestNeed(t *testing.T) {
	c, err := Load(env(map[string]string{EnvToolCallARN: "arn:x"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Need(EnvToolCallARN, EnvTable); err != nil {
		t.Errorf("Need of set variables: %v", err)
	}
	err = c.Need(EnvToolCallARN, EnvAgentLoopARN, EnvSecretsKey)
	if err == nil || !strings.Contains(err.Error(), EnvAgentLoopARN+", "+EnvSecretsKey) {
		t.Errorf("Need should name both missing variables, got %v", err)
	}
	if err := c.Need(EnvJWTClaim); !fault.Is(err, fault.Internal) {
		t.Errorf("Need of a variable with a default is a programming error, got %v", err)
	}
}

func TestVariablesDocumentEverything(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range Variables() {
		if seen[v.Name] {
			t.Errorf("%s listed twice", v.Name)
		}
		seen[v.Name] = true
		if !strings.HasPrefix(v.Name, "SINEW_") || v.Doc == "" || strings.Contains(v.Doc, "\n") {
			t.Errorf("%s: want a SINEW_ name and a one-line doc, got %+v", v.Name, v)
		}
	}
	for _, n := range []string{EnvTable, EnvToolCallARN, EnvAgentLoopARN, EnvModel, EnvOpenAIBaseURL, EnvOpenAIKey,
		EnvAPICallAllow, EnvFlagDefaults, EnvJWTClaim, EnvChatBudget, EnvSecretsKey, EnvEventBus,
		FunctionEnv("apicall"), ProviderEnv("weather")} {
		if !seen[n] {
			t.Errorf("%s is not documented by Variables", n)
		}
	}
	if FunctionEnv("apicall") != "SINEW_FUNCTION_APICALL" {
		t.Errorf("FunctionEnv(apicall) = %s", FunctionEnv("apicall"))
	}
	// The documented defaults must themselves parse: Load with every default set explicitly.
	m := map[string]string{}
	for _, v := range Variables() {
		m[v.Name] = v.Default
	}
	if _, err := Load(env(m)); err != nil {
		t.Errorf("the documented defaults do not parse: %v", err)
	}
}
