package workflow_test

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/merge"
	"sinew/internal/secrets/secretstest"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// The setup values of TestSetupSecretsNeverLeak: each must appear in no history, output, log line or
// API answer, in any encoding.
const (
	leakMetaSetup  = "int-setup-KEY-7f3a91"   // the agent's x-integration-setup
	leakToolSetup  = "tool-setup-TOKEN-c24e"  // the stored tool's integration.setup
	leakDevSecret  = "dev-secret-PW-88d0"     // a developer secret referenced from setup
	leakAPIToken   = "api-token-VALUE-51b9"   // a developer secret in an api_call header
	leakMetaHeader = "meta-header-VALUE-e6d2" // an x-api_call-setup header
)

type carelessArgs struct {
	Mode string `json:"mode,omitempty"`
}

// careless is a provider that does what a third-party library might: it logs its setup, and its
// refusal quotes the key it was given. It answers only whether each setting arrived resolved.
func careless() *integrations.Provider {
	return &integrations.Provider{Name: "mailgun", FriendlyName: "Careless (test)", Methods: []*integrations.Method{
		integrations.NewMethod("use", "logs its setup", func(ctx context.Context, _ integrations.Env, setup map[string]any, a carelessArgs) (map[string]any, error) {
			slog.InfoContext(ctx, "careless provider connecting", "setup", setup, "key", setup["api_key"])
			slog.WarnContext(ctx, "careless token "+setup["token"].(string))
			if a.Mode == "fail" {
				return nil, fault.New(fault.Provider, "the service refused key %v with password %v", setup["api_key"], setup["password"])
			}
			return map[string]any{
				"api_key":  setup["api_key"] == leakMetaSetup,
				"token":    setup["token"] == leakToolSetup,
				"password": setup["password"] == leakDevSecret,
			}, nil
		}),
	}}
}

// TestSetupSecretsNeverLeak runs a call of every tool type beside setup that holds known values
// (metadata setup, a stored tool's setup, developer secrets referenced from setup and from an
// api_call header), through the state machine with the executors in process, one of each executor failing
// with a message that quotes the values. None may appear in the executions' history events or
// output, the logs written through the executors' redacting handler, or the API's answers.
func TestSetupSecretsNeverLeak(t *testing.T) {
	h := newHarness(t)
	logs := &secretstest.Logs{}
	prev := slog.Default()
	slog.SetDefault(logs.Logger(h.red))
	t.Cleanup(func() { slog.SetDefault(prev) })

	const dev = "dev-leak"
	for name, v := range map[string]string{"CARELESS_PW": leakDevSecret, "API_TOKEN": leakAPIToken} {
		if _, err := h.store.PutSecret(h.ctx, dev, name, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	a, err := h.store.CreateAgent(h.ctx, dev, store.Agent{Name: "leaky", Metadata: map[string]any{
		merge.KeyIntegrationSetup: map[string]any{"careless": map[string]any{"api_key": leakMetaSetup, "password": map[string]any{"secret": "CARELESS_PW"}}},
		merge.KeyAPICallSetup:     map[string]any{"secure": map[string]any{"headers": map[string]any{"X-Meta": leakMetaHeader}}, "refused": map[string]any{"headers": map[string]any{"X-Meta": leakMetaHeader}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	owner := store.Owner{Kind: store.OwnerAgent, ID: a.ID}
	tl, err := h.store.CreateTool(h.ctx, dev, owner, tool.Tool{Name: "careless", Type: tool.TypeIntegration,
		Integration: &tool.IntegrationDef{Provider: "mailgun", Method: "use", Setup: map[string]any{"token": leakToolSetup}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"secure": "/secure", "refused": "/echo-auth"} {
		h.tool(dev, owner, `{"name":"`+name+`","type":"api_call","api_call":{"method":"GET","url":"`+h.api.URL+path+
			`","headers":{"Authorization":"$ f'Bearer {secrets.API_TOKEN}'"}}}`)
	}

	// The other two tool types run beside the same metadata: a system call that reads the agent
	// (the answer carries the metadata's setup keys), and a function tool that
	// pauses with the call's envelope in its pending record.
	h.withSystem()
	h.tool(dev, owner, `{"name":"read_agent","type":"system","system":{"resource":"agent","operation":"get"}}`)
	h.tool(dev, owner, `{"name":"ask_client","type":"function","function":{"parameters":{"type":"object"}}}`)

	hay := secretstest.Haystacks{}
	runs := []struct {
		name, tool string
		args       map[string]any
	}{
		{"exec-careless", "careless", map[string]any{}},
		{"exec-careless-fails", "careless", map[string]any{"mode": "fail"}}, // the refusal quotes setup
		{"exec-secure", "secure", map[string]any{}},
		{"exec-refused", "refused", map[string]any{}}, // the service's 403 body echoes the headers
		{"exec-system-agent", "read_agent", map[string]any{"agent_id": a.ID}},
		{"exec-function", "ask_client", map[string]any{"q": "ok?"}},
	}
	for _, r := range runs {
		x := h.start(r.name, map[string]any{"developer_id": dev, "agent_id": a.ID, "tool": r.tool, "arguments": r.args})
		if r.tool == "ask_client" {
			pc := h.pending(dev, r.name)
			_, calls := h.do(dev, "GET", "/calls?status=pending", nil)
			hay.Add("GET /calls while "+r.name+" waits", jsonString(calls))
			hay.Add("pending record of "+r.name, jsonString(pc))
			if err := h.eng.SendTaskSuccess(pc.TaskToken, `{"answer":"yes"}`); err != nil {
				t.Fatal(err)
			}
		}
		d := h.wait(x)
		out := output(t, d)
		switch r.name {
		case "exec-system-agent":
			// The system answer holds the setup keys, redacted: the check below is not vacuous.
			if s := jsonString(out["output"]); out["error"] != nil || !strings.Contains(s, "redacted") || !strings.Contains(s, "api_key") {
				t.Errorf("%s: output %v, want the agent's setup redacted", r.name, out)
			}
		case "exec-function":
			jsonEqual(t, r.name+" output", out["output"], map[string]any{"answer": "yes"})
		case "exec-careless":
			// The merged setup reached the provider resolved: the leak check below is not vacuous.
			jsonEqual(t, r.name+" output", out["output"], map[string]any{"api_key": true, "token": true, "password": true})
		case "exec-secure":
			res, _ := out["output"].(map[string]any)
			jsonEqual(t, r.name+" response", res["json"], map[string]any{"authorized": true, "meta": true})
		default:
			if e, _ := out["error"].(map[string]any); e["type"] != string(fault.Provider) {
				t.Errorf("%s: output %v, want a Sinew.Provider error", r.name, out)
			}
		}
		hay.Add("history of "+r.name, jsonString(x.History()))
		hay.Add("output of "+r.name, d.Output)
		code, body := h.do(dev, "GET", "/executions/"+r.name, nil)
		if code != 200 {
			t.Errorf("GET /executions/%s = %d %v", r.name, code, body)
		}
		hay.Add("GET /executions/"+r.name, jsonString(body))
		h.statusChange(x) // the settle Lambda's path too
	}
	code, body := h.do(dev, "GET", "/executions", nil)
	hay.Addf("GET /executions", "%d %s", code, jsonString(body))
	// What the API answers for the agent and the tool: the keys, never the values.
	ga, err := h.store.GetAgent(h.ctx, dev, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	gt, err := h.store.GetTool(h.ctx, dev, owner, tl.ID)
	if err != nil {
		t.Fatal(err)
	}
	hay.Add("agent as answered", jsonString(ga))
	hay.Add("tool as answered", jsonString(gt))
	hay.Add("table", secretstest.DumpTable(t, h.db, h.table))
	hay.Add("logs", logs.String())

	// The provider did log its setup: the redacting handler is what kept the values out.
	if !strings.Contains(logs.String(), "careless provider connecting") || strings.Count(logs.String(), "<redacted>") < 3 {
		t.Errorf("the careless provider's log lines are missing or not redacted: %s", logs.String())
	}
	values := []string{leakMetaSetup, leakToolSetup, leakDevSecret, leakAPIToken, leakMetaHeader}
	secretstest.AssertNoLeak(t, hay, values)
	if len(hay) != 3*len(runs)+5+2 {
		t.Errorf("searched %d haystacks, want %d: %v", len(hay), 3*len(runs)+5+2, slices.Sorted(maps.Keys(hay)))
	}
}
