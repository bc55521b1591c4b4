package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sinew/internal/testenv/localmode"
)

// emulator finds the Lambda Runtime Interface Emulator, installing the pinned version through the
// Go module proxy when it is not on PATH (a missing emulator fails: a skip would hide that nothing ran).
func emulator(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	gobin := filepath.Join(os.TempDir(), "sinew-rie-bin")
	bin := filepath.Join(gobin, "aws-lambda-rie")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	// The module path of infra/local's RIEModule (package main there cannot be imported).
	cmd := exec.Command("go", "install", "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d")
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("installing the Runtime Interface Emulator: %v\n%s", err, out)
	}
	return bin
}

// startWithLambdaTool runs local mode with testdata/lambdatool registered as function name.
func startWithLambdaTool(t *testing.T, name string) *local {
	t.Helper()
	dir := t.TempDir()
	boot := filepath.Join(dir, "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", boot, "./testdata/lambdatool")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the developer's function: %v\n%s", err, out)
	}
	lp, err := localmode.Start(binPath, filepath.Join(dir, "data"),
		[]string{"--root", "../..", "--rie-bin", emulator(t), "--lambda-tool", name + "=" + boot}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		lp.Kill()
		if t.Failed() {
			t.Logf("local mode's log (last 4 KiB):\n%s", tail(lp.Stderr.String(), 4096))
		}
	})
	return &local{lp}
}

// TestLambdaTool: a developer's Lambda function (its real bootstrap under the emulator) as an
// aws_lambda tool, through local mode's public API: its answer is the call's output, its error
// the call's error with its message, and a function the operator did not name is refused.
func TestLambdaTool(t *testing.T) {
	const fn = "sinew-e2e-adder"
	p := startWithLambdaTool(t, fn)
	dev := p.apiFor(t, "dev-lambdatool")
	agent := dev.must(t, "POST", "/agents", map[string]any{"name": "lambda"}, 201)["id"].(string)
	for name, setup := range map[string]map[string]any{
		"adder":     {"function": fn},
		"qualified": {"function": fn, "qualifier": "$LATEST"},
		"other":     {"function": "sinew-e2e-not-named"},
	} {
		dev.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": name, "type": "integration",
			"integration": map[string]any{"provider": "aws_lambda", "method": "invoke", "setup": setup}}, 201)
	}

	for _, tool := range []string{"adder", "qualified"} {
		rec := dev.toolCall(t, map[string]any{"agent_id": agent, "tool": tool, "arguments": map[string]any{"a": 2, "b": 3}})
		out, _ := rec["output"].(map[string]any)
		if rec["status"] != "succeeded" || out == nil || jsonOf(t, out["output"]) != `{"sum":5}` {
			t.Errorf("%s(2, 3): %v", tool, rec)
		}
	}
	rec := dev.toolCall(t, map[string]any{"agent_id": agent, "tool": "adder", "arguments": map[string]any{"fail": "the ledger is closed"}})
	if rec["status"] != "failed" || !strings.Contains(errText(rec), "the ledger is closed") {
		t.Errorf("a function error: %v, want failed with the function's message", rec)
	}
	rec = dev.toolCall(t, map[string]any{"agent_id": agent, "tool": "other", "arguments": map[string]any{}})
	if rec["status"] != "failed" || !strings.Contains(errText(rec), "SINEW_AWS_LAMBDA_FUNCTIONS") {
		t.Errorf("a function not named: %v, want failed naming SINEW_AWS_LAMBDA_FUNCTIONS", rec)
	}
}
