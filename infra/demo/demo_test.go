package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sinew/internal/llm/scripted"
)

// moduleRootForTest is the module root, two levels above this package.
func moduleRootForTest(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestDemo runs the whole demo as make demo does (local mode as a subprocess, the AWS CLI, the
// SMTP server, ffmpeg) and checks what it reports and what it left behind, independently of the
// demo's own checks. It takes about 20-40 s on a warm machine: -short skips it.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: the demo starts local mode and DynamoDB Local (20-40 s)")
	}
	for _, bin := range []string{"go", "ffmpeg", "aws", "java"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not on PATH; make deps installs what the demo needs", bin)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var out bytes.Buffer
	res, err := run(ctx, options{root: moduleRootForTest(t), out: &out})
	if err != nil {
		t.Fatalf("the demo failed: %v\n%s", err, out.String())
	}
	t.Logf("demo output:\n%s", out.String())

	var calls []string
	for _, r := range res.rows {
		calls = append(calls, r.call+"/"+r.typ)
	}
	want := "echo/integration weather/api_call list_agents/system make_thumbnail/integration ask_human/function " +
		"echo (MCP)/integration weather (MCP)/api_call list_agents (MCP)/system make_thumbnail (MCP)/integration chat 1/chat chat 2/chat"
	if got := strings.Join(calls, " "); got != want {
		t.Errorf("report rows %q, want %q", got, want)
	}
	if len(res.steps) != 15 {
		t.Errorf("%d steps passed, want 15", len(res.steps))
	}
	// Exactly one email, the model's, arrived over TLS with the stored secret as its password.
	if len(res.mails) != 1 || !res.mails[0].TLS || res.mails[0].User != smtpUser || strings.Join(res.mails[0].To, ",") != "ops@example.com" ||
		!bytes.Contains(res.mails[0].Data, []byte("Weather in Lisbon")) {
		t.Errorf("the SMTP server received %+v, want one TLS message for ops@example.com from user %s", res.mails, smtpUser)
	}
	for _, s := range []string{
		"aws stepfunctions send-task-success --endpoint-url http://127.0.0.1:", // the command the reader reuses
		"a 96x72 image/png",
		"MCP tools/list gave 5 tools; 4 tools/call answered",
		"image image/png of",
		"a next request that does not answer it is refused: 422",
		"all steps",
	} {
		if !strings.Contains(res.output, s) {
			t.Errorf("the output does not say %q", s)
		}
	}
	if len(res.secrets) != 4 || res.localLog == "" { // three setup secrets and local mode's AWS secret key
		t.Fatalf("%d secrets, local log of %d bytes: the run left too little to check", len(res.secrets), len(res.localLog))
	}
	for i, s := range res.secrets {
		if strings.Contains(res.output, s) || strings.Contains(res.localLog, s) {
			t.Errorf("secret %d is in the demo's output or local mode's log", i)
		}
	}
}

// A step that fails stops the demo with an error naming it; what was started is stopped.
func TestDemoFailureNamesTheStep(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg is not on PATH; make deps installs it")
	}
	var out bytes.Buffer
	// A root without the module: building local mode (step 3) fails.
	_, err := run(context.Background(), options{root: t.TempDir(), out: &out})
	var se *stepError
	if !errors.As(err, &se) || se.n != 3 || !strings.Contains(se.name, "build local mode") {
		t.Fatalf("err = %v, want step 3 (build local mode) to fail\n%s", err, out.String())
	}
	if !strings.Contains(err.Error(), "step 3/15 (build local mode") || !strings.Contains(out.String(), "✗ 3/15 failed") {
		t.Errorf("the failure does not name the step: %v\n%s", err, out.String())
	}
}

// The script the reader sees under infra/demo is a valid script for the scripted model.
func TestScriptIsValid(t *testing.T) {
	m, err := scripted.Parse(modelScript)
	if err != nil {
		t.Fatal(err)
	}
	if m.Turns() != 5 {
		t.Errorf("the script has %d turns; the demo's two chats play 5", m.Turns())
	}
	for _, i := range []int{2, 4} {
		if s, err := scriptReply(i); err != nil || s == "" {
			t.Errorf("turn %d's reply: %q, %v", i, s, err)
		}
	}
}

func TestFindLeak(t *testing.T) {
	secrets := map[string]string{"the SMTP password": "s3cr3t-value", "an empty one": ""}
	tests := []struct {
		name   string
		places map[string]string
		want   string // "" for no leak
	}{
		{"nowhere", map[string]string{"log": "all clean", "answers": `{"password":"<redacted>"}`}, ""},
		{"in the log", map[string]string{"log": "dialing with s3cr3t-value", "answers": "{}"}, "the SMTP password is in log"},
		{"inside JSON", map[string]string{"DynamoDB": `{"v":"xs3cr3t-valuex"}`}, "the SMTP password is in DynamoDB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := findLeak(secrets, tc.places)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("leak reported: %v", err)
			case tc.want != "" && (!errors.Is(err, errLeak) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "s3cr3t-value"):
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}
