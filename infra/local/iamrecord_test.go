package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sinew/internal/deploy"
	"sinew/internal/iamrec"
	"sinew/internal/localaws/localnames"
)

// TestIAMRecordToolCall runs an integration tool whose setup holds a developer secret through local
// mode with the IAM recording on, and finds each step's request under the principal that makes it
// in AWS: api seals the secret (GenerateDataKey under the secret's encryption context), tool_call's
// engine invokes the executor, integration unseals the secret (Decrypt, the alias resolved to its
// key) and records the outcome in the table; the same call answered in the request is started by
// api with StartSyncExecution, and tool_call_express's role invokes the executor.
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -count=1 -run TestIAMRecordToolCall ./infra/local/
func TestIAMRecordToolCall(t *testing.T) {
	rec := t.TempDir()
	t.Setenv(iamrec.EnvRecord, rec)
	p := startLocal(t, t.TempDir(), "--in-memory")
	dev := newClient(t, p, "dev-iam")
	dev.must(t, 201, "PUT", "/secrets/ECHO_TOKEN", map[string]any{"value": "tok-123456"})
	agent := dev.must(t, 201, "POST", "/agents", map[string]any{"name": "iam", "about": "recorded"})["id"].(string)
	dev.must(t, 201, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "echo", "type": "integration",
		"integration": map[string]any{"provider": "dummy", "setup": map[string]any{"token": map[string]any{"secret": "ECHO_TOKEN"}}}})
	id := dev.startCall(t, agent, "echo", map[string]any{"greeting": "hi"})
	if x, raw := dev.final(t, id); x["status"] != "succeeded" {
		t.Fatalf("the call = %s", raw)
	}
	// The same call answered in the request runs on tool_call_express.
	if x := dev.must(t, 200, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{}}); x["status"] != "succeeded" {
		t.Fatalf("the call in the request = %v", x)
	}
	// The status change reaches settle after the execution's end is shown.
	var rs []iamrec.Request
	eventually(t, "settle's invocation for the status change", func() bool {
		got, files, err := iamrec.ReadDir(rec)
		if err != nil || files != 1 {
			t.Fatalf("ReadDir = %d files, %v; want local mode's one", files, err)
		}
		rs = got
		return slices.ContainsFunc(rs, func(r iamrec.Request) bool { return r.PrincipalType == iamrec.PrincipalService })
	})
	p.stop(t)
	table := localnames.TableARN(localnames.Table)
	for _, tt := range []struct {
		name                      string
		principal, typ            string
		action, resourcePrefix    string
		contextKey, contextSubstr string // a condition key the request must carry, and part of its value
	}{
		{"api seals the secret", "api", iamrec.PrincipalFunction, "kms:GenerateDataKey", "arn:aws:kms:us-east-1:000000000000:key/", "kms:EncryptionContext:developer", "dev-iam"},
		{"api writes the secret", "api", iamrec.PrincipalFunction, "dynamodb:PutItem", table, "", ""},
		{"api starts tool_call", "api", iamrec.PrincipalFunction, "states:StartExecution", machineArn(deploy.ToolCall), "", ""},
		{"tool_call invokes the executor", deploy.ToolCall, iamrec.PrincipalStateMachine, "lambda:InvokeFunction", localnames.FunctionARN("integration"), "", ""},
		{"api starts tool_call_express", "api", iamrec.PrincipalFunction, "states:StartSyncExecution", machineArn(deploy.ToolCallExpress), "", ""},
		{"tool_call_express invokes the executor", deploy.ToolCallExpress, iamrec.PrincipalStateMachine, "lambda:InvokeFunction", localnames.FunctionARN("integration"), "", ""},
		{"integration unseals the secret", "integration", iamrec.PrincipalFunction, "kms:Decrypt", "arn:aws:kms:us-east-1:000000000000:key/", "kms:EncryptionContextKeys", "developer"},
		{"integration answers its token", "integration", iamrec.PrincipalFunction, "states:SendTaskSuccess", machineArn(deploy.ToolCall), "", ""},
		{"settle runs for the status change", "events.amazonaws.com", iamrec.PrincipalService, "lambda:InvokeFunction", localnames.FunctionARN("settle"), "aws:SourceArn", localnames.StatusChangeRule},
	} {
		t.Run(tt.name, func(t *testing.T) {
			i := slices.IndexFunc(rs, func(r iamrec.Request) bool {
				return r.Principal == tt.principal && r.PrincipalType == tt.typ && r.Action == tt.action &&
					strings.HasPrefix(r.Resource, tt.resourcePrefix) &&
					(tt.contextKey == "" || strings.Contains(toString(r.Context[tt.contextKey]), tt.contextSubstr))
			})
			if i < 0 {
				t.Fatalf("no %s request by %s %s on %s* with %s ~ %q among %d recorded:\n%s", tt.action, tt.typ, tt.principal,
					tt.resourcePrefix, tt.contextKey, tt.contextSubstr, len(rs), summary(rs))
			}
			if r := rs[i]; strings.HasPrefix(r.Action, "kms:") && !slices.Contains(r.KeyAliases, localnames.SecretsKeyAlias) {
				t.Errorf("%s: key aliases %v, want the secrets key's %s", r.Action, r.KeyAliases, localnames.SecretsKeyAlias)
			}
		})
	}
	for _, r := range rs {
		if r.PrincipalType == "" || r.Underived || r.Resource == "" {
			t.Errorf("a request the check could not evaluate: %+v", r)
		}
	}
	files2, _ := filepath.Glob(filepath.Join(rec, "*.jsonl"))
	for _, f := range files2 {
		if info, err := os.Stat(f); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want 0600: the lines name developers and resources", f, info.Mode(), err)
		}
	}
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var ss []string
		for _, s := range v {
			ss = append(ss, toString(s))
		}
		return strings.Join(ss, ",")
	}
	return ""
}

// summary is the distinct principal/action pairs of rs, for a failure's message.
func summary(rs []iamrec.Request) string {
	var lines []string
	for _, r := range rs {
		lines = append(lines, r.PrincipalType+" "+r.Principal+" "+r.Action+" "+r.Resource)
	}
	slices.Sort(lines)
	return strings.Join(slices.Compact(lines), "\n")
}
