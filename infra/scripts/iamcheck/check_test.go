package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheck runs the check over a real recording (testdata/records: TestIAMRecordToolCall's
// integration tool call whose setup holds a developer secret) and the synthesized template
// (testdata/sinew.template.json: make synth's, without the definitions, code, alarms and tags), as
// synthesized and with one grant broken: the check must fail naming the request each break denies.
//
//	go test -count=1 -run TestCheck ./infra/scripts/iamcheck/
func TestCheck(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH: the check runs @cloud-copilot/iam-simulate (make deps)")
	}
	const decrypt = "DENIED: kms:Decrypt on arn:aws:kms:us-east-1:000000000000:key/SecretsKey317DCF94 by function integration"
	tests := []struct {
		name   string
		break_ func(t *testing.T, tpl map[string]any)
		star   bool // -star-wildcard-only
		code   int
		want   []string
	}{
		{"as synthesized", nil, false, exitOK, []string{"19 AWS requests by 2 functions, 1 state machine and 1 service principal allowed; ",
			"note: states:SendTaskSuccess: AWS's Service Authorization Reference lists no resource type"}},
		{"SendTask* on Resource \"*\" as the reference says", nil, true, exitDenied, []string{"1 of 19 AWS requests",
			"DENIED: states:SendTaskSuccess on arn:aws:states:us-east-1:000000000000:stateMachine:tool_call by function integration",
			"(AnswerTaskToolCall): resource does not match"}},
		{"integration's role loses kms:Decrypt", func(t *testing.T, tpl map[string]any) {
			policy := rolePolicy(t, tpl, "sinew-integration")
			policy["Statement"] = slices.DeleteFunc(policy["Statement"].([]any), func(s any) bool { return s.(map[string]any)["Sid"] == "UnsealSecrets" })
		}, false, exitDenied, []string{"2 of 19 AWS requests", decrypt, "identity policies: ImplicitlyDenied"}},
		{"the key policy wants a context key the requests lack", func(t *testing.T, tpl map[string]any) {
			cond := keyStatement(t, tpl, "UnsealBy")["Condition"].(map[string]any)
			cond["Null"] = map[string]any{"kms:EncryptionContext:tenant": "false"}
		}, false, exitDenied, []string{decrypt, "condition Null kms:EncryptionContext:tenant fails (request: absent)"}},
		{"the key policy no longer allows the context key tool", func(t *testing.T, tpl map[string]any) {
			cond := keyStatement(t, tpl, "UnsealBy")["Condition"].(map[string]any)
			cond["ForAllValues:StringEquals"] = map[string]any{"kms:EncryptionContextKeys": []any{"developer", "owner", "field", "key"}}
		}, false, exitDenied, []string{decrypt, "condition ForAllValues:StringEquals kms:EncryptionContextKeys fails"}},
		{"the key policy names only apicall's role", func(t *testing.T, tpl map[string]any) {
			cond := keyStatement(t, tpl, "UnsealBy")["Condition"].(map[string]any)
			arns := cond["ArnEquals"].(map[string]any)["aws:PrincipalArn"].([]any)
			cond["ArnEquals"].(map[string]any)["aws:PrincipalArn"] = arns[1:]
		}, false, exitDenied, []string{decrypt, "resource policies: ImplicitlyDenied", "condition ArnEquals aws:PrincipalArn fails"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl := readTemplate(t)
			if tt.break_ != nil {
				tt.break_(t, tpl)
			}
			path := filepath.Join(t.TempDir(), "sinew.template.json")
			data, _ := json.Marshal(tpl)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			code, err := run(&out, options{template: path, records: []string{"testdata/records"}, node: node, script: scriptPath(), starWildcardOnly: tt.star})
			if err != nil || code != tt.code {
				t.Fatalf("exit %d, %v; want %d\n%s", code, err, tt.code, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestCheckWithoutInputs names what makes a missing template or missing records.
func TestCheckWithoutInputs(t *testing.T) {
	tests := []struct {
		name, template, records, want string
	}{
		{"no template", "testdata/none.template.json", "testdata/records", "make cdk-test (or make synth) writes it"},
		{"no records", "testdata/sinew.template.json", "testdata/none", "make unit and make demo record them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			code, err := run(&out, options{template: tt.template, records: []string{tt.records}, node: "node", script: scriptPath()})
			if code != exitUncheckable || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("exit %d, %v; want %d and an error saying %q", code, err, exitUncheckable, tt.want)
			}
		})
	}
}

func readTemplate(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("testdata/sinew.template.json")
	if err != nil {
		t.Fatal(err)
	}
	var tpl map[string]any
	if err := json.Unmarshal(data, &tpl); err != nil {
		t.Fatal(err)
	}
	return tpl
}

// rolePolicy is the policy document of the AWS::IAM::Policy attached to function fn's role that
// holds the description's permissions (its statements have Sids other than OwnLogs).
func rolePolicy(t *testing.T, tpl map[string]any, fn string) map[string]any {
	t.Helper()
	res := tpl["Resources"].(map[string]any)
	var role string
	for _, r := range res {
		r := r.(map[string]any)
		if props, _ := r["Properties"].(map[string]any); r["Type"] == "AWS::Lambda::Function" && props["FunctionName"] == fn {
			role = refID(props["Role"])
		}
	}
	for _, r := range res {
		r := r.(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		if r["Type"] != "AWS::IAM::Policy" || !slices.ContainsFunc(asList(props["Roles"]), func(v any) bool { return refID(v) == role }) {
			continue
		}
		doc := props["PolicyDocument"].(map[string]any)
		if slices.ContainsFunc(doc["Statement"].([]any), func(s any) bool { return s.(map[string]any)["Sid"] == "UnsealSecrets" }) {
			return doc
		}
	}
	t.Fatalf("no policy of %s's role grants UnsealSecrets", fn)
	return nil
}

// keyStatement is the key policy statement whose Sid starts with prefix.
func keyStatement(t *testing.T, tpl map[string]any, prefix string) map[string]any {
	t.Helper()
	for _, r := range tpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] != "AWS::KMS::Key" {
			continue
		}
		for _, s := range r["Properties"].(map[string]any)["KeyPolicy"].(map[string]any)["Statement"].([]any) {
			if sid, _ := s.(map[string]any)["Sid"].(string); strings.HasPrefix(sid, prefix) {
				return s.(map[string]any)
			}
		}
	}
	t.Fatalf("no key policy statement %s*", prefix)
	return nil
}
